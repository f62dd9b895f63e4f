#!/usr/bin/env python3
"""huggingface_hub's own test suite against `kernelhub serve`: a benchmark, not a test.

    bench/server/hub_client_suite.py --mirror GIT_DIR [--commit ee0a4510] [--python PY] [--work DIR]

1. Prepares a copy of the suite outside the repository: `git archive <commit> tests utils
   pyproject.toml` from the bare mirror (fetched with the search tool's `fetch`), then patches, in
   that copy only, the staging endpoint (`https://hub-ci.huggingface.co` -> this run's server), the
   pytest options (staging mode off, quieter output) and an `httpx` alias for `httpx2` (the tests
   import httpx; the client installed here, 2.4.0, uses httpx2). Nothing of the suite is committed.
2. Runs every module of its tests/ (test_*.py, found, not listed) twice, each time against a server
   on loopback started here:
   - a stub that answers 418 to every request: a test that fails against it depends on the server;
   - `kernelhub serve` with the suite's three tokens (its user, OTHER_USER, the enterprise admin),
     and a kernels-community/relu kernel repo for test_kernels.py (see SEED_KERNEL_REPO).
   Out of scope, by the rules of hub_suite_scope.py (printed with the results): tests marked xet,
   production or git_lfs, and the areas kernelhub serve does not serve (Spaces, inference,
   webhooks, collections, billing, jobs, papers, user pages, buckets, the discussions UI, likes),
   by module or by test name. Tests that need huggingface.co (its fixtures, production) or a bare
   outside address are left out too. A module that fails to import is counted and named.
3. Writes the score to --out (JSON, per test) and prints Markdown tables: the rules; the modules
   (run, left out, failed to import); passed / failed (by cause, from hub_suite_causes.json) /
   server-independent / skipped / left out.

The Python interpreter must see huggingface_hub (2.4.0 here) and pytest with pytest-mock,
pytest-env, pytest-asyncio and pytest-timeout: make a venv layered on the project's,
`python -m venv --system-site-packages` plus a .pth file naming .venv's site-packages, and
pip-install the plugins there (never into .venv).
"""

from __future__ import annotations

import argparse
import fnmatch
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import hub_suite_scope  # noqa: E402  (next to this file)

SEED_TOKEN = "hf_kernelhub_suite_seed_token"
SUITE_TOKENS = {  # tests/testing_constants.py's users and tokens, and the staging orgs the suite expects
    "tokens": {
        "hf_HubCITokenXXXXXXXXXXXXXXXXXXXXX": {"user": "__DUMMY_HUB_USER__", "fullname": "Dummy User",
                                               "orgs": ["valid_org_hub"], "write": True},
        "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": {"user": "DVUser", "write": True},
        "hf_enterprise_admin_token": {"user": "EnterpriseAdmin", "orgs": ["EnterpriseOrgPrivate"], "write": True},
        SEED_TOKEN: {"user": "kernels-community-admin", "orgs": ["kernels-community"], "write": True},
    },
    "organizations": {
        "valid_org_hub": {"fullname": "Dummy Hub Org"},
        "EnterpriseOrgPrivate": {"fullname": "Enterprise Org", "privateReposByDefault": True},
        "kernels-community": {"fullname": "Kernels Community"},
    },
}
# test_kernels.py reads kernels-community/relu on huggingface.co (branches main and v1, a file
# benchmarks/benchmark.py that differs between them). The run gives the server a repo of that shape
# and points the module's production reads at it: the kernel repo type is what kernelhub serves.
SEED_KERNEL_REPO = """
import sys
from huggingface_hub import CommitOperationAdd, HfApi

api = HfApi(endpoint=sys.argv[1], token=sys.argv[2])
repo = api.create_repo("kernels-community/relu", repo_type="kernel", exist_ok=True).repo_id
add = lambda text: [CommitOperationAdd("benchmarks/benchmark.py", text.encode())]
api.create_commit(repo, repo_type="kernel", operations=add("print('relu v1')\\n"), commit_message="v1")
api.create_branch(repo, repo_type="kernel", branch="v1")
api.create_commit(repo, repo_type="kernel", operations=add("print('relu v2')\\n"), commit_message="v2")
"""


def prepare(mirror: Path, commit: str, work: Path, endpoint: str) -> Path:
    """A fresh copy of the suite in work/suite, patched for `endpoint`."""
    suite = work / "suite"
    shutil.rmtree(suite, ignore_errors=True)
    suite.mkdir(parents=True)
    # utils/: test_generate_cli_reference.py imports the suite's own utils.generate_cli_reference.
    archive = subprocess.run(["git", "--git-dir", str(mirror), "archive", commit, "tests", "utils", "pyproject.toml"],
                             check=True, capture_output=True).stdout
    tar = work / "suite.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as t:
        t.extractall(suite, filter="data")
    tar.unlink()
    for path in (suite / "tests").rglob("*.py"):
        text = path.read_text()
        if "https://hub-ci.huggingface.co" in text and path.name != "test_utils_errors.py":
            path.write_text(text.replace("https://hub-ci.huggingface.co", endpoint))
    kernels = suite / "tests" / "test_kernels.py"
    text = kernels.read_text()
    production_reads = "return HfApi(endpoint=ENDPOINT_PRODUCTION)"
    if production_reads not in text:
        raise SystemExit(f"{kernels}: no `{production_reads}` to point at the server (the suite changed)")
    kernels.write_text(text.replace(production_reads, "return HfApi(endpoint=ENDPOINT_STAGING)"))
    pyproject = suite / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"HUGGINGFACE_CO_STAGING=1"', '"HUGGINGFACE_CO_STAGING=0"'))
    shim = work / "shim" / "httpx"
    shim.mkdir(parents=True, exist_ok=True)
    (shim / "__init__.py").write_text("import sys, httpx2\nsys.modules[__name__] = httpx2\n")
    for name in ("hub_suite_plugin.py", "hub_suite_scope.py"):
        shutil.copy(HERE / name, work / "shim" / name)
    return suite


class _Teapot(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = b'{"error": "I\'m a teapot"}'
        self.send_response(418)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _answer

    def log_message(self, *args):
        pass


class Stub:
    def __init__(self):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Teapot)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()


class Kernelhub:
    def __init__(self, binary: Path, work: Path, extra: list[str]):
        root = work / "hub-root"
        shutil.rmtree(root, ignore_errors=True)
        tokens = work / "tokens.json"
        tokens.write_text(json.dumps(SUITE_TOKENS))
        self.log = open(work / "server.log", "wb")
        self.process = subprocess.Popen([str(binary), "serve", "--root", str(root), "--port", "0", "--tokens",
                                         str(tokens), "--log-requests", *extra],
                                        stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"listening on (\S+)", line)
        if not match:
            self.process.kill()
            raise SystemExit(f"kernelhub serve did not start: {line!r}")
        self.url = match.group(1)

    def seed(self, python: str) -> None:
        subprocess.run([python, "-c", SEED_KERNEL_REPO, self.url, SEED_TOKEN], check=True)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.log.close()


def run_suite(python: str, work: Path, suite: Path, endpoint: str, label: str, selection: list[str],
              timeout: int) -> dict:
    results = work / f"results-{label}.json"
    env = dict(os.environ)
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE", "HF_HOME"):
        env.pop(name, None)
    env.update(HF_ENDPOINT=endpoint, HF_HUB_DISABLE_XET="1", KERNELHUB_SUITE_RESULTS=str(results),
               PYTHONPATH=str(work / "shim") + os.pathsep + env.get("PYTHONPATH", ""))
    if any(env.get(v) for v in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")):
        env["NO_PROXY"] = "127.0.0.1,localhost"  # the server is on loopback; the suite's proxy test reads the rest
    # The folder, not a list of its files: pytest asks the plugin about each module it finds there
    # (a module named on the command line would be imported whatever the scope rules say).
    cmd = [python, "-m", "pytest", *([f"tests/{s}" for s in selection] if selection else ["tests"]),
           "-p", "hub_suite_plugin",
           "-p", "no:cacheprovider", "-o", "addopts=-Werror::FutureWarning --strict-markers",
           "-q", "--no-header", "-rN", "--tb=line",
           "--continue-on-collection-errors",
           f"--timeout={timeout}"]
    started = time.monotonic()
    with open(work / f"pytest-{label}.log", "w") as log:
        subprocess.run(cmd, cwd=suite, env=env, stdout=log, stderr=subprocess.STDOUT)
    print(f"[suite] {label}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    if not results.exists():
        raise SystemExit(f"the {label} run wrote no results: see {work / f'pytest-{label}.log'}")
    return json.loads(results.read_text())


def score(stub: dict, served: dict, causes: dict[str, str]) -> dict:
    """Each test of the two runs in one class: passed, failed (by cause), independent, skipped, left out."""
    table = {"passed": [], "failed": {}, "independent": [], "skipped": [], "left_out_outside": [], "left_out": {},
             "one_run_only": []}
    a_tests, b_tests = stub["tests"], served["tests"]
    for nodeid in sorted(set(a_tests) | set(b_tests)):
        if nodeid not in a_tests or nodeid not in b_tests:
            table["one_run_only"].append(nodeid)  # a stub run kept from a call with other --files
            continue
        a, b = a_tests[nodeid], b_tests[nodeid]
        rule = a.get("left_out") or b.get("left_out")
        if rule:
            table["left_out"].setdefault(rule, []).append(nodeid)
        elif a.get("outside") or b.get("outside"):
            table["left_out_outside"].append(nodeid)
        elif b.get("outcome") == "skipped" or a.get("outcome") == "skipped":
            table["skipped"].append(nodeid)
        elif a.get("outcome") == "passed" or not (a.get("contacted") or "418" in a.get("message", "")):
            # Passes without a server, or fails without the server having any part in it (no
            # connection, no 418 in the failure: the client's own reasons, e.g. a removed name).
            table["independent"].append(nodeid)
        elif b.get("outcome") == "passed":
            table["passed"].append(nodeid)
        else:
            cause = next((c for pattern, c in causes.items() if fnmatch.fnmatch(nodeid, pattern)), "uncategorized")
            table["failed"].setdefault(cause, []).append({"test": nodeid, "message": b.get("message", "")})
    return table


def modules(discovered: list[str], stub: dict, served: dict, table: dict) -> dict:
    """What became of each module: left out by a rule, failed to import, skipped by the suite, or run."""
    seen = {**stub["modules"], **served["modules"]}
    rows = {}
    for name in discovered:
        entry = seen.get(name)
        if entry is None:
            rows[name] = {"state": "not collected", "detail": "pytest reported nothing for it"}
        elif "left_out" in entry:
            rows[name] = {"state": "left out", "detail": entry["left_out"]}
        elif "import_error" in entry:
            rows[name] = {"state": "failed to import", "detail": entry["import_error"]}
        elif "skipped" in entry:
            rows[name] = {"state": "skipped by the suite", "detail": entry["skipped"]}
        elif entry["collected"] == 0:
            rows[name] = {"state": "holds no tests", "detail": "a module without a test function"}
        else:
            prefix = f"tests/{name}::"
            ruled = sum(1 for ids in table["left_out"].values() for t in ids if t.startswith(prefix))
            rows[name] = {"state": "run", "collected": entry["collected"], "left_out_by_rule": ruled,
                          "ran": entry["collected"] - ruled}
    return rows


def report(summary: dict, table: dict, rows: dict) -> None:
    print("Scope (hub_suite_scope.py):")
    for line in hub_suite_scope.describe():
        print(f"- {line}")
    by_state: dict[str, list[str]] = {}
    for name, row in rows.items():
        by_state.setdefault(row["state"], []).append(name)
    print(f"\n| modules | {len(rows)} |\n|---|---|")
    for state, names in sorted(by_state.items()):
        print(f"| {state} | {len(names)} |")
    for name, row in rows.items():
        if row["state"] != "run":
            print(f"- {name}: {row['state']}: {row['detail']}")
        elif row["ran"] == 0:
            print(f"- {name}: run, but all {row['collected']} tests left out by rule")
    print("\n| tests | |\n|---|---|")
    print(f"| depend on the server (fail against the 418 stub, having asked it) | {summary['server_dependent']} |")
    print(f"| pass against kernelhub serve | {summary['passed']} ({summary['percent']} %) |")
    for cause, tests in sorted(table["failed"].items()):
        print(f"| fail: {cause} | {len(tests)} |")
    print(f"| server-independent | {summary['server_independent']} |")
    print(f"| of which fail against both, with no request to either | {summary['independent_failing']} |")
    print(f"| skipped by the suite | {summary['skipped']} |")
    print(f"| left out: need huggingface.co or an outside address | {summary['left_out_outside_hosts']} |")
    for rule, tests in sorted(table["left_out"].items()):
        print(f"| left out by rule: {rule} | {len(tests)} |")
    if table["one_run_only"]:
        print(f"| not scored: run against one server only | {len(table['one_run_only'])} |")
    for cause, tests in sorted(table["failed"].items()):
        print(f"\nfail: {cause}")
        for t in tests:
            print(f"- {t['test']}: {t['message'][:160]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", type=Path, required=True,
                        help="bare git mirror of huggingface_hub (the one the suite is taken from)")
    parser.add_argument("--commit", default="ee0a4510")
    parser.add_argument("--python", default=str(REPO / ".venv" / "bin" / "python"),
                        help="interpreter with huggingface_hub and pytest (default: the checkout's .venv)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kernelhub-hub-suite")
    parser.add_argument("--build-dir", type=Path, default=Path(os.environ.get("KERNELHUB_BUILD_DIR", REPO / "build")))
    parser.add_argument("--files", nargs="*", default=None,
                        help="test files (or node ids) under tests/, to look into a few (default: every tests/test_*.py)")
    parser.add_argument("--reuse-stub", action="store_true", help="keep the stub run of a previous call")
    parser.add_argument("--stub-only", action="store_true", help="only the run against the 418 stub")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test")
    parser.add_argument("--out", type=Path, default=None, help="score JSON (default WORK/score.json)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    causes = json.loads((HERE / "hub_suite_causes.json").read_text())
    probe = subprocess.run([args.python, "-c", "import huggingface_hub, pytest, pytest_mock, pytest_env, pytest_timeout"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise SystemExit(f"{args.python} cannot run the suite ({probe.stderr.strip().splitlines()[-1]}): "
                         "see this file's docstring for the venv it needs")
    binary = args.build_dir / "bin" / "kernelhub"
    if not args.stub_only and not binary.exists():
        raise SystemExit(f"{binary} not found: build it first (cmake --build build --target kernelhub)")
    discovered: list[str] = []

    def run_against(target, label: str) -> dict:
        try:
            suite = prepare(args.mirror, args.commit, args.work, target.url)
            if isinstance(target, Kernelhub):
                target.seed(args.python)
            discovered[:] = sorted(p.name for p in (suite / "tests").glob("test_*.py"))
            return run_suite(args.python, args.work, suite, target.url, label, args.files or [], args.timeout)
        finally:
            target.stop()

    stub_results = args.work / "results-stub.json"
    if args.reuse_stub and stub_results.exists():
        stub = json.loads(stub_results.read_text())
    else:
        stub = run_against(Stub(), "stub")
    if args.stub_only:
        return 0
    served = run_against(Kernelhub(binary, args.work, []), "kernelhub")

    table = score(stub, served, causes)
    rows = modules(discovered if not args.files else sorted({f.split("::")[0] for f in args.files}), stub, served,
                   table)
    dependent = len(table["passed"]) + sum(len(v) for v in table["failed"].values())
    summary = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "commit": args.commit,
        "server_dependent": dependent,
        "passed": len(table["passed"]),
        "percent": round(100.0 * len(table["passed"]) / dependent, 1) if dependent else 0.0,
        "failed_by_cause": {k: len(v) for k, v in sorted(table["failed"].items())},
        "server_independent": len(table["independent"]),
        # Of those, the ones that fail against both servers without a request to either (the client's
        # own reasons): counted by "fails against the stub" alone, they would be dependent.
        "independent_failing": sum(1 for t in table["independent"] if stub["tests"][t].get("outcome") == "failed"),
        "skipped": len(table["skipped"]),
        "left_out_outside_hosts": len(table["left_out_outside"]),
        "left_out_by_rule": {k: len(v) for k, v in sorted(table["left_out"].items())},
        "modules": {state: sum(1 for r in rows.values() if r["state"] == state)
                    for state in sorted({r["state"] for r in rows.values()})},
        "scope": hub_suite_scope.describe(),
    }
    out = args.out or args.work / "score.json"
    out.write_text(json.dumps({"summary": summary, "modules": rows, "tests": table}, indent=1))
    report(summary, table, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
