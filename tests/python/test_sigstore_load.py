"""Sigstore bundles at every load, end to end (docs/SIGNING.md): the reference kernels' variants
signed by the tests' own Sigstore (sigstore_testing.py) under kernels-community's identity and
another, published on `kernelhub serve`, with KERNELHUB_SIGSTORE_TRUSTED_ROOT naming that Sigstore's
root. Each path a user loads through: the CLI (`kernelhub get`: the torch build through
kernelhub-get, which is C++ get_kernel; the tvm-ffi build through tvm_ffi::get_kernel), the Python
shim, and `kernelhub verify-signature` beside `kernels verify-signature`. Then what we publish
stays loadable: kernels 0.19.1 with sigstore 4.5.1 (the oracle, beside the environment) loads a
variant hub-publish put there with a bundle, warning as it does for a bundle of another instance.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernels_releases import kernels_cli, kernels_env
from shim_support import PACKAGE_DIR, publish, require_shim, run_json
from sigstore_oracle import oracle_env, oracle_folder
from sigstore_testing import KERNELS_COMMUNITY, Identity, LocalSigstore, sign_variant

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"
HUB_PUBLISH = BUILD / "bin" / "hub-publish"
ACME_CI = Identity("acme/kernels")  # a valid signer the default policy does not name


def variant_dir(pattern: str) -> Path:
    dirs = glob.glob(str(BUILD / "kernels" / "build" / pattern))
    if len(dirs) != 1:
        pytest.skip(f"no single built variant {pattern} in {BUILD / 'kernels' / 'build'}")
    return Path(dirs[0])


def copy_variant(source: Path, into: Path) -> Path:
    target = into / source.name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.sigstore"))
    return target


@pytest.fixture(scope="module")
def hub(hub_server, tmp_path_factory):
    """Repos of acme on one server, each one case, and the root that trusts the tests' Sigstore."""
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    tmp = tmp_path_factory.mktemp("sigstore_load")
    sigstore = LocalSigstore(tmp / "sigstore")
    torch_cpu = variant_dir("torch*-cpu-*")
    cases = {}
    for name, identity in (("good", KERNELS_COMMUNITY), ("other", ACME_CI), ("tampered", KERNELS_COMMUNITY),
                           ("unsigned", None)):
        variant = copy_variant(torch_cpu, tmp / name)
        if identity is not None:
            sign_variant(variant, identity, sigstore)
        if name == "tampered":  # one byte of metadata.json after signing: outside the digest, inside the signature
            metadata = variant / "metadata.json"
            metadata.write_bytes(metadata.read_bytes() + b" ")
        publish(hub_server, f"acme/sigstore-{name}", variant=variant)
        cases[name] = variant
    tvm = glob.glob(str(BUILD / "kernels" / "build" / "tvm-ffi*-cpu-*"))
    if len(tvm) == 1:
        for name in ("good", "tampered"):
            variant = copy_variant(Path(tvm[0]), tmp / f"tvm-{name}")
            sign_variant(variant, KERNELS_COMMUNITY, sigstore)
            if name == "tampered":
                (variant / "metadata.json").write_bytes((variant / "metadata.json").read_bytes() + b" ")
            publish(hub_server, f"acme/sigstore-tvm-{name}", variant=variant)
    return {"server": hub_server, "root": sigstore.trusted_root_path, "sigstore": sigstore, "tmp": tmp,
            "cases": cases, "tvm": len(tvm) == 1}


def client_env(hub, tmp_path: Path, **extra: str) -> dict:
    env = hub["server"].client_env(tmp_path / "cache")
    for name in ("LOCAL_KERNELS", "KERNELHUB_TRUSTED_KEYS", "KERNELHUB_REQUIRE_SIGNATURE", "KERNELHUB_SIGNERS"):
        env.pop(name, None)
    env.update(KERNELHUB_SIGSTORE_TRUSTED_ROOT=str(hub["root"]), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_STATE_HOME=str(tmp_path / "state"), KERNELHUB_STATE_DIR=str(tmp_path / "state" / "kernelhub"))
    env.update(extra)
    return env


def get(hub, tmp_path: Path, repo: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(KERNELHUB), "get", repo, "--version", "1", "--json", *args], capture_output=True,
                          text=True, env=client_env(hub, tmp_path, **env), timeout=300)


def error_of(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stdout)["error"]



def signature_warnings(result) -> list[str]:
    """The load's warnings about its signature (a build from a dirty tree warns too, of itself)."""
    return [w for w in json.loads(result.stdout)["warnings"] if "dirty git tree" not in w]

def test_cli_and_cpp_load_a_kernels_community_signature_without_a_word(hub, tmp_path):
    r = get(hub, tmp_path, "acme/sigstore-good", "--require-signature")
    assert r.returncode == 0, r.stderr
    assert not signature_warnings(r)
    # Warm, in a new process: the record proves the bundle, the policy is checked again.
    warm = get(hub, tmp_path, "acme/sigstore-good", "--require-signature")
    assert warm.returncode == 0, warm.stderr
    assert not signature_warnings(warm)
    records = list((tmp_path / "state" / "kernelhub" / "signatures").glob("*.json"))
    assert len(records) == 1


def test_a_signer_the_policy_does_not_name_is_warned_about_and_refused_when_required(hub, tmp_path):
    r = get(hub, tmp_path, "acme/sigstore-other")
    assert r.returncode == 0, r.stderr
    (warning,) = signature_warnings(r)
    assert "https://github.com/acme/kernels/.github/workflows/build.yaml@refs/heads/main" in warning
    r = get(hub, tmp_path, "acme/sigstore-other", "--require-signature")
    assert r.returncode == 8 and error_of(r)["code"] == "untrusted_publisher", r.stderr
    # The org's own signer, configured: accepted; and from then on the org must be signed.
    signers = tmp_path / "signers.toml"
    signers.write_text('[[signer]]\nscope = "acme"\nissuer = "https://token.actions.githubusercontent.com"\n'
                       'source-repository = "https://github.com/acme/kernels"\n')
    r = get(hub, tmp_path, "acme/sigstore-other", KERNELHUB_SIGNERS=str(signers))
    assert r.returncode == 0 and not signature_warnings(r), r.stderr
    r = get(hub, tmp_path, "acme/sigstore-unsigned", KERNELHUB_SIGNERS=str(signers))
    assert r.returncode == 8 and error_of(r)["code"] == "missing_signature", r.stderr
    r = get(hub, tmp_path, "acme/sigstore-good", KERNELHUB_SIGNERS=str(signers))  # kernels-community's CI is not acme's
    assert r.returncode == 8 and error_of(r)["code"] == "untrusted_publisher", r.stderr


def test_a_bundle_that_does_not_verify_is_refused_whatever_else_is_asked(hub, tmp_path):
    for extra in ((), ("--trust-remote-code",)):
        r = get(hub, tmp_path, "acme/sigstore-tampered", *extra)
        assert r.returncode == 8, r.stderr
        assert error_of(r)["code"] == "bad_signature" and "does not verify" in error_of(r)["message"]
    # Nothing of it is trusted later: no record, and the next load refuses it again.
    assert not list((tmp_path / "state" / "kernelhub" / "signatures").glob("*.json"))
    # Under the production root, a bundle of the tests' Sigstore does not verify either.
    r = get(hub, tmp_path, "acme/sigstore-good", KERNELHUB_SIGSTORE_TRUSTED_ROOT="")
    assert r.returncode == 8 and error_of(r)["code"] == "bad_signature", r.stderr


def test_unsigned_variants_warn_in_every_path_and_fail_when_required(hub, tmp_path):
    r = get(hub, tmp_path, "acme/sigstore-unsigned")
    assert r.returncode == 0, r.stderr
    assert any("is not signed" in w for w in json.loads(r.stdout)["warnings"])
    r = get(hub, tmp_path, "acme/sigstore-unsigned", KERNELHUB_REQUIRE_SIGNATURE="1")
    assert r.returncode == 8 and error_of(r)["code"] == "missing_signature", r.stderr


def test_the_tvm_ffi_path_checks_the_bundle_too(hub, tmp_path):
    if not hub["tvm"]:
        pytest.skip("no tvm-ffi CPU variant built")
    r = get(hub, tmp_path, "acme/sigstore-tvm-good", "--require-signature")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["framework"] == "tvm-ffi" and not signature_warnings(r)
    r = get(hub, tmp_path, "acme/sigstore-tvm-tampered")
    assert r.returncode == 8 and error_of(r)["code"] == "bad_signature", r.stderr


SHIM_LOAD = r"""
import json, logging, sys
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append((record.name, record.getMessage()))
logging.getLogger().addHandler(Keep())
import kernelhub
try:
    kernelhub.get_kernel(sys.argv[1], version=1)
    outcome = "loaded"
except kernelhub.errors.KernelhubError as e:
    outcome = type(e).__name__ + ": " + e.code
print(json.dumps({"outcome": outcome, "logged": records}))
"""


def test_the_shim_refuses_a_bad_bundle_and_logs_kernels_words_for_an_unsigned_one(hub, tmp_path):
    require_shim()  # a sanitizer build has no Python binding
    env = client_env(hub, tmp_path, PYTHONPATH=os.pathsep.join([str(PACKAGE_DIR), os.environ.get("PYTHONPATH", "")]))
    tampered = run_json(SHIM_LOAD, env, "acme/sigstore-tampered")
    assert tampered["outcome"] == "BadSignatureError: bad_signature"
    unsigned = run_json(SHIM_LOAD, env, "acme/sigstore-unsigned")
    assert unsigned["outcome"] == "loaded"
    assert any(message.endswith(": not signed, so its integrity cannot be verified") and message.startswith("Kernel '")
               for _, message in unsigned["logged"]), unsigned["logged"]
    good = run_json(SHIM_LOAD, env, "acme/sigstore-good")
    assert good["outcome"] == "loaded"
    assert not any("signed" in message for _, message in good["logged"]), good["logged"]


# kernels' CLI in a child that imports sigstore 4.5.1 from the oracle's folder, with the tests'
# Sigstore as the root `Verifier.production()` gives (the machine has no network for its TUF refresh).
KERNELS_VERIFY = r"""
import sys
ROOT = sys.argv.pop(1)
from sigstore.models import TrustedRoot
from sigstore.verify import Verifier
import kernels._internals.verify as verify
class TestRootVerifier(Verifier):
    @classmethod
    def production(cls, *, offline=False):
        return Verifier(trusted_root=TrustedRoot.from_file(ROOT))
verify.Verifier = TestRootVerifier
from kernels._internals.cli import main
sys.exit(main())
"""


def oracle(env: dict) -> dict:
    folder = oracle_folder(ROOT)
    if not (folder / "sigstore").is_dir():
        pytest.skip(f"sigstore 4.5.1 is not installed in {folder} (scripts/bootstrap.sh --test installs it)")
    return oracle_env(kernels_env(env), folder)


def test_verify_signature_says_what_kernels_verify_signature_says(hub, tmp_path):
    env = client_env(hub, tmp_path)
    for case in ("good", "other", "unsigned", "tampered"):
        repo = f"acme/sigstore-{case}"
        # --all-variants: kernels picks the variant for how torch was built (CUDA, on this machine
        # without a GPU), kernelhub for what the machine runs; every variant is the same question.
        ours = subprocess.run([str(KERNELHUB), "verify-signature", repo, "1", "--all-variants"], capture_output=True,
                              text=True, env=env, timeout=300)
        theirs = subprocess.run([sys.executable, "-c", KERNELS_VERIFY, str(hub["root"]), "verify-signature", repo, "1",
                                 "--all-variants"], capture_output=True, text=True, env=oracle(env), timeout=300)
        assert (ours.returncode == 0) == (theirs.returncode == 0), (case, ours.stdout + ours.stderr, theirs.stdout + theirs.stderr)
        ours_line, theirs_line = ours.stdout.splitlines()[0], theirs.stdout.splitlines()[0]
        # The verdict and kernels' sentence; after "signature:" each verifier names the failed check its own way.
        assert ours_line.split(":\n")[0].split("signature:")[0] == theirs_line.split("signature:")[0], (case, ours_line,
                                                                                                      theirs_line)
        if case != "tampered":
            assert ours.stdout == theirs.stdout, (case, ours.stdout, theirs.stdout)


KERNELS_LOAD = r"""
import json, logging, sys
from sigstore.verify import Verifier
import kernels._internals.verify as verify
class OfflineVerifier(Verifier):
    @classmethod
    def production(cls, *, offline=False):
        return Verifier.production(offline=True)  # the public-good root the package ships; no TUF refresh
verify.Verifier = OfflineVerifier
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logging.getLogger().addHandler(Keep())
import kernels
kernel = kernels.get_kernel(sys.argv[1], version=1, backend="cpu")
print(json.dumps({"loaded": kernel.__name__, "logged": records}))
"""


def test_kernels_with_sigstore_loads_what_hub_publish_put_there_with_a_bundle(hub, tmp_path):
    if not HUB_PUBLISH.exists():
        pytest.skip(f"{HUB_PUBLISH} is not built")
    key = tmp_path / "acme"
    assert subprocess.run([str(KERNELHUB), "keygen", "--out", str(key)], capture_output=True).returncode == 0
    build = tmp_path / "build"
    signed = copy_variant(variant_dir("torch*-cpu-*"), build)
    sign_variant(signed, KERNELS_COMMUNITY, hub["sigstore"])
    env = client_env(hub, tmp_path, HF_TOKEN=hub["server"].write_token)
    published = {}
    for repo, extra in (("acme/published-bundle", ()), ("acme/published-keyed", ("--sign-key", str(key)))):
        r = subprocess.run([str(HUB_PUBLISH), repo, "--build-dir", str(build), "--version", "1", "--create", "--json",
                            *extra], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        published[repo] = json.loads(r.stdout)
        assert all(v["signed"] for v in published[repo]["variants"])
    # Publishing never writes into the build folder: the keyed bundle was staged elsewhere.
    assert json.loads((signed / "metadata.json.sigstore").read_text())["verificationMaterial"].get("certificate")
    for repo in published:
        result = run_json(KERNELS_LOAD, oracle(client_env(hub, tmp_path / repo.replace("/", "_"))), repo)
        assert result["loaded"], result
        # sigstore-python knows the public-good instance only: the tests' Sigstore does not verify
        # there, and a keyed bundle without a log entry does not even parse as one of its bundles.
        # Either way kernels warns, and loads.
        expected = ("could not be verified against its signature" if repo == "acme/published-bundle"
                    else "the signature bundle is invalid")
        assert any(expected in m for m in result["logged"]), result["logged"]
        # kernelhub loads them: the tests' Sigstore is trusted here, and the key is acme's.
        r = get(hub, tmp_path / repo.replace("/", "-"), repo, "--require-signature",
                KERNELHUB_TRUSTED_KEYS=f"acme={Path(f'{key}.pub').read_text().strip()}")
        if repo == "acme/published-keyed":
            assert r.returncode == 0, r.stderr
        else:  # a kernels-community signature: the org's key is the only signer configured for acme
            assert r.returncode == 8 and error_of(r)["code"] == "untrusted_publisher", r.stderr
