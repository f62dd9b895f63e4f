"""What of huggingface_hub's test suite is out of scope for `kernelhub serve`, and why: the one place.

Every module of the suite's tests/ runs, except those a rule below names; inside a running module,
a test is left out by its markers or by the words of its class and function names. The runner
(hub_client_suite.py) prints these rules with its results; its pytest plugin
(hub_suite_plugin.py) applies them. Nothing here is a test.

Names are cut into words at underscores and capitals (`TestSpaceAPIMocked` -> test, space, api,
mocked; `test_create_inference_endpoint_x` -> ..., inference, endpoint, x), so that a rule for
"space" leaves `namespace` alone.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

# Markers of the suite itself (its pyproject.toml) whose tests cannot run here.
MARKERS = {
    "xet": "needs the Xet storage backend; kernelhub serve speaks LFS (the run sets HF_HUB_DISABLE_XET=1)",
    "production": "runs against huggingface.co itself; this run reaches loopback only",
    "git_lfs": "needs the git-lfs binary and git over HTTP; kernelhub serve has no git endpoint",
}


@dataclass(frozen=True)
class Area:
    """A part of the Hub that `kernelhub serve` does not serve, and how its tests are found."""

    name: str
    why: str
    modules: tuple[str, ...] = ()  # file name globs: the whole module is left out, never imported
    phrases: tuple[tuple[str, ...], ...] = ()  # runs of words in a class or a function name
    within: tuple[str, ...] = ()  # if set, phrases count only in a module or class named with one of these


AREAS = (
    Area("Spaces", "running apps (hardware, secrets, variables, logs, duplication, OAuth sign-in inside an app)",
         modules=("test_oauth.py",), phrases=(("space",), ("spaces",))),
    Area("inference", "inference clients, providers and Inference Endpoints",
         modules=("test_inference_*.py",),
         phrases=(("inference", "endpoint"), ("inference", "endpoints"), ("inference", "catalog"))),
    Area("webhooks", "webhook registration and the webhooks server",
         modules=("test_webhooks_server.py",), phrases=(("webhook",), ("webhooks",))),
    Area("collections", "curated lists of repos on the Hub's web pages", phrases=(("collection",), ("collections",))),
    Area("billing", "accounts and usage billing", phrases=(("billing",),)),
    Area("jobs", "compute jobs, the volumes they mount, and sandboxes that run as jobs",
         modules=("test_jobs_api.py", "test_sandbox.py"),
         phrases=(("job",), ("jobs",), ("volume",), ("volumes",))),
    Area("papers", "the daily papers pages", phrases=(("paper",), ("papers",))),
    Area("user pages", "user and organization profiles, followers", phrases=(("user", "api"), ("overview",),
                                                                            ("followers",), ("following",))),
    Area("buckets", "storage buckets (Xet only)", modules=("test_buckets*.py",),
         phrases=(("bucket",), ("buckets",))),
    Area("discussions UI", "comments, status changes, renames and merges of discussions (docs/SERVER.md)",
         phrases=tuple((w,) for w in ("comment", "rename", "status", "merge", "close", "reopen", "edit")),
         within=("discussion", "discussions")),
    Area("likes", "likes and likers (docs/SERVER.md says why they are not kept)",
         phrases=(("like",), ("likes",), ("likers",), ("unlike",))),
)


def words(name: str) -> list[str]:
    """`TestHfApiInferenceCatalog` -> [test, hf, api, inference, catalog]; params ([...]) dropped."""
    name = name.split("[", 1)[0]
    return [w.lower() for part in name.split("_") for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", part)]


def _has_phrase(seq: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(seq[i:i + n]) == phrase for i in range(len(seq) - n + 1))


def module_area(file_name: str) -> Area | None:
    """The area whose rule leaves out the whole module (`test_oauth.py`), if any."""
    return next((a for a in AREAS if any(fnmatch.fnmatch(file_name, g) for g in a.modules)), None)


def test_area(nodeid: str) -> Area | None:
    """The area whose rule leaves out this test (`tests/test_x.py::TestClass::test_name[param]`), if any."""
    parts = nodeid.split("::")
    module = parts[0].rsplit("/", 1)[-1].removesuffix(".py")
    names = [words(p) for p in parts[1:]]
    for area in AREAS:
        if area.within and not any(w in area.within for w in words(module) + sum(names[:-1], [])):
            continue
        if any(_has_phrase(seq, phrase) for seq in names for phrase in area.phrases):
            return area
    return None


def describe() -> list[str]:
    """The rules, one line each, as the runner prints them."""
    lines = [f"marker `{m}`: {why}" for m, why in MARKERS.items()]
    for a in AREAS:
        rule = []
        if a.modules:
            rule.append("modules " + ", ".join(a.modules))
        if a.phrases:
            said = ", ".join("_".join(p) for p in a.phrases)
            rule.append(f"names with {said}" + (f" (in a {'/'.join(a.within)} module or class)" if a.within else ""))
        lines.append(f"{a.name} ({a.why}): {'; '.join(rule)}")
    return lines
