"""The Hub's repo id rules (base/hub_names.hpp), which the client and `kernelhub serve` share, give
huggingface_hub's own `validate_repo_id` verdict on every generated id: valid ones, and near misses
of each rule (96 characters a part and not the whole id, `--`, `..`, `.git`, a leading or trailing
`-` or `.`, non-ASCII letters and digits, empty parts, three parts, control characters).

Ours is asked through kernelhub._core.repo_id_error, in this process; with kernel=True it is the
client's RepoId, which also needs an org."""

from __future__ import annotations

import random
import string

import pytest
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id
from shim_support import import_shim

SEED = 20261204
WORD = string.ascii_letters + string.digits + "_"
INNER = WORD + "-."
# Characters a part must not have, or that only some rules refuse: non-ASCII letters and digits
# (Unicode `\w`, which huggingface_hub's ASCII regex refuses), space, control bytes, path and URL
# punctuation.
FOREIGN = ["é", "文", "ß", "٣", "１", "\u00a0", " ", "\t", "\n", "\x00", "\x7f", "@", "#", "+", "~", "\\", ":", "%", "'"]


@pytest.fixture(scope="module")
def core():
    return import_shim()._core


def theirs(repo_id: str) -> bool:
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        return False
    return True


def part(rng: random.Random, length: int) -> str:
    """A part of `length` characters that passes every per-part rule."""
    if length == 1:
        return rng.choice(WORD)
    middle = ""
    while len(middle) < length - 2:
        c = rng.choice(INNER)
        if c in "-." and middle[-1:] == c:  # no `--` or `..`
            continue
        middle += c
    return rng.choice(WORD) + middle + rng.choice(WORD)


def mutate(rng: random.Random, text: str) -> str:
    """One near miss of `text`: a character inserted, replaced or removed, or a rule's pattern added."""
    where = rng.randrange(len(text) + 1)
    kind = rng.randrange(7)
    if kind == 0:
        return text[:where] + rng.choice(FOREIGN) + text[where:]
    if kind == 1 and text:
        where = min(where, len(text) - 1)
        return text[:where] + rng.choice(INNER + "/") + text[where + 1 :]
    if kind == 2 and text:
        where = min(where, len(text) - 1)
        return text[:where] + text[where + 1 :]
    if kind == 3:
        return text[:where] + rng.choice(["--", "..", "-.", ".-", "_-", "/"]) + text[where:]
    if kind == 4:
        return rng.choice(["-", ".", "_", "/", ".git", "-a"]) + text
    if kind == 5:
        return text + rng.choice(["-", ".", "_", "/", ".git", ".gitx", ".GIT", "git", "a.git"])
    return text.replace("/", rng.choice(["//", "/.git/", "", "/-", ".git/"]), 1)


def generated_ids() -> list[str]:
    rng = random.Random(SEED)
    ids = ["", "/", "a", "a/b", "a/b/c", "/a", "a/", "//", "a//b", "_", "_/_", "-", ".", "a.git", "a.git/b", "a/b.git",
           "a/.git", ".git", "a.gitb", "a/b.git.c", "a/b-.c", "a/b.-c", "café", "a/文件夹", "a/b\n", "a/b ", " a/b"]
    # Lengths: 95, 96, 97 a part, alone and beside a short or a full part; the whole id at 95-97 and far beyond.
    for n in (1, 2, 94, 95, 96, 97, 98, 200):
        for other in (1, 5, 96, 97):
            ids += [part(rng, n), part(rng, other) + "/" + part(rng, n), part(rng, n) + "/" + part(rng, other)]
    for whole in (95, 96, 97, 98, 150, 193, 194):
        ns = part(rng, min(96, whole - 2))
        ids.append(ns + "/" + part(rng, max(1, whole - len(ns) - 1)))
    # Valid ids of every size, then near misses of each.
    valid = []
    for _ in range(1500):
        name = part(rng, rng.choice([rng.randint(1, 12), rng.randint(1, 96)]))
        valid.append(name if rng.random() < 0.2 else part(rng, rng.randint(1, 96)) + "/" + name)
    ids += valid
    for _ in range(3000):
        text = rng.choice(valid)
        for _ in range(rng.choice([1, 1, 2, 3])):
            text = mutate(rng, text)
        ids.append(text)
    # Short random strings over an alphabet that hits every rule.
    alphabet = "ab_-./é \n" + "."
    ids += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(1500)]
    return ids


def test_repo_id_rules_agree_with_huggingface_hub(core):
    ids = generated_ids()
    disagree = []
    valid = 0
    for repo_id in ids:
        expected = theirs(repo_id)
        valid += expected
        why = core.repo_id_error(repo_id)
        if (why is None) != expected:
            disagree.append(f"{repo_id!r}: huggingface_hub {'accepts' if expected else 'refuses'}, ours says {why!r}")
        kernel_why = core.repo_id_error(repo_id, kernel=True)
        if (kernel_why is None) != (expected and "/" in repo_id):
            disagree.append(f"{repo_id!r} as a kernel repo: ours says {kernel_why!r}")
    print(f"{len(ids)} ids ({valid} valid): {len(ids) - len(disagree)} agree with huggingface_hub")
    # Both sides of every rule are reached.
    assert 1000 < valid < len(ids) - 1000
    assert not disagree, f"{len(disagree)} of {len(ids)} differ:\n" + "\n".join(disagree[:20])


def test_a_refused_id_says_the_rule_it_breaks(core):
    assert core.repo_id_error("a" * 97 + "/b") == "`" + "a" * 97 + "/b` is not a valid repo id: its namespace is " \
        "longer than 96 characters"
    assert core.repo_id_error("acme/norm.git") == "`acme/norm.git` is not a valid repo id: it must not end with `.git`"
    assert core.repo_id_error("acme/a\nb") == "`acme/a\\x0ab` is not a valid repo id: only ASCII letters, digits, " \
        "`-`, `_` and `.` are allowed"
    assert core.repo_id_error("norm", kernel=True).endswith("it has no `/`; a kernel lives under an org (expected "
                                                            "org/name, e.g. kernels-community/activation)")
