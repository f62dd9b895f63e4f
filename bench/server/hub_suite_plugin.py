"""pytest plugin loaded into huggingface_hub's own test suite by hub_client_suite.py (not a test).

It records, for every test, its outcome and whether it tried to reach a host other than loopback
(huggingface.co fixtures, production endpoints): such a test cannot be run here and is left out of
the score. Resolving an outside host fails at once, so those tests do not wait for timeouts.
The result goes to the JSON file named by KERNELHUB_SUITE_RESULTS:
    {"<nodeid>": {"outcome": "passed|failed|skipped", "outside": ["host", ...], "message": "..."}}
"""

from __future__ import annotations

import json
import os
import socket

import pytest


def _removed_in_this_client(name: str, version: str):
    # The suite (1.29.0.dev0) imports a few names that huggingface_hub 2.x removed; a test that
    # calls one fails without the server (it is then counted as server-independent).
    def stand_in(*args, **kwargs):
        raise NotImplementedError(f"`{name}` is not in huggingface_hub {version}")

    return stand_in


def pytest_configure(config):
    # After pytest-env has set the suite's variables: huggingface_hub reads them when imported.
    import huggingface_hub.hf_api

    for name in ("repo_type_and_id_from_hf_id",):
        if not hasattr(huggingface_hub.hf_api, name):
            setattr(huggingface_hub.hf_api, name, _removed_in_this_client(name, huggingface_hub.__version__))

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0.0.0.0", ""}
_results: dict[str, dict] = {}
_current: list[str] = []
_real_getaddrinfo = socket.getaddrinfo


def _guarded_getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host or "")
    if name not in _LOOPBACK and not name.startswith("127."):
        if _current:
            _results.setdefault(_current[-1], {}).setdefault("outside", []).append(name)
        raise socket.gaierror(socket.EAI_NONAME, f"{name}: outside hosts are not reachable in this run")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.getaddrinfo = _guarded_getaddrinfo
_real_connect = socket.socket.connect


def _recording_connect(self, address):
    # Whether a test reached the server at all: one that fails without a single connection fails
    # for reasons of its own (the client), whatever the server does.
    if _current and isinstance(address, tuple):
        _results.setdefault(_current[-1], {})["contacted"] = True
    return _real_connect(self, address)


socket.socket.connect = _recording_connect


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    _current.append(item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    entry = _results.setdefault(item.nodeid, {})
    entry["seconds"] = round(entry.get("seconds", 0.0) + report.duration, 2)
    # A test fails if any phase fails; it passes only if its call phase passed.
    if report.failed:
        entry["outcome"] = "failed"
        text = str(report.longrepr) if report.longrepr else ""
        entry["message"] = text.strip().splitlines()[-1][:300] if text.strip() else ""
    elif report.skipped and entry.get("outcome") != "failed":
        entry["outcome"] = "skipped"
    elif report.when == "call" and report.passed and entry.get("outcome") != "failed":
        entry["outcome"] = "passed"


def pytest_runtest_logfinish(nodeid, location):
    if _current and _current[-1] == nodeid:
        _current.pop()


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("KERNELHUB_SUITE_RESULTS")
    if path:
        with open(path, "w") as f:
            json.dump(_results, f, indent=1, sort_keys=True)
