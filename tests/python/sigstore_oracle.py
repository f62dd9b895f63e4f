"""sigstore-python 4.5.1's verdicts on bundles, as `kernels` 0.19.1 reaches them: run as a script in
a child interpreter that imports sigstore from its own folder (`oracle_env`), so the tests' environment
never can (there kernels would verify every variant it loads).

stdin: a JSON list of checks, each `{"variant": DIR, "trusted_root": FILE}` (kernels' own
`verify_signature(DIR)` with its DEFAULT_POLICY, DIR holding metadata.json and metadata.json.sigstore)
or with `"identity": SAN, "issuer": URL` added (sigstore's `Identity` policy, what `sigstore verify
identity --cert-identity --cert-oidc-issuer` asks). stdout: a JSON list of `{"verified": bool,
"reason": str}`, one per check.

kernels builds its verifier with `Verifier.production()`, which refreshes Sigstore's public root over
TUF; here `production` returns a verifier of the given trusted root, and nothing goes to the network.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FOLDER_NAME = "sigstore-4.5.1"


def oracle_folder(root: Path) -> Path:
    """Where scripts/bootstrap.sh installs the oracle (KERNELHUB_SIGSTORE_ORACLE_DIR elsewhere)."""
    return Path(os.environ.get("KERNELHUB_SIGSTORE_ORACLE_DIR", root / ".venv" / "oracles" / FOLDER_NAME))


def oracle_env(env: dict, folder: Path) -> dict:
    """`env` for a child interpreter that imports sigstore from `folder` before anything else."""
    return dict(env, PYTHONPATH=os.pathsep.join([str(folder), *filter(None, [env.get("PYTHONPATH")])]))


def _verdicts(checks: list[dict]) -> list[dict]:
    from sigstore.errors import Error
    from sigstore.models import Bundle, TrustedRoot
    from sigstore.verify import Verifier, policy

    import kernels._internals.verify as kernels_verify

    trusted_root = {"path": None}

    class _TrustedRootVerifier(Verifier):
        @classmethod
        def production(cls, *, offline: bool = False) -> Verifier:
            return Verifier(trusted_root=TrustedRoot.from_file(trusted_root["path"]))

    kernels_verify.Verifier = _TrustedRootVerifier
    results = []
    for check in checks:
        trusted_root["path"] = check["trusted_root"]
        variant = Path(check["variant"])
        try:
            if "identity" in check:
                bundle = Bundle.from_json((variant / "metadata.json.sigstore").read_bytes())
                identity = policy.Identity(identity=check["identity"], issuer=check["issuer"])
                _TrustedRootVerifier.production().verify_artifact((variant / "metadata.json").read_bytes(), bundle,
                                                                 identity)
                results.append({"verified": True, "reason": "verified"})
            else:
                outcome = kernels_verify.verify_signature(variant, location=None, cache=False)
                verified = isinstance(outcome, kernels_verify.SignatureVerificationResult.Success)
                results.append({"verified": verified, "reason": str(outcome)})
        except Error as e:  # what kernels does not catch itself fails the load all the same
            results.append({"verified": False, "reason": f"{type(e).__name__}: {e}"})
        except Exception as e:  # noqa: BLE001 - a parser's ValueError on a broken bundle, say
            results.append({"verified": False, "reason": f"raised {type(e).__name__}: {e}"})
    return results


if __name__ == "__main__":
    import importlib.metadata

    found = {name: importlib.metadata.version(name) for name in ("sigstore", "kernels")}
    if found != {"sigstore": "4.5.1", "kernels": "0.19.1"}:
        sys.exit(f"the oracle needs sigstore 4.5.1 and kernels 0.19.1, found {found}")
    json.dump(_verdicts(json.load(sys.stdin)), sys.stdout)
