"""A small chaos run (bench/chaos/): 24 `kernelhub get` and `download` through a fault-injecting
proxy in front of `kernelhub serve`, which also goes down (refuses connections) for a while, from
fresh, warm and corrupt caches. Every run must end in success or a typed error, and the caches must
be left whole: blobs re-hash to their names (but the harness's own flipped byte, when refused),
partial downloads are the start of their blob, no writer's temp file, no held lock, and a
fault-free run afterwards loads. The 1000-run version and its results are bench/chaos/RESULTS.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import BUILD_DIR, KERNELHUB_BIN

CHAOS_DIR = Path(__file__).resolve().parents[2] / "bench" / "chaos"
sys.path.insert(0, str(CHAOS_DIR))

import run_chaos  # noqa: E402


@pytest.fixture
def built():
    if not KERNELHUB_BIN.exists() or not list((BUILD_DIR / "kernels" / "build").glob("torch*-cpu-*")):
        pytest.skip(f"{KERNELHUB_BIN} or the reference kernels are not built")


def test_chaos_runs_end_in_success_or_typed_error_and_leave_caches_whole(built, tmp_path):
    out = tmp_path / "chaos.json"
    rc = run_chaos.main(["--runs", "24", "--jobs", "2", "--seed", "7", "--fault-rate", "0.3", "--stall", "2.5",
                         "--shared", "2", "--down-every", "12", "--down-for", "3", "--timeout", "90",
                         "--build-dir", str(BUILD_DIR), "--json", str(out)])
    summary = json.loads(out.read_text())
    assert summary["crashes_or_hangs"] == [], summary
    assert summary["cache_problems"] == [], summary
    assert set(summary["outcomes"]) <= {"ok", "typed_error"}, summary
    assert summary["runs"] == 24
    assert summary["corrupt_starts"]["runs"] > 0, summary
    assert summary["outcomes"].get("ok", 0) > 0, summary  # faults hit some runs, not all
    assert sum(summary["faults_injected"].values()) > 0, summary
    assert rc == 0


def test_cache_check_finds_a_corrupt_blob_a_leftover_a_wrong_partial_and_a_held_lock(tmp_path):
    """The checker itself can fail: each kind of damage is reported."""
    import fcntl

    blobs = tmp_path / "kernels--a--b" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / ("0" * 64)).write_bytes(b"not what the name says")
    (blobs / ("1" * 40 + ".abcd1234.incomplete")).write_bytes(b"")
    good = b"hello\n"
    (blobs / run_chaos.hashlib.sha256(good).hexdigest()).write_bytes(good)
    content = b"the whole blob"
    name = run_chaos.hashlib.sha256(content).hexdigest()
    (blobs / f"{name}.incomplete").write_bytes(b"the wh")  # a kept partial download: fine
    other = b"another blob"
    other_name = run_chaos.hashlib.sha256(other).hexdigest()
    (blobs / f"{other_name}.incomplete").write_bytes(b"not its start")
    locks = tmp_path / ".locks" / "kernels--a--b"
    locks.mkdir(parents=True)
    lock = locks / ("0" * 64 + ".lock")
    lock.write_bytes(b"")
    with open(lock, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        # flock locks belong to the open file description: a second open() conflicts with it.
        problems = run_chaos.check_cache(tmp_path, {name: content, other_name: other})
    assert len(problems) == 4, problems
    assert any("does not hash" in p for p in problems)
    assert any("left behind by a writer" in p for p in problems)
    assert any("is not the start of its blob" in p and other_name in p for p in problems)
    assert any("lock still held" in p for p in problems)
