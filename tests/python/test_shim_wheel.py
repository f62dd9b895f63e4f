"""The installed wheel (scripts/test_wheel.sh installs it and points KERNELHUB_PACKAGE_DIR at it):
the metadata a package index shows, a manylinux tag for this Python, no torch requirement, and a
package that imports from where it was installed, with the libraries auditwheel grafted in.
Skipped for the build's package (<build>/python), which is no install."""

from __future__ import annotations

import email
import subprocess
import sys
import sysconfig

import pytest
from shim_support import PACKAGE_DIR, import_shim


@pytest.fixture(scope="module")
def dist_info():
    import_shim()
    found = sorted(PACKAGE_DIR.glob("kernelhub-*.dist-info"))
    if not found:
        pytest.skip(f"no installed wheel under {PACKAGE_DIR} (scripts/test_wheel.sh installs one)")
    (path,) = found
    return path


def test_index_metadata(dist_info):
    import kernelhub

    metadata = email.message_from_string((dist_info / "METADATA").read_text())
    assert metadata["Name"] == "kernelhub" and metadata["Version"] == kernelhub.__version__
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["Requires-Python"] == ">=3.10"
    assert "kernel" in metadata["Summary"] and "get_kernel" in metadata.get_payload()  # the readme
    classifiers = metadata.get_all("Classifier")
    assert f"Programming Language :: Python :: {sys.version_info.major}.{sys.version_info.minor}" in classifiers
    assert "Operating System :: POSIX :: Linux" in classifiers
    # No torch requirement (any torch the process imports will do); the kernels extra for kernelize,
    # pinned to the release the shim's tests run (the environment's).
    import importlib.metadata

    assert metadata.get_all("Provides-Extra") == ["kernels"]
    assert metadata.get_all("Requires-Dist") == [f'kernels=={importlib.metadata.version("kernels")}; extra == "kernels"']
    assert importlib.metadata.version("kernels") == kernelhub.KERNELS_COMPATIBLE_VERSION


def test_a_manylinux_wheel_for_this_python(dist_info):
    wheel = email.message_from_string((dist_info / "WHEEL").read_text())
    assert wheel["Root-Is-Purelib"] == "false"
    (tag,) = wheel.get_all("Tag")
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    interpreter, abi, platform = tag.split("-")
    assert (interpreter, abi) == (python, python)
    arch = sysconfig.get_platform().split("-")[-1]
    assert platform.startswith("manylinux_2_") and platform.endswith(f"_{arch}"), tag


def test_imports_from_the_install_with_its_grafted_libraries(dist_info):
    code = "import kernelhub, kernelhub._core as c; print(kernelhub.__file__); print(c.__file__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(PACKAGE_DIR), "PATH": "/usr/bin:/bin"}).stdout.split()
    assert [p.startswith(str(PACKAGE_DIR / "kernelhub")) for p in out] == [True, True], out
    # auditwheel put what _core needs beyond the manylinux set (libcurl, OpenSSL) beside the package.
    (core,) = (PACKAGE_DIR / "kernelhub").glob("_core*.so")
    dynamic = subprocess.run(["readelf", "-d", str(core)], capture_output=True, text=True, check=True).stdout
    assert "$ORIGIN/../kernelhub.libs" in dynamic, dynamic
    assert any(lib.name.startswith("libcurl-") for lib in (PACKAGE_DIR / "kernelhub.libs").iterdir())
