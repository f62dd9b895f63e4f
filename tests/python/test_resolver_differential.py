"""Differential test: our variant selection (`kernelhub variants`) against the `kernels` package's.

N_CASES seeded random cases of environment × candidate set are generated (edge cases: CUDA minor
fallback, ABI-tagged vs untagged, stable-ABI versions above and below torch, noarch and universal
fallbacks, free-threaded Python, wrong cpu/os, tvm-ffi, rocm/xpu/cann/metal/neuron/tpu,
unparsable names). Each case's candidates are directories under tmp/<case>/build/.

Ours: one `kernelhub variants --cases FILE` process answers every case (a process costs ~0.5 s,
mostly loading LibTorch, so 500 single runs would take minutes); a sample of cases also runs
through the plain `kernelhub variants DIR --json` with KERNELHUB_* variables, which must answer
the same.

Theirs: kernels.variants.get_variants_local + resolve_variants, in this process, with the seams
it reads the system through replaced for the case: `platform` (machine, system, mac_ver) and the
`sys`/`sysconfig` it checks free-threading with, in kernels.variants; `torch` and `tvm_ffi`
modules in sys.modules (__version__, compiled_with_cxx11_abi) with has_torch/has_tvm_ffi;
kernels.backends._backend (torch's backend), with the backend then passed explicitly by name.

Compared: the chosen variant; the accepted variants in order; for every name the kernels package
parses, accepted or not and the rejection reason, word for word.

Knowing differences (documented in resolver/select.hpp), allowed here and nowhere else:
  - free-threaded Python < 3.15: kernels drops arch variants from its trace; we keep them,
    rejected with its reason;
  - names kernels cannot parse are dropped by it; we list them rejected with our parser's
    reason. Names with an unknown cpu/os token (riscv64, plan9) parse there (and are rejected
    for the CPU/OS) but not here; both reject them, with different reasons;
  - ties in `_sort_variants` (tvm-ffi with backend minor 0 vs a noarch variant) follow its
    input order, a set's; we put tvm-ffi first. Where kernels' order depends on input order, we
    check that ours is one of its orders (sorting our order with its key leaves it unchanged);
  - Metal arch variants: kernels wants macOS >= 26; we have no macOS version, so the cases
    give darwin a macOS 26 (metal appears only on darwin);
  - --native-only (not the default) rejects noarch, universal and tvm-ffi: not compared.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import types
from pathlib import Path

import pytest
from kernels import backends as kbackends
from kernels import variants as kvariants
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"

SEED = 20250605
N_CASES = 600
N_CLI_SAMPLE = 12

TORCHES = ["2.8", "2.9", "2.10", "2.11", "2.15"]
BACKENDS = [
    "cuda12.6", "cuda12.8", "cuda12.9", "cuda13.0", "cuda13.2", "cuda13.2",
    "rocm6.4", "rocm7.0", "rocm7.1", "xpu2025.1", "xpu2025.3", "cann8.1",
    "cpu", "cpu", "neuron", "tpu",
]
PYTHONS = ["3.11", "3.12", "3.12", "3.13", "3.13", "3.14", "3.13t", "3.14t", "3.15t"]
TVM_FFIS = [None, None, "0.1", "0.2", "0.12"]


def kernels_backend(env_backend: str):
    """The kernels Backend object for our KERNELHUB_BACKEND spelling."""
    for prefix, cls in (("cuda", kbackends.CUDA), ("rocm", kbackends.ROCm), ("xpu", kbackends.XPU),
                        ("cann", kbackends.CANN)):
        if env_backend.startswith(prefix):
            return cls(version=Version(env_backend[len(prefix):]))
    return {"cpu": kbackends.CPU, "metal": kbackends.Metal, "neuron": kbackends.Neuron,
            "tpu": kbackends.TPU}[env_backend]()


def token(env_backend: str) -> str:
    return kernels_backend(env_backend).variant_str


def pack(version: str) -> str:
    major, minor = version.split(".")
    return major + minor


def random_environment(rng: random.Random) -> dict:
    os_ = rng.choices(["linux", "darwin", "windows"], weights=[8, 2, 1])[0]
    cpu = rng.choice(["x86_64", "aarch64"])
    backend = rng.choice(BACKENDS)
    if os_ == "darwin":
        cpu = "aarch64"
        backend = rng.choice(["metal", "metal", "cpu"])
    return {
        "os": os_,
        "cpu": cpu,
        "torch": rng.choice(TORCHES),
        "abi": rng.random() < 0.8,
        "backend": backend,
        "python": rng.choice(PYTHONS),
        "tvm_ffi": rng.choice(TVM_FFIS),
    }


def random_backend_token(rng: random.Random, env: dict) -> str:
    """Mostly near the environment's backend (same kind, minor ±), sometimes anything."""
    b = env["backend"]
    if rng.random() < 0.25:
        return token(rng.choice(BACKENDS + ["metal"]))
    if b.startswith("cuda"):
        major = int(b[4:].split(".")[0])
        return f"cu{rng.choice([major, major, major - 1, major + 1])}{rng.choice([0, 1, 6, 8, 9])}"
    if b.startswith(("rocm", "xpu", "cann")):
        prefix = "cann" if b.startswith("cann") else b[:4] if b.startswith("rocm") else "xpu"
        major, minor = b[len(prefix):].split(".")
        return f"{prefix}{major}{rng.choice([int(minor), int(minor), max(0, int(minor) - 1), int(minor) + 1])}"
    return token(b)


def random_candidate(rng: random.Random, env: dict) -> str:
    kind = rng.choices(["torch", "stable", "tvm", "noarch", "universal", "garbage"],
                       weights=[10, 5, 2, 3, 1, 1])[0]
    if kind == "universal":
        return "torch-universal"
    if kind == "noarch":
        return "torch-" + rng.choice(["cpu", "cuda", "rocm", "xpu", "metal", "npu", "neuron", "tpu", "cann"])
    if kind == "garbage":
        return rng.choice([
            "garbage", "torch-stable-abi-cu128-x86_64-linux", "torch215-cxx11-cu12-x86_64-linux",
            "torch215-cxx11-cuda-x86_64-linux", "torch215-cxx11-cpu-x86_64", "tvm-ffi-cpu-x86_64-linux",
            f"torch{pack(env['torch'])}-cxx11-cpu-riscv64-{env['os']}",
            f"torch{pack(env['torch'])}-{token(env['backend'])}-{env['cpu']}-plan9",
            "torch-gpu", "torch2-cpu-x86_64-linux", "_hidden",
        ])
    cpu = env["cpu"] if rng.random() < 0.85 else rng.choice(["x86_64", "aarch64"])
    os_ = env["os"] if rng.random() < 0.85 else rng.choice(["linux", "darwin", "windows"])
    arch = f"{random_backend_token(rng, env)}-{cpu}-{os_}"
    if kind == "torch":
        torch = env["torch"] if rng.random() < 0.7 else rng.choice(TORCHES)
        tag = rng.choice(["", "-cxx11", "-cxx11", "-cxx98"])
        return f"torch{pack(torch)}{tag}-{arch}"
    if kind == "stable":
        return f"torch-stable-abi{pack(rng.choice(TORCHES + ['2.16', '2.7']))}-{arch}"
    tvm = env["tvm_ffi"] if env["tvm_ffi"] and rng.random() < 0.6 else rng.choice(["0.1", "0.2", "0.12"])
    return f"tvm-ffi{pack(tvm)}-{arch}"


def generate_cases(root: Path) -> list[dict]:
    rng = random.Random(SEED)
    cases = []
    for i in range(N_CASES):
        env = random_environment(rng)
        names = sorted({random_candidate(rng, env) for _ in range(rng.randint(1, 9))})
        directory = root / f"case{i:04d}"
        for name in names:
            (directory / "build" / name).mkdir(parents=True)
        cases.append({"env": env, "names": names, "dir": str(directory)})
    return cases


def our_variables(env: dict) -> dict:
    variables = {
        "KERNELHUB_OS": env["os"],
        "KERNELHUB_CPU": env["cpu"],
        "KERNELHUB_TORCH": env["torch"],
        "KERNELHUB_CXX11_ABI": "1" if env["abi"] else "0",
        "KERNELHUB_BACKEND": env["backend"],
        "KERNELHUB_PYTHON": env["python"],
    }
    if env["tvm_ffi"]:
        variables["KERNELHUB_TVM_FFI"] = env["tvm_ffi"]
    return variables


def process_variables() -> dict:
    """A child environment without the caller's KERNELHUB_* settings; GPUs and driver given, so
    that no process probes libcuda."""
    variables = {k: v for k, v in os.environ.items() if not k.startswith("KERNELHUB_")}
    variables.update(KERNELHUB_GPUS="9.0", KERNELHUB_CUDA_DRIVER="13.2")
    return variables


def kernels_resolve(monkeypatch, env: dict, variants: list):
    """kernels' resolve_variants for `env`, with the system seams replaced. Returns the trace."""
    monkeypatch.setattr(kvariants.logger, "disabled", True)  # its free-threading warning, per case
    machine = {"aarch64": "arm64" if env["os"] == "darwin" else "aarch64",
               "x86_64": "AMD64" if env["os"] == "windows" else "x86_64"}[env["cpu"]]
    monkeypatch.setattr(kvariants, "platform", types.SimpleNamespace(
        machine=lambda: machine,
        system=lambda: env["os"].capitalize(),
        mac_ver=lambda: ("26.1", ("", "", ""), "arm64"),
    ))
    free_threaded = env["python"].endswith("t")
    major, minor = (int(x) for x in env["python"].rstrip("t").split("."))
    monkeypatch.setattr(kvariants, "sys", types.SimpleNamespace(version_info=(major, minor, 0)))
    monkeypatch.setattr(kvariants, "sysconfig", types.SimpleNamespace(
        get_config_var=lambda name: 1 if name == "Py_GIL_DISABLED" and free_threaded else 0))
    fake_torch = types.ModuleType("torch")
    fake_torch.__version__ = f"{env['torch']}.0"
    fake_torch.compiled_with_cxx11_abi = lambda: env["abi"]
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setattr(kvariants, "has_torch", True)
    if env["tvm_ffi"]:
        fake_tvm = types.ModuleType("tvm_ffi")
        fake_tvm.__version__ = f"{env['tvm_ffi']}.3"
        monkeypatch.setitem(sys.modules, "tvm_ffi", fake_tvm)
    monkeypatch.setattr(kvariants, "has_tvm_ffi", bool(env["tvm_ffi"]))
    backend = kernels_backend(env["backend"])
    monkeypatch.setattr(kbackends, "_backend", lambda: backend)
    _, trace = kvariants.resolve_variants(variants, backend=backend.name)
    return trace


def run_cases_file(tmp_path: Path, cases: list[dict]) -> list[dict]:
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps([{"dir": c["dir"], "env": our_variables(c["env"])} for c in cases]))
    result = subprocess.run([str(KERNELHUB), "variants", "--cases", str(cases_file)], capture_output=True,
                            text=True, env=process_variables(), timeout=300)
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout)
    assert len(answers) == len(cases)
    return answers


@pytest.fixture(scope="module")
def differential(tmp_path_factory):
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    tmp_path = tmp_path_factory.mktemp("differential")
    cases = generate_cases(tmp_path)
    return cases, run_cases_file(tmp_path, cases)


def compare(monkeypatch, case: dict, ours: dict) -> str | None:
    """None when we agree with kernels on `case`; else a description of the difference."""
    assert "error" not in ours, ours
    env, names = case["env"], case["names"]
    decisions = ours["decisions"]
    our_accepted = [d["variant"] for d in decisions if d["accepted"]]
    our_reason = {d["variant"]: d["reason"] for d in decisions if not d["accepted"]}
    assert sorted(d["variant"] for d in decisions) == names
    assert ours["chosen"] == (our_accepted[0] if our_accepted else None)

    with monkeypatch.context() as m:
        # Their own listing: a set, so their input order is arbitrary.
        trace = kernels_resolve(m, env, kvariants.get_variants_local(Path(case["dir"]) / "build"))
    with monkeypatch.context() as m:
        # Our order as their input: their stable sort must keep our accepted order.
        trace_in_our_order = kernels_resolve(m, env, [kvariants.parse_variant(n) for n in
                                                      (d["variant"] for d in decisions)
                                                      if _parses(n)])
    accepted = [d.variant.variant_str for d in trace if isinstance(d, kvariants.VariantAccepted)]
    accepted_ours_first = [d.variant.variant_str for d in trace_in_our_order
                           if isinstance(d, kvariants.VariantAccepted)]
    problems = []
    if sorted(accepted) != sorted(our_accepted):
        problems.append(f"accepted sets differ: kernels {accepted}, ours {our_accepted}")
    elif accepted_ours_first != our_accepted:
        problems.append(f"our order is not one of kernels' orders: kernels {accepted}, ours {our_accepted}")
    elif (accepted[0] if accepted else None) != ours["chosen"] and accepted_ours_first[0] != ours["chosen"]:
        problems.append(f"chosen differs: kernels {accepted[:1]}, ours {ours['chosen']}")
    for d in trace:
        name = d.variant.variant_str
        assert name in names, (name, names)
        if isinstance(d, kvariants.VariantRejected) and d.reason != our_reason.get(name, d.reason) \
                and _parses_here(name, decisions):
            problems.append(f"{name}: kernels says {d.reason!r}, we say {our_reason.get(name)!r}")
    seen = {d.variant.variant_str for d in trace}
    for name in names:
        if name in seen or name in our_accepted:
            continue
        # Not in their trace: unparsable there, or an arch variant on free-threaded Python < 3.15.
        assert name in our_reason, name
        if _parses(name) and _parses_here(name, decisions):
            assert our_reason[name] == "arch kernel not supported on free-threaded Python <3.15", name
    return "; ".join(problems) or None


def _parses(name: str) -> bool:
    try:
        kvariants.parse_variant(name)
        return True
    except ValueError:
        return False


def _parses_here(name: str, decisions: list[dict]) -> bool:
    reason = next(d["reason"] for d in decisions if d["variant"] == name)
    return "is not a build variant name" not in reason


def test_cases_cover_the_edge_cases(differential):
    cases, answers = differential
    envs = [c["env"] for c in cases]
    all_names = [n for c in cases for n in c["names"]]
    assert len(cases) >= 500
    assert any(e["python"] in ("3.13t", "3.14t") for e in envs)
    assert {e["os"] for e in envs} == {"linux", "darwin", "windows"}
    for fragment in ("-cxx11-", "-cxx98-", "torch-stable-abi", "tvm-ffi", "torch-universal", "torch-cuda",
                     "rocm", "xpu", "cann", "metal", "neuron", "tpu", "riscv64", "garbage"):
        assert any(fragment in n for n in all_names), fragment
    # CUDA minor fallback: a case where an older minor of the same major was chosen.
    assert any(a["chosen"] and "-cu12" in a["chosen"] and c["env"]["backend"] in ("cuda12.8", "cuda12.9")
               and token(c["env"]["backend"]) not in a["chosen"] for c, a in zip(cases, answers))
    assert sum(1 for a in answers if a["chosen"] is None) > 20
    assert sum(1 for a in answers if a["chosen"] and a["chosen"].startswith("torch-stable-abi")) > 20


def test_same_decisions_as_the_kernels_package(differential, monkeypatch):
    cases, answers = differential
    failures = []
    for i, (case, ours) in enumerate(zip(cases, answers)):
        problem = compare(monkeypatch, case, ours)
        if problem:
            failures.append(f"case {i} env={case['env']} names={case['names']}: {problem}")
    assert not failures, f"{len(failures)} of {len(cases)} cases differ:\n" + "\n".join(failures[:20])


def test_cli_answers_as_the_cases_mode(differential):
    """The plain CLI, with KERNELHUB_* variables, agrees with the batch mode; exit codes 0/1."""
    cases, answers = differential
    rng = random.Random(SEED + 1)
    sample = rng.sample(range(len(cases)), N_CLI_SAMPLE)
    sample += [next(i for i, a in enumerate(answers) if a["chosen"] is None)]
    for i in sample:
        variables = process_variables()
        variables.update(our_variables(cases[i]["env"]))
        result = subprocess.run([str(KERNELHUB), "variants", cases[i]["dir"], "--json"], capture_output=True,
                                text=True, env=variables, timeout=60)
        assert result.returncode == (0 if answers[i]["chosen"] else 1), result.stderr
        assert json.loads(result.stdout) == answers[i]
        text = subprocess.run([str(KERNELHUB), "variants", cases[i]["dir"]], capture_output=True, text=True,
                              env=variables, timeout=60)
        assert text.returncode == result.returncode
        assert f"chosen: {answers[i]['chosen'] or 'none'}" in text.stdout


def test_bad_usage_exits_2(tmp_path):
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    for args in ([], [str(tmp_path / "missing")], [str(tmp_path), "--bogus"]):
        result = subprocess.run([str(KERNELHUB), "variants", *args], capture_output=True, text=True,
                                env=process_variables(), timeout=60)
        assert result.returncode == 2, (args, result.stderr)


def test_native_only_rejects_python_only_variants(tmp_path):
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    for name in ("torch-cuda", "torch-universal", "tvm-ffi01-cu128-x86_64-linux"):
        (tmp_path / "build" / name).mkdir(parents=True)
    variables = process_variables()
    variables.update(our_variables({"os": "linux", "cpu": "x86_64", "torch": "2.15", "abi": True,
                                    "backend": "cuda12.8", "python": "3.12", "tvm_ffi": "0.1"}))
    default = subprocess.run([str(KERNELHUB), "variants", str(tmp_path), "--json"], capture_output=True,
                             text=True, env=variables, timeout=60)
    assert default.returncode == 0 and json.loads(default.stdout)["chosen"] == "tvm-ffi01-cu128-x86_64-linux"
    native = subprocess.run([str(KERNELHUB), "variants", str(tmp_path), "--json", "--native-only"],
                            capture_output=True, text=True, env=variables, timeout=60)
    assert native.returncode == 4 and json.loads(native.stdout)["chosen"] is None  # no variant runs here
