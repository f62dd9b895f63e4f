"""Selection on aarch64 equals kernels 0.19.1 on aarch64, each told the machine the way it learns it
on a GH200, never handed it as an argument:

- ours: the aarch64 `kernelhub variants --cases` under qemu, without KERNELHUB_CPU or KERNELHUB_OS:
  the machine from uname, which qemu-aarch64 answers as an aarch64 kernel does;
- theirs: kernels' own resolve_variants, which reads the machine from platform.machine() (made to
  say "aarch64", as on that machine: the one thing of this process changed) and the torch, tvm-ffi
  and Python of this process (torch 2.15 with the C++11 ABI, tvm-ffi 0.1, Python 3.11); the
  backend kernels picks itself (CUDA 13.2 from torch), or CPU when asked.

Candidates: generated mixes of aarch64 and x86_64 names in both forms (legacy and explicit, often
both names of one build, often one build for both machines), with the noarch, sdk and unparsable
names of the x86_64 differential (test_resolver_differential.py), whose comparison is used as is:
accepted set, first choice, whole order, every reason and trace line.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from unittest import mock

import pytest

from aarch64_support import aarch64_program, run_aarch64

import test_resolver_differential as differential  # noqa: E402  (skips without kernels)

kvariants = differential.kvariants
SEED = 20261206
N_CASES = 1000

# This process, as kernels detects it (see the module docstring), and our variables for the same.
PROCESS = {"os": "linux", "cpu": "aarch64", "torch": "2.15", "abi": True, "python": "3.11", "tvm_ffi": "0.1",
           "mlx": False, "macos": None}
BACKENDS = {None: "cuda13.2", "cpu": "cpu"}  # kernels' backend argument: ours


def the_process_is_as_assumed():
    import torch
    import tvm_ffi

    assert torch.__version__.startswith("2.15.") and torch.compiled_with_cxx11_abi()
    assert tvm_ffi.__version__.startswith("0.1.")
    assert not kvariants.has_mlx and kvariants.has_torch and kvariants.has_tvm_ffi
    assert differential.kbackends._select_backend(None).variant_str == "cu132"


def mixed_names(rng: random.Random, env: dict) -> list[str]:
    """The x86_64 differential's names for an aarch64 machine, half of the builds for both machines."""
    names = set(differential.random_names(rng, env))
    for name in list(names):
        for ours, theirs in (("-aarch64-linux", "-x86_64-linux"), ("-x86_64-linux", "-aarch64-linux")):
            if name.endswith(ours) and rng.random() < 0.5:
                names.add(name[: -len(ours)] + theirs)
    return sorted(names)


def generate_cases(root: Path) -> list[dict]:
    rng = random.Random(SEED)
    cases = []
    for i in range(N_CASES):
        backend = rng.choice(list(BACKENDS))
        env = dict(PROCESS, backend=BACKENDS[backend])
        names = mixed_names(rng, env)
        directory = root / f"case{i:04d}"
        for name in names:
            (directory / "build" / name).mkdir(parents=True)
        cases.append({"env": env, "names": names, "dir": str(directory), "kernels_backend": backend})
    return cases


def kernels_on_aarch64(case: dict):
    """kernels 0.19.1's decision trace as resolve_variants makes it on an aarch64 Linux machine."""
    variants = [v for v in map(differential.kernels_parse, case["names"]) if v is not None]
    with mock.patch("platform.machine", return_value="aarch64"), mock.patch("platform.system", return_value="Linux"):
        _, trace = kvariants.resolve_variants(variants, case["kernels_backend"])
    return trace


@pytest.fixture(scope="module")
def cases_and_answers(tmp_path_factory):
    kernelhub = aarch64_program("kernelhub")
    the_process_is_as_assumed()
    tmp = tmp_path_factory.mktemp("aarch64-differential")
    cases = generate_cases(tmp)
    variables = {k: v for k, v in differential.our_variables(PROCESS | {"backend": "cpu"}).items()
                 if k not in ("KERNELHUB_CPU", "KERNELHUB_OS", "KERNELHUB_BACKEND")}
    (tmp / "cases.json").write_text(json.dumps(
        [{"dir": c["dir"], "env": {**variables, "KERNELHUB_BACKEND": c["env"]["backend"]}} for c in cases]))
    env = differential.process_variables()
    r = run_aarch64(kernelhub, "variants", "--cases", str(tmp / "cases.json"), env=env)
    assert r.returncode == 0, r.stderr
    answers = json.loads(r.stdout)
    assert len(answers) == len(cases)
    return cases, answers


def test_the_cases_mix_both_machines_in_both_forms(cases_and_answers):
    cases, answers = cases_and_answers
    names = [n for c in cases for n in c["names"]]
    for machine in ("-aarch64-linux", "-x86_64-linux"):
        parsed = [differential.kernels_parse(n) for n in names if n.endswith(machine)]
        assert sum(1 for v in parsed if v is not None and differential.legacy_form(v)) > 200, machine
        assert sum(1 for v in parsed if v is not None and not differential.legacy_form(v)) > 200, machine
    both = sum(1 for c in cases for n in c["names"]
               if n.endswith("-aarch64-linux") and n.replace("-aarch64-linux", "-x86_64-linux") in c["names"])
    assert both > 200
    assert {c["kernels_backend"] for c in cases} == {None, "cpu"}
    chosen = [a["chosen"] for a in answers if a["chosen"]]
    assert sum(1 for c in chosen if c.endswith("-aarch64-linux")) > 100
    assert not [c for c in chosen if c.endswith("-x86_64-linux")]
    # Ours detected the machine itself: the environment it reports is aarch64 Linux.
    assert {(a["environment"]["cpu"], a["environment"]["os"]) for a in answers} == {("aarch64", "linux")}


def test_same_decisions_as_kernels_0_19_1_on_aarch64(cases_and_answers):
    cases, answers = cases_and_answers
    failures = []
    for i, (case, ours) in enumerate(zip(cases, answers)):
        problems = differential.compare(case, ours, trace=kernels_on_aarch64(case))
        if problems:
            failures.append(f"case {i} backend={case['env']['backend']} names={case['names']}: " + "; ".join(problems))
    print(f"{len(cases) - len(failures)} of {len(cases)} aarch64 cases agree with kernels 0.19.1")
    assert not failures, f"{len(failures)} of {len(cases)} cases differ:\n" + "\n".join(failures[:20])
