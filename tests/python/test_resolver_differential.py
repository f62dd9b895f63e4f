"""Differential test: our variant selection (`kernelhub variants`) against kernels 0.19.1's.

N_CASES seeded random cases of environment x candidate set. The candidates mix both name forms
(legacy `torch215-cxx11-cu128-x86_64-linux`, explicit `torch-2.15-cxx11-cuda-12.8-cpython-3.9-
abi3-x86_64-linux`) and every kind of variant: torch, stable ABI and tvm-ffi builds in both forms
(and, often, both names of the same build in one repo), cpython minimums with abi3 and abi3t,
torch and MLX noarch builds (npu, cann, universal, unknown names), the four sdk forms, names with
an unknown cpu or os, and names neither parses. The environments: Linux, macOS (Metal, with and
without macOS 26) and Windows; CUDA, ROCm (7.14 among them), XPU, CANN, CPU, Neuron and TPU
backends; torch from 2.8 to 2.15 or none; Python 3.10 to 3.15, free-threaded or not; tvm-ffi
0.1/0.2/0.12 or none; MLX or not. Each case's candidates are directories under tmp/<case>/build/.

Ours: one `kernelhub variants --cases FILE` process answers every case; a sample also runs
through the plain `kernelhub variants DIR --json` with KERNELHUB_* variables, which must answer
the same.

Theirs: kernels 0.19.1's own functions (kernels._internals.variants: parse_variant,
_resolve_variant_for_system, _sort_variants, variants_trace_str), given the case's system as
arguments: nothing of this process is patched.

Compared, for every case:
  - the accepted variants, as a set;
  - the first choice: among the variants kernels ranks best (it picks one of equal rank by the
    order of a Python set), ours is the one our documented tie-break picks (resolver/select.hpp:
    the explicit-form name before the legacy-form name of the same build, then for noarch
    builds the framework the process has, then the name);
  - the whole order, accepted and rejected: kernels' order with that tie-break, exactly;
  - every rejection reason, word for word, and the trace lines as kernels prints them (kernels
    also marks the other name of its chosen build "preferred"; we mark only the one chosen);
  - names kernels cannot parse: we reject them too (after every parsed one).

Deliberate differences, each tested by name below and nowhere else (README.md says why):
  - a torch built with CUDA on a machine without a CUDA driver selects CPU variants
    (test_cuda_torch_without_a_driver_selects_cpu_variants);
  - variant names with a leading zero or more than 9 digits in a number are a typed error here,
    while kernels reads them as another number and then fetches a folder that is not there;
    `torch` alone likewise (test_names_kernels_misreads_are_refused);
  - a process that cannot load a kind of variant rejects it first (loadable.hpp;
    test_what_the_process_can_load_is_an_input).
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import subprocess
from pathlib import Path

import pytest

kvariants = pytest.importorskip("kernels._internals.variants")
kbackends = pytest.importorskip("kernels._internals.backends")
from packaging.version import Version  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"

SEED = 20261204
N_CASES = 1200
N_CLI_SAMPLE = 12

TORCHES = ["2.8", "2.9", "2.10", "2.11", "2.15"]
BACKENDS = [
    "cuda12.6", "cuda12.8", "cuda12.9", "cuda13.0", "cuda13.2", "cuda13.2",
    "rocm6.4", "rocm6.4.43482", "rocm7.0", "rocm7.1", "rocm7.14", "xpu2025.1", "xpu2025.3", "cann8.1", "cann8.2",
    "cpu", "cpu", "neuron", "tpu",
]
PYTHONS = ["3.10", "3.11", "3.12", "3.12", "3.13", "3.13", "3.14", "3.15", "3.13t", "3.14t", "3.15t"]
TVM_FFIS = [None, None, "0.1", "0.2", "0.12"]
CPYTHONS = ["3.9", "3.9", "3.10", "3.12", "3.13", "3.15"]
NOARCH_NAMES = ["cpu", "cuda", "rocm", "xpu", "metal", "npu", "cann", "neuron", "tpu", "universal", "gpu", "cuda-12"]
# Names neither parses (each for another reason).
GARBAGE = [
    "garbage", "_hidden", "torch-stable-abi-cu128-x86_64-linux", "torch215-cxx11-cuda-x86_64-linux",
    "torch215-cxx11-cpu-x86_64", "tvm-ffi-cpu-x86_64-linux", "torch2-cpu-x86_64-linux",
    "torch-2.15-cu128-cpython-3.9-abi3-x86_64-linux", "torch215-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
    "torch-2.15-cuda-12.8-cpython-3.13-abi3t-x86_64-linux", "torch-2.15-cuda-13-cpython-3.9-abi3-x86_64-linux",
    "torch-2.15-cuda-12.8-x86_64-linux", "sdk-cuda-12.8", "mlx-2.0-cpu-cpython-3.9-abi3-x86_64-linux",
    "sdk-cuda-cpython-3.9-abi3-x86_64-linux", "torch-2.15-cpu-cpython-3.9-abi4-x86_64-linux",
]


# ---- the environment, in both clients' terms ------------------------------------------------------


def kernels_backend(env_backend: str):
    """kernels' Backend for our KERNELHUB_BACKEND spelling (as its _backend() would make it)."""
    for prefix, cls in (("cuda", kbackends.CUDA), ("rocm", kbackends.ROCm), ("xpu", kbackends.XPU),
                        ("cann", kbackends.CANN)):
        if env_backend.startswith(prefix):
            return cls(version=Version(env_backend[len(prefix):]))
    return {"cpu": kbackends.CPU, "metal": kbackends.Metal, "neuron": kbackends.Neuron,
            "tpu": kbackends.TPU}[env_backend]()


def random_environment(rng: random.Random) -> dict:
    os_ = rng.choices(["linux", "darwin", "windows"], weights=[8, 2, 1])[0]
    cpu = rng.choice(["x86_64", "aarch64"])
    backend = rng.choice(BACKENDS)
    macos = None
    if os_ == "darwin":
        cpu = "aarch64"
        backend = rng.choice(["metal", "metal", "cpu"])
        macos = rng.choice(["15.6", "26.0", "26.1"])
    return {
        "os": os_,
        "cpu": cpu,
        "torch": rng.choice(TORCHES) if rng.random() < 0.93 else None,
        "abi": rng.random() < 0.8,
        "backend": backend,
        "python": rng.choice(PYTHONS),
        "tvm_ffi": rng.choice(TVM_FFIS),
        "mlx": rng.random() < 0.3,
        "macos": macos,
    }


def our_variables(env: dict) -> dict:
    variables = {
        "KERNELHUB_OS": env["os"],
        "KERNELHUB_CPU": env["cpu"],
        "KERNELHUB_CXX11_ABI": "1" if env["abi"] else "0",
        "KERNELHUB_BACKEND": env["backend"],
        "KERNELHUB_PYTHON": env["python"],
        "KERNELHUB_MLX": "1" if env["mlx"] else "0",
        "KERNELHUB_TVM_FFI": env["tvm_ffi"] or "",
    }
    if env["torch"]:
        variables["KERNELHUB_TORCH"] = env["torch"]
    if env["macos"]:
        variables["KERNELHUB_MACOS"] = env["macos"]
    return variables


def kernels_resolve(env: dict, names: list[str]):
    """kernels 0.19.1's decision trace for `env`, from its own functions. Names it cannot parse
    are left out, as its get_variants leaves them out."""
    variants = [v for v in map(kernels_parse, names) if v is not None]
    _, trace = kvariants._resolve_variant_for_system(
        variants=variants,
        selected_backend=kernels_backend(env["backend"]),
        cpu=env["cpu"],
        os=env["os"],
        torch_version=Version(env["torch"]) if env["torch"] else None,
        # resolve_variants asks torch for its ABI on Linux only.
        torch_cxx11_abi=(env["abi"] if env["os"] == "linux" else None) if env["torch"] else None,
        tvm_ffi_version=Version(env["tvm_ffi"]) if env["tvm_ffi"] else None,
        macos_version=Version(env["macos"]) if env["macos"] else None,
        python_version=Version(env["python"].rstrip("t")),
        free_threaded=env["python"].endswith("t"),
        has_mlx=env["mlx"],
    )
    return trace


def kernels_parse(name: str):
    try:
        return kvariants.parse_variant(name)
    except ValueError:
        return None


# ---- candidates ---------------------------------------------------------------------------------


def backend_near(rng: random.Random, env: dict) -> tuple[str, str | None]:
    """(kind, "M.m" or None): mostly the environment's backend kind, its minor +-1, sometimes any."""
    b = env["backend"] if rng.random() < 0.8 else rng.choice(BACKENDS + ["metal"])
    for kind in ("cuda", "rocm", "xpu", "cann"):
        if b.startswith(kind):
            major, minor = b[len(kind):].split(".")[:2]
            if kind == "cuda" and rng.random() < 0.3:
                major = str(int(major) + rng.choice([-1, 1]))
            minor = str(max(0, int(minor) + rng.choice([-2, -1, 0, 0, 0, 1])))
            return kind, f"{major}.{minor}"
    return b, None


def legacy_token(kind: str, version: str | None) -> str | None:
    """`cu128`; None where the legacy form cannot write it (a two-digit minor, but ROCm 7.14)."""
    if version is None:
        return kind
    major, minor = version.split(".")
    if len(minor) > 1 and (kind, version) != ("rocm", "7.14"):
        return None
    return ("cu" if kind == "cuda" else kind) + major + minor


def explicit_backend(kind: str, version: str | None) -> str:
    return kind if version is None else f"{kind}-{version}"


def system_of(rng: random.Random, env: dict) -> str:
    cpu = env["cpu"] if rng.random() < 0.88 else rng.choice(["x86_64", "aarch64", "riscv64"])
    os_ = env["os"] if rng.random() < 0.88 else rng.choice(["linux", "darwin", "windows", "plan9"])
    return f"{cpu}-{os_}"


def python_tag(rng: random.Random) -> str:
    version = rng.choice(CPYTHONS)
    abi = "abi3t" if Version(version) >= Version("3.15") and rng.random() < 0.6 else "abi3"
    return f"cpython-{version}-{abi}"


def arch_names(rng: random.Random, env: dict) -> list[str]:
    """One torch, stable-ABI or tvm-ffi build: its legacy name, its explicit name, or both."""
    framework = rng.choices(["torch", "stable", "tvm"], weights=[10, 5, 3])[0]
    kind, version = backend_near(rng, env)
    system = system_of(rng, env)
    if framework == "torch":
        torch = env["torch"] if env["torch"] and rng.random() < 0.7 else rng.choice(TORCHES)
        tag = rng.choice(["", "-cxx11", "-cxx11", "-cxx98"])
        legacy_fw, explicit_fw = f"torch{torch.replace('.', '')}{tag}", f"torch-{torch}{tag}"
    elif framework == "stable":
        abi = rng.choice(TORCHES + ["2.16", "2.7"])
        legacy_fw, explicit_fw = f"torch-stable-abi{abi.replace('.', '')}", f"torch-stable-abi-{abi}"
    else:
        tvm = env["tvm_ffi"] if env["tvm_ffi"] and rng.random() < 0.6 else rng.choice(["0.1", "0.2", "0.12"])
        legacy_fw, explicit_fw = f"tvm-ffi{tvm.replace('.', '')}", f"tvm-ffi-{tvm}"
    token = legacy_token(kind, version)
    form = rng.choices(["legacy", "explicit", "twins"], weights=[4, 4, 3])[0]
    if token is None:
        form = "explicit"
    legacy = f"{legacy_fw}-{token}-{system}"
    python = "cpython-3.9-abi3" if form == "twins" else python_tag(rng)
    explicit = f"{explicit_fw}-{explicit_backend(kind, version)}-{python}-{system}"
    return {"legacy": [legacy], "explicit": [explicit], "twins": [legacy, explicit]}[form]


def sdk_name(rng: random.Random, env: dict) -> str:
    shape = rng.choice(["sdk", "named", "compiled", "compiled-backend", "compiled-backend"])
    if shape == "sdk":
        return "sdk"
    if shape == "named":
        return "sdk-" + rng.choice(NOARCH_NAMES[:-2])
    if shape == "compiled":
        return f"sdk-{python_tag(rng)}-{system_of(rng, env)}"
    kind, version = backend_near(rng, env)
    return f"sdk-{explicit_backend(kind, version)}-{python_tag(rng)}-{system_of(rng, env)}"


def random_names(rng: random.Random, env: dict) -> list[str]:
    names: list[str] = []
    for _ in range(rng.randint(1, 8)):
        kind = rng.choices(["arch", "noarch", "mlx", "sdk", "garbage"], weights=[14, 4, 2, 3, 1])[0]
        if kind == "arch":
            names += arch_names(rng, env)
        elif kind == "noarch":
            names.append("torch-" + rng.choice(NOARCH_NAMES))
        elif kind == "mlx":
            names.append("mlx-" + rng.choice(NOARCH_NAMES[:-2]))
        elif kind == "sdk":
            names.append(sdk_name(rng, env))
        else:
            names.append(rng.choice(GARBAGE))
    return sorted(set(names))


def generate_cases(root: Path) -> list[dict]:
    rng = random.Random(SEED)
    cases = []
    for i in range(N_CASES):
        env = random_environment(rng)
        names = random_names(rng, env)
        directory = root / f"case{i:04d}"
        for name in names:
            (directory / "build" / name).mkdir(parents=True)
        cases.append({"env": env, "names": names, "dir": str(directory)})
    return cases


# ---- running ours ---------------------------------------------------------------------------------


def process_variables() -> dict:
    """A child environment without the caller's KERNELHUB_* settings; GPUs and driver given, so
    that no process probes libcuda."""
    variables = {k: v for k, v in os.environ.items() if not k.startswith("KERNELHUB_")}
    variables.update(KERNELHUB_GPUS="9.0", KERNELHUB_CUDA_DRIVER="13.2")
    return variables


def run_cases(tmp_path: Path, cases: list[dict]) -> list[dict]:
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps([{"dir": c["dir"], "env": our_variables(c["env"]),
                                       **({"loadable": c["loadable"]} if "loadable" in c else {})} for c in cases]))
    result = subprocess.run([str(KERNELHUB), "variants", "--cases", str(cases_file)], capture_output=True,
                            text=True, env=process_variables(), timeout=600)
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
    return cases, run_cases(tmp_path, cases)


# ---- comparing ----------------------------------------------------------------------------------


def kernels_before(a, b) -> bool:
    """Whether kernels' _sort_variants puts decision `a` strictly before `b` (its sort is stable:
    given [b, a], it puts `a` first only if its key is smaller)."""
    return a is not b and kvariants._sort_variants([b, a])[0] is a


def legacy_form(variant) -> bool:
    return isinstance(variant, kvariants.ArchVariant) and variant.framework.legacy


def our_order_key(env: dict):
    """kernels' order, and where it ties, select.hpp's tie-break: explicit form first, then the
    noarch framework the process has (torch where there is a torch, else MLX), then the name."""

    def framework_preference(variant) -> int:
        if isinstance(variant, kvariants.NoarchVariant):
            is_torch = isinstance(variant.framework, kvariants.TorchNoarch)
            return 0 if is_torch == bool(env["torch"]) else 1
        return 0

    def compare(a, b) -> int:
        if kernels_before(a, b):
            return -1
        if kernels_before(b, a):
            return 1
        ka = (legacy_form(a.variant), framework_preference(a.variant), a.variant.variant_str)
        kb = (legacy_form(b.variant), framework_preference(b.variant), b.variant.variant_str)
        return (ka > kb) - (ka < kb)

    return functools.cmp_to_key(compare)


def compare(case: dict, ours: dict, trace=None) -> list[str]:
    """The differences between ours and kernels 0.19.1 on `case` (empty when none); `trace`:
    kernels' decisions when they come from elsewhere than kernels_resolve (its own detection)."""
    assert "error" not in ours, ours
    env, names = case["env"], case["names"]
    decisions = ours["decisions"]
    assert sorted(d["variant"] for d in decisions) == names
    problems = []

    if trace is None:
        trace = kernels_resolve(env, names)
    parsed = {d.variant.variant_str for d in trace}
    assert parsed == {n for n in names if kernels_parse(n) is not None}  # names are canonical
    for d in decisions:
        if d["variant"] not in parsed and d["code"] != "unparsable_name":
            problems.append(f"{d['variant']}: kernels cannot parse it, we say {d['reason']!r}")
        if d["variant"] in parsed and d["code"] == "unparsable_name":
            problems.append(f"{d['variant']}: kernels parses it, we say {d['reason']!r}")
    ours_parsed = [d for d in decisions if d["variant"] in parsed]
    if [d["variant"] for d in decisions[:len(ours_parsed)]] != [d["variant"] for d in ours_parsed]:
        problems.append("unparsable names are not after every parsed one")

    accepted = {d.variant.variant_str for d in trace if isinstance(d, kvariants.VariantAccepted)}
    our_accepted = {d["variant"] for d in decisions if d["accepted"]}
    if accepted != our_accepted:
        problems.append(f"accepted sets differ: kernels {sorted(accepted)}, ours {sorted(our_accepted)}")

    # The first choice: one of those kernels ranks best, and the one our tie-break picks.
    expected = sorted(trace, key=our_order_key(env))
    best = expected[0] if expected and isinstance(expected[0], kvariants.VariantAccepted) else None
    if best is not None:
        tied = [d.variant.variant_str for d in trace if isinstance(d, kvariants.VariantAccepted)
                and not kernels_before(best, d)]
        if ours["chosen"] not in tied:
            problems.append(f"chosen {ours['chosen']} is not among kernels' best {tied}")
    if ours["chosen"] != (best.variant.variant_str if best else None):
        problems.append(f"chosen {ours['chosen']}, tie-break says {best.variant.variant_str if best else None}")

    # The whole order, and every reason.
    if [d.variant.variant_str for d in expected] != [d["variant"] for d in ours_parsed]:
        problems.append(f"order: expected {[d.variant.variant_str for d in expected]}, "
                        f"ours {[d['variant'] for d in ours_parsed]}")
    our_reason = {d["variant"]: d["reason"] for d in decisions}
    for d in trace:
        if isinstance(d, kvariants.VariantRejected) and our_reason[d.variant.variant_str] != d.reason:
            problems.append(f"{d.variant.variant_str}: kernels says {d.reason!r}, we say "
                            f"{our_reason[d.variant.variant_str]!r}")

    # The trace lines, as kernels prints them for the same order.
    theirs = kvariants.variants_trace_str(expected).splitlines()
    mine = ours["trace"].splitlines()[:len(ours_parsed)]
    for line, our_line in zip(theirs, mine):
        twin_of_best = line.endswith(" compatible, preferred \u2705") and our_line == line.replace(
            ", preferred", "") and not line.startswith(ours["chosen"] + " ")
        if line != our_line and not twin_of_best:
            problems.append(f"trace line: kernels {line!r}, ours {our_line!r}")
    if len(theirs) != len(mine):
        problems.append(f"trace: kernels has {len(theirs)} lines, ours {len(mine)}")
    return problems


def test_cases_cover_both_forms_and_every_kind(differential):
    cases, answers = differential
    assert len(cases) >= 1000
    envs = [c["env"] for c in cases]
    names = [n for c in cases for n in c["names"]]
    assert {e["os"] for e in envs} == {"linux", "darwin", "windows"}
    assert any(e["python"].endswith("t") for e in envs) and any(e["torch"] is None for e in envs)
    assert any(e["mlx"] for e in envs) and any(e["tvm_ffi"] for e in envs)
    assert any(e["backend"] == "rocm6.4.43482" for e in envs)
    for fragment in ("-cxx11-", "-cxx98-", "torch-stable-abi-", "torch-stable-abi2", "tvm-ffi-", "tvm-ffi0",
                     "-cpython-3.15-abi3t-", "-cpython-3.13-abi3-", "torch-universal", "torch-npu", "torch-cann",
                     "mlx-", "sdk-cpython-", "sdk-cuda-", "rocm714", "rocm-7.14", "xpu2025", "xpu-2025.",
                     "cann-8.", "metal", "neuron", "tpu", "riscv64", "plan9", "garbage"):
        assert any(fragment in n for n in names), fragment
    assert "sdk" in names
    legacy = sum(1 for n in names if kernels_parse(n) is not None and legacy_form(kernels_parse(n)))
    explicit = sum(1 for n in names if kernels_parse(n) is not None and not legacy_form(kernels_parse(n)))
    assert legacy > 1000 and explicit > 1000
    twins = 0
    for case, answer in zip(cases, answers):
        accepted = [kernels_parse(d["variant"]) for d in answer["decisions"] if d["accepted"]]
        twins += any(a == b and legacy_form(a) != legacy_form(b) for a in accepted for b in accepted)
    assert twins > 50, twins
    # A CUDA minor fallback was chosen, no variant fits in some, each kind is chosen somewhere.
    chosen = [a["chosen"] or "" for a in answers]
    assert sum(1 for c in chosen if not c) > 50
    for prefix in ("torch-stable-abi", "torch2", "torch-2", "tvm-ffi", "torch-", "mlx-", "sdk"):
        assert any(c.startswith(prefix) for c in chosen), prefix


def test_same_decisions_as_kernels_0_19_1(differential):
    cases, answers = differential
    failures = []
    for i, (case, ours) in enumerate(zip(cases, answers)):
        problems = compare(case, ours)
        if problems:
            failures.append(f"case {i} env={case['env']} names={case['names']}: " + "; ".join(problems))
    agree = len(cases) - len(failures)
    print(f"{agree} of {len(cases)} cases agree with kernels 0.19.1")
    assert not failures, f"{len(failures)} of {len(cases)} cases differ:\n" + "\n".join(failures[:20])


def test_cli_answers_as_the_cases_mode(differential):
    """The plain CLI, with KERNELHUB_* variables, agrees with the batch mode; exit codes 0/4."""
    cases, answers = differential
    rng = random.Random(SEED + 1)
    with_torch = [i for i, c in enumerate(cases) if c["env"]["torch"]]
    sample = rng.sample(with_torch, N_CLI_SAMPLE)
    sample += [next(i for i in with_torch if answers[i]["chosen"] is None)]
    for i in sample:
        variables = process_variables()
        variables.update(our_variables(cases[i]["env"]))
        result = subprocess.run([str(KERNELHUB), "variants", cases[i]["dir"], "--json"], capture_output=True,
                                text=True, env=variables, timeout=60)
        assert result.returncode == (0 if answers[i]["chosen"] else 4), result.stderr  # 4: no variant runs here
        expected = {k: v for k, v in answers[i].items() if k != "trace"}
        got = json.loads(result.stdout)
        for d in got["decisions"]:  # the variant folders are empty: with GPUs, their fit cannot be checked
            if d["reason"].startswith("compatible (GPU fit not checked: "):
                d["reason"] = "compatible"
        assert got == expected
        text = subprocess.run([str(KERNELHUB), "variants", cases[i]["dir"]], capture_output=True, text=True,
                              env=variables, timeout=60)
        assert text.returncode == result.returncode
        assert f"chosen: {answers[i]['chosen'] or 'none'}" in text.stdout
        shown = re.sub(r" \(GPU fit not checked: [^\n]*\)", "", text.stdout)
        for line in answers[i]["trace"].splitlines():
            assert f"  {line}\n" in shown


# ---- the deliberate differences, by name ----------------------------------------------------------


def test_cuda_torch_without_a_driver_selects_cpu_variants(tmp_path):
    """kernels selects torch's CUDA backend whether or not a driver is there, so on a machine
    without one it picks a CUDA variant that cannot run (or none); we select CPU variants."""
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    names = ["torch215-cxx11-cu128-x86_64-linux", "torch215-cxx11-cpu-x86_64-linux"]
    for name in names:
        (tmp_path / "build" / name).mkdir(parents=True)
    variables = process_variables()
    variables.update(KERNELHUB_OS="linux", KERNELHUB_CPU="x86_64", KERNELHUB_TORCH="2.15.0+cu128",
                     KERNELHUB_CXX11_ABI="1", KERNELHUB_PYTHON="3.12", KERNELHUB_CUDA_DRIVER="none", KERNELHUB_GPUS="")
    result = subprocess.run([str(KERNELHUB), "variants", str(tmp_path), "--json"], capture_output=True, text=True,
                            env=variables, timeout=60)
    assert result.returncode == 0, result.stderr
    ours = json.loads(result.stdout)
    assert ours["chosen"] == "torch215-cxx11-cpu-x86_64-linux"
    assert ours["environment"]["backend"] == "cpu"
    assert "no CUDA driver" in ours["environment"]["backend_reason"]
    env = {"os": "linux", "cpu": "x86_64", "torch": "2.15", "abi": True, "backend": "cuda12.8", "python": "3.12",
           "tvm_ffi": None, "mlx": False, "macos": None}
    trace = kernels_resolve(env, names)
    assert [d.variant.variant_str for d in trace if isinstance(d, kvariants.VariantAccepted)] == [names[0]]
    assert trace[1].reason == "backend (cpu) does not match selected backend (cu128)"


def test_names_kernels_misreads_are_refused(tmp_path):
    """kernels reads `torch-2.015` as 2.15 (and `torch` as `torch-`), then fetches build/<the
    name it prints>, which is not the folder listed; it reads numbers of any size. We refuse both
    with a typed error (never a wraparound) and pick from the other variants."""
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    misread = {
        "torch-2.015-cxx11-cpu-cpython-3.9-abi3-x86_64-linux": "leading zero",
        "torch2015-cxx11-cpu-x86_64-linux": "leading zero",
        "torch-2.15-cxx11-cpu-cpython-3.09-abi3-x86_64-linux": "leading zero",
        "torch-2.15-cuda-12.08-cpython-3.9-abi3-x86_64-linux": "leading zero",
        "torch": "unknown framework",
    }
    absurd = {
        "torch-2.18446744073709551631-cxx11-cpu-cpython-3.9-abi3-x86_64-linux": "out of range",
        "torch-2.15-cpu-cpython-3.4294967307-abi3-x86_64-linux": "out of range",
        "torch-stable-abi-2.99999999999999999999-cpu-cpython-3.9-abi3-x86_64-linux": "out of range",
        "torch215-cxx11-cu99999999999999999999-x86_64-linux": "out of range",
    }
    for name in [*misread, *absurd, "torch215-cxx11-cpu-x86_64-linux"]:
        (tmp_path / "build" / name).mkdir(parents=True)
        parsed = kernels_parse(name)
        if name in misread:
            assert parsed is not None and parsed.variant_str != name, name  # kernels' misreading
        if name in absurd:
            assert parsed is not None and parsed.variant_str == name, name  # kernels' big integers
    variables = process_variables()
    variables.update(KERNELHUB_OS="linux", KERNELHUB_CPU="x86_64", KERNELHUB_TORCH="2.15", KERNELHUB_CXX11_ABI="1",
                     KERNELHUB_BACKEND="cpu", KERNELHUB_PYTHON="3.12")
    result = subprocess.run([str(KERNELHUB), "variants", str(tmp_path), "--json"], capture_output=True, text=True,
                            env=variables, timeout=60)
    assert result.returncode == 0, result.stderr
    ours = json.loads(result.stdout)
    assert ours["chosen"] == "torch215-cxx11-cpu-x86_64-linux"
    reasons = {d["variant"]: (d["code"], d["reason"]) for d in ours["decisions"]}
    for name, why in {**misread, **absurd}.items():
        code, reason = reasons[name]
        assert code == "unparsable_name" and "is not a build variant name" in reason and why in reason, (name, reason)


def test_what_the_process_can_load_is_an_input(tmp_path):
    """--native-only selects as a C++ process with LibTorch; the cases mode takes any Loadable:
    one without LibTorch considers tvm-ffi builds only, and says so."""
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    names = ["torch-cuda", "torch-universal", "sdk", "tvm-ffi01-cu128-x86_64-linux",
             "torch-2.15-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux", "torch-stable-abi211-cu128-x86_64-linux"]
    for name in names:
        (tmp_path / "build" / name).mkdir(parents=True)
    env = {"os": "linux", "cpu": "x86_64", "torch": "2.15", "abi": True, "backend": "cuda12.8", "python": "3.12",
           "tvm_ffi": "0.1", "mlx": False, "macos": None}
    variables = process_variables()
    variables.update(our_variables(env))
    default = subprocess.run([str(KERNELHUB), "variants", str(tmp_path), "--json"], capture_output=True, text=True,
                             env=variables, timeout=60)
    assert default.returncode == 0 and json.loads(default.stdout)["chosen"] == "torch-stable-abi211-cu128-x86_64-linux"
    native = json.loads(subprocess.run([str(KERNELHUB), "variants", str(tmp_path), "--json", "--native-only"],
                                       capture_output=True, text=True, env=variables, timeout=60).stdout)
    assert native["chosen"] == "torch-stable-abi211-cu128-x86_64-linux"
    reasons = {d["variant"]: d["code"] for d in native["decisions"]}
    assert reasons["torch-cuda"] == reasons["torch-universal"] == "pure_python"
    assert reasons["sdk"] == "sdk_not_loadable" and reasons["tvm-ffi01-cu128-x86_64-linux"] == "tvm_ffi_not_loadable"

    cases = [{"env": dict(env, torch=None), "names": names, "dir": str(tmp_path),
              "loadable": {"libtorch": False, "python": False, "tvm_ffi": True}},
             {"env": env, "names": names, "dir": str(tmp_path),
              "loadable": {"libtorch": True, "python": False, "tvm_ffi": True}}]
    torch_free, with_libtorch = run_cases(tmp_path, cases)
    assert torch_free["chosen"] == "tvm-ffi01-cu128-x86_64-linux"
    for d in torch_free["decisions"]:
        if d["variant"].startswith("torch-stable-abi") or d["variant"].startswith("torch-2."):
            assert d["code"] == "no_libtorch"
            assert d["reason"] == "needs LibTorch, which this process does not have; only tvm-ffi variants load here"
    # With LibTorch and a TVM-FFI loader, tvm-ffi builds rank as kernels ranks them: after torch's.
    assert [d["variant"] for d in with_libtorch["decisions"] if d["accepted"]] == [
        "torch-stable-abi211-cu128-x86_64-linux", "torch-2.15-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
        "tvm-ffi01-cu128-x86_64-linux"]


def test_the_cli_selects_for_the_python_of_the_environment_it_reads(tmp_path):
    """Without KERNELHUB_PYTHON, the Python comes from the environment the torch is in (its
    lib/python3.Xt folder, MLX and tvm_ffi among its packages), read from its files; --python
    names another."""
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.14t" / "site-packages"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "version.py").write_text("__version__ = '2.15.0+cpu'\ncuda = None\nhip = None\n")
    (site / "mlx").mkdir()
    (site / "tvm_ffi").mkdir()
    (site / "tvm_ffi" / "_version.py").write_text("__version__ = version = '0.2.3'\n")
    (venv / "pyvenv.cfg").write_text("home = /nonexistent/bin\nversion = 3.14.0\n")
    names = ["torch215-cxx11-cpu-x86_64-linux", "torch-2.15-cxx11-cpu-cpython-3.15-abi3t-x86_64-linux",
             "tvm-ffi-0.2-cpu-cpython-3.9-abi3-x86_64-linux", "mlx-cpu", "torch-universal"]
    kernel = tmp_path / "kernel"
    for name in names:
        (kernel / "build" / name).mkdir(parents=True)
    variables = {k: v for k, v in process_variables().items() if k not in ("VIRTUAL_ENV",)}
    variables.update(VIRTUAL_ENV=str(venv), KERNELHUB_OS="linux", KERNELHUB_CPU="x86_64", KERNELHUB_CXX11_ABI="1")
    result = subprocess.run([str(KERNELHUB), "variants", str(kernel), "--json"], capture_output=True, text=True,
                            env=variables, timeout=60)
    assert result.returncode == 0, result.stderr
    ours = json.loads(result.stdout)
    environment = ours["environment"]
    assert (environment["python"], environment["python_free_threaded"]) == ("3.14", True)
    assert environment["mlx"] is True and environment["tvm_ffi"] == "0.2"
    reasons = {d["variant"]: d["reason"] for d in ours["decisions"]}
    # Free-threaded 3.14: abi3 is refused, abi3t needs 3.15; the tvm-ffi build is abi3 too.
    assert reasons["torch215-cxx11-cpu-x86_64-linux"] == \
        "abi3 is not supported on free-threaded Python, abi3t is required"
    assert reasons["torch-2.15-cxx11-cpu-cpython-3.15-abi3t-x86_64-linux"] == \
        "Python 3.15 or later is required, system Python version is 3.14"
    # MLX is there: mlx-cpu (a named backend) before torch-universal.
    assert ours["chosen"] == "mlx-cpu"
    assert reasons["torch-universal"] == "compatible"

    told = subprocess.run([str(KERNELHUB), "variants", str(kernel), "--json", "--python", "3.12"],
                          capture_output=True, text=True, env=variables, timeout=60)
    assert told.returncode == 0, told.stderr
    told = json.loads(told.stdout)
    assert (told["environment"]["python"], told["environment"]["python_free_threaded"]) == ("3.12", False)
    assert told["chosen"] == "torch215-cxx11-cpu-x86_64-linux"
    bad = subprocess.run([str(KERNELHUB), "variants", str(kernel), "--python", "three"], capture_output=True,
                         text=True, env=variables, timeout=60)
    assert bad.returncode == 2 and "--python" in bad.stderr


def test_bad_usage_exits_2(tmp_path):
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    for args in ([], [str(tmp_path / "missing")], [str(tmp_path), "--bogus"]):
        result = subprocess.run([str(KERNELHUB), "variants", *args], capture_output=True, text=True,
                                env=process_variables(), timeout=60)
        assert result.returncode == 2, (args, result.stderr)
