"""The release artifacts as their users meet them (scripts/release.sh; scripts/test_wheel.sh points
the variables below at what it built):

- the CLI tarball (KERNELHUB_RELEASE_CLI: dist/kernelhub-<version>-x86_64-linux.tar.gz), unpacked
  anywhere, as an image build stage uses it: it needs nothing but glibc 2.28, it serves and
  downloads, and it loads a tvm-ffi build with the TVM-FFI runtime it ships;
- the torch-free C++ package it was built with (KERNELHUB_TORCH_FREE_PREFIX: a
  KERNELHUB_WITH_TORCH=OFF install): find_package(kernelhub) fails at find_package, naming what
  this install lacks and what to ask for instead.
Skipped when the variables are not set (the build tree has no release artifacts).
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
import tarfile
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import _start_server
from elf_requirements import read, version_tuple
from test_cli_torch_free import REPO, variant_torch
from test_get_kernel_hub import cpu_variant_dir, publish

TARBALL = os.environ.get("KERNELHUB_RELEASE_CLI")
TORCH_FREE_PREFIX = os.environ.get("KERNELHUB_TORCH_FREE_PREFIX")
GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2"}


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> Path:
    if not TARBALL:
        pytest.skip("KERNELHUB_RELEASE_CLI is not set (scripts/test_wheel.sh sets it to the CLI tarball it built)")
    where = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(where, filter="data")
    (top,) = where.iterdir()
    assert top.name == Path(TARBALL).name.removesuffix(".tar.gz")
    return top / "bin" / "kernelhub"


def test_the_cli_needs_only_glibc_2_28(cli):
    elf = read(cli)
    assert not elf.shared_object
    assert set(elf.needed) <= GLIBC_LIBRARIES, elf.needed  # libcurl, OpenSSL, the C++ runtime inside
    assert elf.newest["GLIBC"] <= version_tuple("2.28"), elf.newest
    assert "GLIBCXX" not in elf.newest and "CXXABI" not in elf.newest, elf.newest
    assert elf.problems(version_tuple("2.28")) == []


def test_the_cli_runs_from_anywhere(cli):
    help_text = subprocess.run([str(cli), "--help"], capture_output=True, text=True, check=True,
                               env={"PATH": "/usr/bin:/bin"}).stdout
    for command in ("download", "serve", "lock", "verify", "env"):
        assert command in help_text, help_text
    version = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True).stdout
    assert Path(TARBALL).name.split("-")[1] in version, version


def test_the_cli_serves_and_downloads(cli, tmp_path):
    server = _start_server(tmp_path / "server", [], binary=cli)
    try:
        publish(server, REPO)
        env = {"PATH": "/usr/bin:/bin", "HF_ENDPOINT": server.url, "HF_HOME": str(tmp_path / "hf-home"),
               "HF_HUB_CACHE": str(tmp_path / "cache")}
        result = subprocess.run([str(cli), "download", REPO, "--version", "1", "--torch", f"{variant_torch()}+cpu",
                                 "--json"], capture_output=True, text=True, env=env, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        downloaded = json.loads(result.stdout)
        assert downloaded["variants"] == [cpu_variant_dir().name] and downloaded["downloaded_bytes"] > 0
        path = Path(downloaded["path"])
        for source in cpu_variant_dir().rglob("*"):
            if source.is_file() and "__pycache__" not in source.parts:
                assert (path / source.relative_to(cpu_variant_dir())).read_bytes() == source.read_bytes()
    finally:
        server.stop()


def test_the_cli_loads_a_tvm_ffi_build_with_the_runtime_it_ships(cli, tmp_path):
    """No Python on the machine: `kernelhub get` of a tvm-ffi build opens the TVM-FFI runtime in the
    tarball's lib/kernelhub/ (its RUNPATH), shipped with its license."""
    top = cli.parent.parent
    runtime = top / "lib" / "kernelhub" / "libtvm_ffi.so"
    assert runtime.is_file() and (top / "share" / "doc" / "kernelhub" / "apache-tvm-ffi" / "LICENSE").is_file()
    assert (top / "share" / "doc" / "kernelhub" / "apache-tvm-ffi" / "NOTICE").is_file()
    assert read(runtime).problems(version_tuple("2.28")) == []
    from test_cli_tvm_ffi import variant
    from test_cli_without_torch import REPO as TVM_FFI_REPO, publish as publish_tvm_ffi

    server = _start_server(tmp_path / "server", [], binary=cli)
    try:
        tvm = variant("tvm-ffi*-cpu-*")
        publish_tvm_ffi(server, tvm)
        env = {"PATH": "/nonexistent", "HOME": str(tmp_path), "HF_ENDPOINT": server.url,
               "HF_HUB_CACHE": str(tmp_path / "cache"), "KERNELHUB_TRUSTED": "acme", "KERNELHUB_BACKEND": "cpu"}
        result = subprocess.run([str(cli), "get", TVM_FFI_REPO, "--version", "1", "--json"], capture_output=True,
                                text=True, env=env, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        got = json.loads(result.stdout)
        assert got["variant"] == tvm.name and got["tvm_ffi"]["path"] == str(runtime.resolve()), got
    finally:
        server.stop()


@contextmanager
def tls_in_front_of(server, tmp_path: Path):
    """An HTTPS endpoint on loopback (a certificate of its own, for localhost) that passes each
    connection on to `server` in the clear; yields (url, certificate file)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def pipe(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve_one(client):
        try:
            tls = context.wrap_socket(client, server_side=True)
        except (OSError, ssl.SSLError):  # a client that refused our certificate
            client.close()
            return
        upstream = socket.create_connection((host, int(port)))
        threading.Thread(target=pipe, args=(upstream, tls), daemon=True).start()
        pipe(tls, upstream)

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve_one, args=(client,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"https://localhost:{listener.getsockname()[1]}", cert
    finally:
        stop.set()
        thread.join()
        listener.close()


def test_the_cli_speaks_https_with_the_systems_certificates(cli, tmp_path):
    """Its OpenSSL finds certificates where the system keeps them, or where SSL_CERT_FILE says; a
    server whose certificate none of them vouches for is refused."""
    server = _start_server(tmp_path / "server", [], binary=cli)
    try:
        publish(server, REPO)
        with tls_in_front_of(server, tmp_path) as (url, cert):
            env = {"PATH": "/usr/bin:/bin", "HF_ENDPOINT": url, "HF_HOME": str(tmp_path / "hf-home"),
                   "HF_HUB_CACHE": str(tmp_path / "cache")}
            args = [str(cli), "download", REPO, "--version", "1", "--torch", f"{variant_torch()}+cpu", "--json"]
            refused = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
            assert refused.returncode == 5, refused.stdout + refused.stderr  # the Hub could not be reached (safely)
            assert json.loads(refused.stdout)["error"]["network"] == "unreachable"  # asked once, not retried
            assert "certificate" in refused.stdout.lower(), refused.stdout
            trusted = subprocess.run(args, capture_output=True, text=True, env={**env, "SSL_CERT_FILE": str(cert)},
                                     timeout=120)
            assert trusted.returncode == 0, trusted.stdout + trusted.stderr
            assert json.loads(trusted.stdout)["variants"] == [cpu_variant_dir().name]
    finally:
        server.stop()


def configure(project: Path, source: str, *args: str) -> subprocess.CompletedProcess:
    project.mkdir(parents=True, exist_ok=True)
    (project / "CMakeLists.txt").write_text(source)
    return subprocess.run(["cmake", "-S", str(project), "-B", str(project / "build"), "-G", "Ninja",
                           f"-DCMAKE_PREFIX_PATH={TORCH_FREE_PREFIX}", *args],
                          capture_output=True, text=True, timeout=1200)


@pytest.fixture
def torch_free_prefix():
    if not TORCH_FREE_PREFIX:
        pytest.skip("KERNELHUB_TORCH_FREE_PREFIX is not set (scripts/test_wheel.sh sets it to a torch-free install)")
    assert not (Path(TORCH_FREE_PREFIX) / "lib/cmake/kernelhub/kernelhubTorchTargets.cmake").exists()
    return Path(TORCH_FREE_PREFIX)


def test_a_torch_free_install_refuses_the_torch_component_at_find_package(torch_free_prefix, tmp_path):
    project = "cmake_minimum_required(VERSION 3.25)\nproject(app LANGUAGES CXX)\n{}\nmessage(STATUS \"after find_package\")\n"
    for find in ("find_package(kernelhub CONFIG REQUIRED)", "find_package(kernelhub CONFIG REQUIRED COMPONENTS kernelhub)"):
        result = configure(tmp_path / str(hash(find)), project.format(find))
        assert result.returncode != 0 and "after find_package" not in result.stdout, result.stdout
        message = " ".join(result.stderr.split())
        assert "built without LibTorch" in message and "no component `kernelhub`" in message, message
        assert "COMPONENTS fetch" in message, message
    result = configure(tmp_path / "unknown", project.format("find_package(kernelhub CONFIG REQUIRED COMPONENTS nope)"))
    assert result.returncode != 0 and "no component `nope`" in " ".join(result.stderr.split()), result.stderr


def test_a_torch_free_install_builds_a_fetch_consumer(torch_free_prefix, tmp_path):
    """kernelhub::fetch alone, linked by a consumer built with the same toolchain as the install
    (its libraries are libc++ ones): C++20 comes with the target, as do its dependencies."""
    toolchain = torch_free_prefix.parent / "CMakeCache.txt"
    toolchain_file = next(line.split("=", 1)[1] for line in toolchain.read_text().splitlines()
                          if line.startswith("CMAKE_TOOLCHAIN_FILE:"))
    project = tmp_path / "fetch-consumer"
    project.mkdir()
    (project / "main.cpp").write_text(
        '#include <cstdio>\n#include "kernelhub/fetch/fetch_kernel.hpp"\n'
        "int main() {\n"
        "  try {\n"
        '    kernelhub::fetch_kernel("org/name", {}, kernelhub::resolver::Loadable::torch_free_process(),\n'
        '                            {.revision = "main", .version = 1});\n'
        '    std::puts("accepted");\n'
        "    return 1;\n"
        "  } catch (const kernelhub::InvalidArgumentError& e) {\n"
        "    std::puts(e.what());\n"
        "    return 0;\n"
        "  }\n}\n")
    result = configure(project, "cmake_minimum_required(VERSION 3.25)\nproject(app LANGUAGES CXX)\n"
                                "find_package(kernelhub CONFIG REQUIRED COMPONENTS fetch)\n"
                                "add_executable(app main.cpp)\ntarget_link_libraries(app PRIVATE kernelhub::fetch)\n",
                       f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file}", "-DCMAKE_BUILD_TYPE=Release")
    assert result.returncode == 0, result.stdout + result.stderr
    build = subprocess.run(["cmake", "--build", str(project / "build")], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(project / "build" / "app")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "revision" in run.stdout, run.stdout + run.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
