"""metadata.json as kernel-builder writes it and the `kernels` package reads it.

The oracles are kernel-builder's own data structures: `kernels_data` 0.16.2 (kernels-data on PyPI)
and the newer kernels-data inside kernels 0.17.2 (`kernels.Metadata`, what `kernels` loads with;
it adds `kernel-depends`, `provenance`, `kernels-minver` and backend `tpu`, which 0.16.2 ignores or
refuses).

- Our own variants (build/kernels/build/*, kernels/cmake/write_variant.py) are what kernel-builder
  would write: both parse them, their digest is kernels-data's Digest.hash_variant of the directory,
  the fields and their order are kernel-builder's, the CUDA variant is named after the toolkit that
  compiled it (nvcc's major.minor).
- Our C++ parser (fetch/src/metadata.cpp, reached through kernelhub._core.fetch_local, which
  reads and verifies a variant directory as get_kernel does) gives the verdict kernels gives on the
  same documents, and refuses with a typed error (CorruptFileError) naming the field; where the
  two kernels-data versions differ, we follow kernels 0.17.2.
- Digests: for the same directory the C++ side accepts kernels-data's digest (so it computes the
  same value for every file) and refuses, with IntegrityError, every tampering kernels-data refuses.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import version as installed_version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
PACKAGE_DIR = BUILD / "python"
BUILT = BUILD / "kernels" / "build"
OID_A, OID_B = "d0610aa58db33b142c86b59598a2a1c730f52996", "d45addadb0c380f3d7cc2813310b3bcd75f8aa9a"

kernels_data = pytest.importorskip("kernels_data")
kernels = pytest.importorskip("kernels")

# kernels-data metadata.rs `Metadata`, in its serialisation order (huggingface/kernels 8ac69fc).
KERNEL_BUILDER_KEYS = ["name", "id", "version", "license", "upstream", "source", "python-depends", "kernel-depends",
                       "backend", "digest", "provenance"]


def kernels_verdict(parser, document: bytes) -> bool:
    try:
        parser.from_bytes(document)
        return True
    except ValueError:
        return False


# ---------------------------------------------------------------------------------------------------
# Our variants, as kernel-builder would write them


def built_variants() -> list[Path]:
    if not BUILT.is_dir():
        pytest.skip(f"{BUILT} is not built (make build)")
    # The torch variants (the tvm-ffi ones: tests/python/test_tvm_ffi_variant.py and test_cli_tvm_ffi.py).
    variants = sorted(p for p in BUILT.iterdir() if p.is_dir() and p.name.startswith("torch"))
    assert variants
    return variants


def test_our_variants_are_kernel_builder_metadata():
    general = tomllib.loads((ROOT / "kernels" / "build.toml").read_text())["general"]
    for variant in built_variants():
        path = variant / "metadata.json"
        old, new = kernels_data.Metadata.read_from_file(path), kernels.Metadata.read_from_file(path)
        doc = json.loads(path.read_text())
        present = [key for key in KERNEL_BUILDER_KEYS if key in doc]
        assert list(doc) == present, f"{variant.name}: fields not in kernel-builder's order"
        assert {"kernel-depends", "digest", "provenance"} <= set(doc)
        assert (str(old.name), old.version, old.license) == (general["name"], general["version"], general["license"])
        assert new.kernel_depends == [] and old.python_depends == []
        assert [p.name for p in variant.glob("*.so")] == [f"{old.id}.abi3.so"]
        backend = str(old.backend.backend_type).lower().split(".")[-1]
        assert re.fullmatch(rf"_{general['name'].replace('-', '_')}_{backend}_[0-9a-f]{{7}}", old.id)
        token = variant.name.split("-")[2]
        assert backend == ("cuda" if token.startswith("cu") else token)
        if backend == "cuda":
            archs = old.backend.archs
            assert archs and archs == sorted(set(archs))  # add_build_metadata.py sorts them
        # kernels-data's digest of the directory is the one written, file for file.
        actual = kernels_data.Digest.hash_variant(old.digest.algorithm, variant)
        old.digest.validate(actual)
        assert actual.files == doc["digest"]["files"]


def test_our_variants_record_their_provenance():
    for variant in built_variants():
        provenance = kernels.Metadata.read_from_file(variant / "metadata.json").provenance
        assert provenance is not None
        assert provenance.kernel_builder.version == "kernelhub-cmake"
        if provenance.kernel is None:
            continue  # built outside a git checkout
        assert provenance.kernel_builder.git.commit == provenance.kernel.commit  # the builder is in the same tree
        exists = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{provenance.kernel.commit}^{{commit}}"],
                                capture_output=True, timeout=60)
        assert exists.returncode == 0, f"{variant.name}: {provenance.kernel.commit} is not a commit of this repository"


def test_the_cuda_variant_is_named_after_the_toolkit_that_compiled_it():
    variants = [v for v in built_variants() if "-cu" in v.name]
    if not variants:
        pytest.skip("no CUDA variant was built (no nvcc)")
    # The compiler the build used, asked for its version (`Cuda compilation tools, release 13.0, ...`).
    compiler = re.search(r"^CMAKE_CUDA_COMPILER:\w+=(.+)$", (BUILD / "CMakeCache.txt").read_text(), re.M)
    assert compiler, "the build has a CUDA variant but no CUDA compiler in CMakeCache.txt"
    said = subprocess.run([compiler[1], "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
    nvcc = re.search(r"release (\d+)\.(\d+)", said)
    torch = "".join(installed_version("torch").split("+")[0].split(".")[:2])
    assert [v.name for v in variants] == [f"torch{torch}-cxx11-cu{nvcc[1]}{nvcc[2]}-{os.uname().machine}-linux"]


# ---------------------------------------------------------------------------------------------------
# The C++ parser against kernels-data, document by document


@pytest.fixture(scope="module")
def core():
    if not list((PACKAGE_DIR / "kernelhub").glob("_core*.so")):
        pytest.skip(f"kernelhub._core is not built under {PACKAGE_DIR} (build the kernelhub_python_core target)")
    if str(PACKAGE_DIR) not in sys.path:
        sys.path.insert(0, str(PACKAGE_DIR))
    import torch  # noqa: F401  (kernelhub._core links LibTorch)

    from kernelhub import _core, errors

    def verdict(variant: Path) -> Exception | None:
        """None when the C++ side reads and verifies `variant`, else the typed exception it raises."""
        # Offline: a document that names `kernel-depends` (kernels-community/activation) makes the
        # load fetch them next, which is beyond what is judged here.
        offline = os.environ.get("HF_HUB_OFFLINE")
        os.environ["HF_HUB_OFFLINE"] = "1"
        try:
            _core.fetch_local(str(variant), "cpu")
            return None
        except _core.CoreError as e:
            error = errors.from_core(*e.args)
            return None if str(error).startswith("kernel dependency ") else error
        finally:
            if offline is None:
                os.environ.pop("HF_HUB_OFFLINE")
            else:
                os.environ["HF_HUB_OFFLINE"] = offline

    return verdict


def kernel_builder_document() -> dict:
    """What kernel-builder writes today (kernels 0.17: kernel-depends and provenance)."""
    return {
        "name": "relu", "id": "_relu_cuda_0123abc", "version": 1, "license": "Apache-2.0",
        "upstream": "https://github.com/example/relu.git", "python-depends": ["einops"],
        "kernel-depends": [{"repo-id": "kernels-community/activation", "version": 1}],
        "backend": {"type": "cuda", "archs": ["10.0", "8.0", "9.0+PTX"]},
        "provenance": {"kernel-builder": {"version": "0.17.0", "commit": OID_A, "dirty": False},
                       "kernel": {"commit": OID_B, "dirty": True}},
    }


def older_builder_document() -> dict:
    """What builders before kernels 0.17 wrote: no kernel-depends, provenance with `sha`."""
    doc = kernel_builder_document()
    del doc["kernel-depends"]
    doc["provenance"] = {"kernel-builder": {"version": "0.17.0-dev0", "sha": OID_A, "dirty": False},
                         "kernel": {"sha": OID_B, "dirty": False}}
    return doc


def changed(path: str, value=None, delete: bool = False, base=kernel_builder_document):
    """The kernel-builder document with the field at `path` ("backend/type") set or removed."""
    doc = base()
    *parents, last = path.split("/")
    node = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if delete:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


REQUIRED = ["name", "id", "version", "license", "python-depends", "backend", "backend/type"]
# path, value: a wrong type or value for a field kernels-data knows.
MISTYPED = [
    ("name", 1), ("name", "Relu"), ("name", "r"), ("name", "relu-"), ("name", None),
    ("id", 1), ("id", None),
    ("version", "1"), ("version", -1), ("version", 1.0), ("version", 1.5), ("version", True), ("version", None),
    ("version", 2 ** 64),
    ("license", 1), ("license", None),
    ("python-depends", "einops"), ("python-depends", [1]), ("python-depends", None),
    ("backend", "cuda"), ("backend/type", 1),
    ("backend/archs", "8.0"), ("backend/archs", [8.0]),
    ("upstream", 1), ("upstream", "notaurl"), ("upstream", "ftp://example.com/x"), ("upstream", "https://"),
    ("upstream", "http://a b/c"), ("upstream", "https://example.com:99999/x"), ("upstream", "git@host:/abs"),
    ("source", "file:///x"),
    ("digest", "sha256"), ("digest", {"algorithm": "md5", "files": {}}), ("digest", {"algorithm": "SHA256", "files": {}}),
    ("digest", {"files": {}}), ("digest", {"algorithm": "sha256"}), ("digest", {"algorithm": "sha256", "files": []}),
    ("digest", {"algorithm": "sha256", "files": {"a.py": 1}}),
]
# path, value: fields only the kernels-data of kernels 0.17 knows (0.16.2 ignores them).
NEWER_MISTYPED = [
    ("kernel-depends", None), ("kernel-depends", 1), ("kernel-depends", ["org/name"]),
    ("kernel-depends/0", {"repo-id": "a/b"}), ("kernel-depends/0", {"repo-id": "a/b", "version": 1, "revision": "x"}),
    ("kernel-depends/0", {"repo_id": "a/b", "version": 1}), ("kernel-depends/0", {"repo-id": 5, "version": 1}),
    ("kernel-depends/0", {"repo-id": "a/b", "version": "1"}),
    ("provenance", 42), ("provenance", {}), ("provenance/kernel-builder", None), ("provenance/kernel-builder", "0.17"),
    ("provenance/kernel-builder", {"version": 1}), ("provenance/kernel-builder", {"version": "1", "commit": OID_A}),
    ("provenance/kernel-builder", {"version": "1", "commit": None, "dirty": None}),
    ("provenance/kernel-builder", {"version": "1", "dirty": False}),
    ("provenance/kernel-builder/commit", OID_A[:39]), ("provenance/kernel-builder/commit", OID_A + "0"),
    ("provenance/kernel-builder/commit", OID_A.replace("d", "z")), ("provenance/kernel-builder/dirty", "no"),
    ("provenance/kernel", "nonsense"), ("provenance/kernel", {"commit": OID_B}),
    ("provenance/kernel", {"dirty": True}), ("provenance/kernel/commit", "not-an-oid"),
    ("kernels-minver", "0.17"), ("kernels-minver", "0.17.2.1"), ("kernels-minver", "abc"), ("kernels-minver", ""),
    ("kernels-minver", 17), ("kernels-minver", "1.2.-3"), ("kernels-minver", "99999999999999999999.0.0"),
    ("build-layout", "tar"), ("build-layout", "ZIP"), ("build-layout", None), ("build-layout", 1),
]
# Documents both kernels-data versions accept.
VALID = {
    "kernel-builder's": kernel_builder_document(),
    "an older builder's (sha, no kernel-depends)": older_builder_document(),
    "without optional fields": {k: v for k, v in kernel_builder_document().items()
                                if k in ("name", "id", "version", "license", "python-depends", "backend")},
    "with unknown fields everywhere": {**changed("backend/future", [1]), "future": {"nested": [1, {"x": None}]}},
    "with nulls for optional fields": {**kernel_builder_document(), "upstream": None, "source": None, "digest": None,
                                       "provenance": None, "kernels-minver": None,
                                       "backend": {"type": "cpu", "archs": None}},
    "with a scp-like upstream": changed("upstream", "git@github.com:example/relu.git"),
    "with an upper-case scheme and a port": changed("source", "HTTPS://github.com:443/x"),
    "with an IPv6 host": changed("upstream", "https://[::1]/x"),
    "with version 0": changed("version", 0),
    "with the largest version": changed("version", 2 ** 64 - 1),
    "with a sha512 digest": changed("digest", {"algorithm": "sha512", "files": {}}),
    "with a sha256 commit and upper-case hex": changed("provenance/kernel/commit", "AB" * 32),
    "with a kernel-builder that does not know its commit": changed("provenance/kernel-builder", {"version": "0.17"}),
    "without a kernel tree": changed("provenance/kernel", None),
    "with a revision dependency": changed("kernel-depends/0", {"repo-id": "a/b", "revision": "main", "version": None}),
    "with kernels-minver": changed("kernels-minver", " +1.02.3 "),
    "with a tpu backend": changed("backend", {"type": "tpu"}),
    "with every other backend": changed("backend", {"type": "neuron"}),
    "with an agnostic backend": changed("backend", {"type": "agnostic", "archs": ["8.0"]}),
    # A newer kernel-builder's backend parses and fails only where it is used (kernels 0.19).
    "with a backend this version does not know": changed("backend", {"type": "gpu", "archs": 5}),
    "with an upper-case backend": changed("backend/type", "CUDA"),
    "with a long non-ASCII backend": changed("backend/type", "é" * 100),
    "with the zip build layout": changed("build-layout", "zip"),
    "with the files build layout": changed("build-layout", "files"),
}
# Raw documents, for what a dict cannot express.
BASE = '{"name": "ab", "id": "_ab", "version": 1, "license": "MIT", "python-depends": [], "backend": {"type": "cpu"}'
RAW = {
    "a repeated id": BASE + ', "id": "_ab"}',
    "a repeated backend type": BASE.replace('"cpu"}', '"cpu", "type": "cuda"}') + "}",
    "sha and commit together": BASE + f', "provenance": {{"kernel-builder": {{"version": "1", "sha": "{OID_A}", '
                                      f'"commit": "{OID_A}", "dirty": false}}}}}}',
    "a repeated unknown field": BASE + ', "x": 1, "x": 2}',
    # The last one counts, there and here: it is the hash of the empty __init__.py, so it verifies.
    "a repeated digest path": BASE + ', "digest": {"algorithm": "sha256", "files": {"__init__.py": "AAAA", '
                                     '"__init__.py": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}}}',
    "a byte order mark": "\ufeff" + BASE + "}",
    "trailing text": BASE + "} x",
    "not JSON": BASE,
    "an array": "[]",
    "a NUL in the name": BASE.replace('"ab"', '"a\\u0000b"') + "}",
}
# Refused by us on purpose, accepted by kernels (metadata.hpp says why).
STRICTER = {
    "an id that is not an identifier": changed("id", "../x"),
    "an empty id": changed("id", ""),
    "a long non-ASCII id": changed("id", "é" * 100),
    "a kernel-depends version past 2^31 - 1": changed("kernel-depends/0/version", 2 ** 31),
}


# Named documents whose verdict only kernels 0.17's kernels-data knows (0.16.2 ignores or refuses).
NEWER = {"with a tpu backend", "sha and commit together", "with an agnostic backend",
         "with a backend this version does not know", "with an upper-case backend", "with a long non-ASCII backend"}


def cases():
    """(name, document, whether only kernels 0.17 knows what it is about)."""
    for path in REQUIRED:
        yield f"missing {path}", changed(path, delete=True), False
    for path, value in MISTYPED:
        yield f"{path} = {json.dumps(value)}", changed(path, value), False
    for path, value in NEWER_MISTYPED:
        yield f"{path} = {json.dumps(value)}", changed(path, value), True
    for path, value in NEWER_MISTYPED[:3] + NEWER_MISTYPED[8:10]:
        yield f"older builder's {path} = {json.dumps(value)}", changed(path, value, base=older_builder_document), True
    for named in (VALID, RAW, STRICTER):
        for name, document in named.items():
            yield name, document, name in NEWER


def write_variant(directory: Path, document) -> Path:
    directory.mkdir(parents=True)
    (directory / "__init__.py").write_text("")
    if isinstance(document, dict) and document.get("build-layout") == "zip" and isinstance(document.get("id"), str):
        with zipfile.ZipFile(directory / f"{document['id']}.zip", "w") as z:  # the package, for that layout
            z.writestr("__init__.py", "")
    text = document if isinstance(document, str) else json.dumps(document)
    (directory / "metadata.json").write_bytes(text.encode("utf-8", "surrogatepass"))
    return directory


def test_the_cpp_parser_gives_kernels_verdict(core, tmp_path):
    from kernelhub import errors

    verdicts = []
    for i, (name, document, newer) in enumerate(cases()):
        variant = write_variant(tmp_path / f"v{i}", document)
        raw = (variant / "metadata.json").read_bytes()
        new, old = kernels_verdict(kernels.Metadata, raw), kernels_verdict(kernels_data.Metadata, raw)
        assert old == new or newer, f"{name}: kernels-data 0.16.2 and kernels 0.17.2 disagree"
        ours = core(variant)
        if isinstance(ours, errors.IntegrityError):
            ours = None  # parsed and accepted; its digest (written for no file here) then did not verify
        if name in STRICTER:
            assert new and old and isinstance(ours, errors.CorruptFileError), name
            continue
        assert (ours is None) == new, f"{name}: kernels {'accepts' if new else 'refuses'} it, we say {ours}"
        if ours is not None:
            assert isinstance(ours, errors.CorruptFileError), f"{name}: {ours!r}"
            assert "metadata.json is not valid" in str(ours) and "rebuild the variant" in str(ours), name
        verdicts.append(new)
    assert verdicts.count(True) >= len(VALID)  # a comparison of refusals alone would prove little
    assert verdicts.count(False) >= len(REQUIRED) + len(MISTYPED) + len(NEWER_MISTYPED)


def test_a_refusal_names_the_field_and_what_it_holds(core, tmp_path):
    for path, value, says in [("version", "1", '`version` is a string ("1"), expected a non-negative integer'),
                              ("build-layout", "tar", '`build-layout` is a string ("tar"), expected "files" or "zip"'),
                              ("provenance/kernel/commit", "abc", '`provenance.kernel.commit` is a string ("abc")'),
                              ("license", None, "`license` is null")]:
        error = core(write_variant(tmp_path / path.replace("/", "_"), changed(path, value)))
        assert says in str(error), str(error)
    missing = core(write_variant(tmp_path / "missing", changed("python-depends", delete=True)))
    assert "`python-depends` is missing" in str(missing)


# ---------------------------------------------------------------------------------------------------
# Digests


def tricky_variant(directory: Path) -> Path:
    """Files kernels-data's hash_variant includes and leaves out."""
    write_variant(directory, BASE + "}")
    (directory / "_ab.abi3.so").write_bytes(bytes(range(256)) * 300)
    (directory / "empty.py").write_bytes(b"")
    (directory / "a name with spaces é.py").write_text("x = 1\n")
    (directory / "layers").mkdir()
    (directory / "layers" / "__init__.py").write_text("class Layer: pass\n")
    (directory / "layers" / "metadata.json").write_text("{}")  # only the top-level one is left out
    (directory / "layers" / "__pycache__").mkdir()
    (directory / "layers" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"bytecode")
    (directory / "stale.pyc").write_bytes(b"bytecode")
    (directory / "metadata.json.sigstore").write_text("{}")
    (directory / "linked.py").symlink_to(directory / "empty.py")
    return directory


def with_digest(directory: Path, algorithm) -> kernels_data.Digest:
    digest = kernels_data.Digest.hash_variant(algorithm, directory)
    doc = json.loads(BASE + "}")
    doc["digest"] = {"algorithm": str(algorithm).lower().split(".")[-1], "files": digest.files}
    (directory / "metadata.json").write_text(json.dumps(doc))
    return digest


def kernels_data_verifies(directory: Path) -> bool:
    metadata = kernels_data.Metadata.read_from_file(directory / "metadata.json")
    try:
        metadata.digest.validate(kernels_data.Digest.hash_variant(metadata.digest.algorithm, directory))
        return True
    except (kernels_data.DigestValidationError, OSError, RuntimeError):
        return False


@pytest.mark.parametrize("algorithm", ["SHA256", "SHA512"])
def test_the_cpp_digest_is_kernels_datas(core, tmp_path, algorithm):
    from kernelhub import errors

    algo = getattr(kernels_data.DigestAlgorithm, algorithm)
    variant = tricky_variant(tmp_path / "variant")
    digest = with_digest(variant, algo)
    assert "layers/metadata.json" in digest.files and "linked.py" in digest.files and "stale.pyc" not in digest.files
    assert core(variant) is None  # every file hashed to kernels-data's value, and no other file

    def tampered(name: str, change) -> None:
        copy_dir = tmp_path / name
        subprocess.run(["cp", "-a", str(variant), str(copy_dir)], check=True, timeout=60)
        change(copy_dir)
        assert not kernels_data_verifies(copy_dir), name
        ours = core(copy_dir)
        assert isinstance(ours, errors.IntegrityError), f"{name}: {ours!r}"

    tampered("flipped", lambda d: (d / "_ab.abi3.so").write_bytes(b"\x01" + (d / "_ab.abi3.so").read_bytes()[1:]))
    tampered("added", lambda d: (d / "extra.py").write_text(""))
    tampered("removed", lambda d: (d / "layers" / "__init__.py").unlink())
    tampered("renamed", lambda d: (d / "empty.py").rename(d / "Empty.py"))
    tampered("dangling", lambda d: (d / "gone.py").symlink_to(d / "nowhere.py"))

    # Documented difference: a signature kernelhub wrote inside the folder before 2026-12 is left
    # out of the digest, so those builds keep loading with us; kernels-data counts it as an unknown
    # file (today's signature sits beside the folder, docs/SIGNING.md).
    signed = tmp_path / "signed"
    subprocess.run(["cp", "-a", str(variant), str(signed)], check=True, timeout=60)
    (signed / "kernelhub.sig").write_text("signature")
    assert not kernels_data_verifies(signed) and core(signed) is None


def test_an_empty_digest_of_a_non_empty_directory_is_refused(core, tmp_path):
    variant = write_variant(tmp_path / "variant", BASE + ', "digest": {"algorithm": "sha256", "files": {}}}')
    assert not kernels_data_verifies(variant)
    assert core(variant) is not None
