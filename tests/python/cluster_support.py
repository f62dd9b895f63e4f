"""Fixtures for the cluster tests (test_cluster_*.py): a `kernelhub serve` with or without the
site cache in front (bench/cluster/site_cache.py), skipped with the reason when what they need is
not built or installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import BUILD_DIR

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH / "cluster"))
sys.path.insert(0, str(BENCH / "chaos"))

from site_cache import Site, nginx_binary  # noqa: E402


def require_built(nginx: bool = False) -> None:
    if nginx and nginx_binary() is None:
        pytest.skip("nginx is not installed (scripts/bootstrap.sh --apt installs Debian's nginx-light)")
    for binary in ("kernelhub", "hub-publish", "cluster_node"):
        if not (BUILD_DIR / "bin" / binary).exists():
            pytest.skip(f"{BUILD_DIR / 'bin' / binary} is not built")
    if not list((BUILD_DIR / "kernels" / "build").glob("torch*-cpu-*")):
        pytest.skip("the reference kernels' CPU variant is not built (reference_kernels target)")


def site_factory(tmp_path: Path, cache: bool):
    """Yields start(**Site kwargs), which starts a Hub (behind a site cache when `cache`); every
    one started is stopped after the test."""
    require_built(nginx=cache)
    sites = []

    def start(**kwargs) -> Site:
        s = Site(tmp_path / f"site{len(sites)}", BUILD_DIR, cache=cache, **kwargs)
        sites.append(s)
        return s.start()

    yield start
    for s in sites:
        s.stop()


@pytest.fixture
def site(tmp_path):
    """Factory: a Hub behind a site cache (nginx)."""
    yield from site_factory(tmp_path, cache=True)


@pytest.fixture
def hub(tmp_path):
    """Factory: a Hub the nodes reach directly."""
    yield from site_factory(tmp_path, cache=False)
