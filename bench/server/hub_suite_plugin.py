"""pytest plugin loaded into huggingface_hub's own test suite by hub_client_suite.py (not a test).

It applies the scope rules of hub_suite_scope.py (a module of an area left out is not even
imported; a test is deselected by its markers or its names) and records, for every test, its
outcome and whether it tried to reach a host other than loopback (huggingface.co fixtures,
production endpoints): such a test cannot be run here and is left out of the score. Resolving an
outside host fails at once, so those tests do not wait for timeouts. For every module it records
what became of it: left out (and why), failed to import (and the error), or run (how many tests).
The result goes to the JSON file named by KERNELHUB_SUITE_RESULTS:
    {"tests": {"<nodeid>": {"outcome": "passed|failed|skipped", "outside": ["host", ...],
                            "message": "...", "left_out": "marker xet|<area>"}},
     "modules": {"test_x.py": {"left_out": "<area>"} | {"import_error": "..."} | {"collected": N}}}
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket

import pytest

import hub_suite_scope


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


def _key(nodeid: str) -> str:
    # Parameters made of the endpoint (test_fix_hf_endpoint_in_url[http://127.0.0.1:PORT/...]) name
    # the test alike in the stub's run and the server's, whose ports differ.
    endpoint = os.environ.get("HF_ENDPOINT")
    return nodeid.replace(endpoint, "{endpoint}") if endpoint else nodeid


_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0.0.0.0", ""}
_results: dict[str, dict] = {}
_modules: dict[str, dict] = {}
_current: list[str] = []
_real_getaddrinfo = socket.getaddrinfo


def _needed_by_the_test(name: str) -> bool:
    # The Hub's own hosts (fixtures on huggingface.co, production) and bare addresses (the suite's
    # unroutable 10.255.255.1 for timeouts) are what a test needs: without them it cannot run here.
    # Any other host (github.com, which the `hf` CLI asks about a command it does not know) is
    # refused all the same, without leaving the test out: it fails or passes on its own merits.
    if any(name == h or name.endswith("." + h) for h in ("huggingface.co", "hf.co")):
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _guarded_getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host or "")
    if name not in _LOOPBACK and not name.startswith("127."):
        if _current:
            key = "outside" if _needed_by_the_test(name) else "refused_hosts"
            _results.setdefault(_current[-1], {}).setdefault(key, []).append(name)
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


def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        area = hub_suite_scope.module_area(collection_path.name)
        if area:
            _modules[collection_path.name] = {"left_out": area.name}
            return True
    return None


def pytest_collectreport(report):
    # A module that cannot be imported is counted, with its error, never dropped in silence.
    if not report.nodeid.endswith(".py"):
        return
    if report.passed:
        _modules.setdefault(report.nodeid.rsplit("/", 1)[-1], {"collected": 0})  # counted when selected
        return
    if report.failed:
        text = str(report.longrepr).strip() if report.longrepr else ""
        errors = [line for line in text.splitlines() if line.startswith("E ")]
        said = errors[-1][1:].strip() if errors else text.splitlines()[-1] if text else ""
        _modules[report.nodeid.rsplit("/", 1)[-1]] = {"import_error": said[:300]}
    else:  # pytest.skip(allow_module_level=True): the suite itself skips the module here
        said = report.longrepr[-1] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _modules[report.nodeid.rsplit("/", 1)[-1]] = {"skipped": str(said)[:300]}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    kept, dropped = [], []
    for item in items:
        module = item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
        _modules.setdefault(module, {}).setdefault("collected", 0)
        _modules[module]["collected"] += 1
        marker = next((m for m in hub_suite_scope.MARKERS if item.get_closest_marker(m)), None)
        area = None if marker else hub_suite_scope.test_area(item.nodeid)
        if marker or area:
            _results[_key(item.nodeid)] = {"left_out": f"marker {marker}" if marker else area.name}
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    _current.append(_key(item.nodeid))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    entry = _results.setdefault(_key(item.nodeid), {})
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
    if _current and _current[-1] == _key(nodeid):
        _current.pop()


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("KERNELHUB_SUITE_RESULTS")
    if path:
        with open(path, "w") as f:
            json.dump({"tests": _results, "modules": _modules}, f, indent=1, sort_keys=True)
