"""Lock files as kernels 0.19.1 reads them. tests/fixtures/lock_files/verdicts.json says, case by case,
whether kernels 0.19.1 and kernelhub load with a kernels.lock, and at which commit the repo `a/b` is
locked; where the two differ, why. Here kernels 0.19.1's own reader is held to the table (so the
table is the oracle's word, not ours), and so is kernelhub's Python binding; tests/fetch/lockfile_test.cpp
holds the C++ reader to the same table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shim_support import import_shim

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads((ROOT / "tests" / "fixtures" / "lock_files" / "verdicts.json").read_text(encoding="utf-8"))
CASES = TABLE["cases"]
REPO = TABLE["repo"]


def text_of(case: dict) -> str:
    return json.dumps(case["document"]) if "document" in case else case["text"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_kernels_reads_each_lock_file_as_the_table_says(case):
    from kernels._rust import KernelLocks  # kernels 0.19.1 (requirements-dev.txt)

    try:
        locks = KernelLocks.from_json(text_of(case))
    except ValueError:
        assert case["kernels"] == "refuses", "kernels 0.19.1 refuses it"
        return
    assert case["kernels"] == "loads", "kernels 0.19.1 reads it"
    # kernels' get_locked_kernel: the first key of the repo in its sorted map.
    dependency = next((d for d in locks.keys() if d.repo_id == REPO), None)
    commit = str(locks[dependency].commit) if dependency is not None else None
    if case["kernelhub"] == "loads":
        assert commit == case["commit"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_kernelhub_reads_each_lock_file_as_the_table_says(case):
    core = import_shim()._core
    try:
        commit = core.locked_commit(REPO, lock_json=text_of(case), lock_source="kernels.lock")
    except core.CoreError as e:
        code, message = e.args[0], e.args[1]
        if case["kernelhub"] == "refuses":
            assert code == "corrupt_file" and "kernels.lock" in message, e.args
        else:  # read, and `a/b` is not in it
            assert case["commit"] is None and code == "not_found", e.args
        return
    assert case["kernelhub"] == "loads"
    assert commit == case["commit"]
    if case["kernels"] != case["kernelhub"]:
        assert case.get("why"), "a difference from kernels 0.19.1 says why"
