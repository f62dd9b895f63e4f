"""Every environment variable kernelhub reads is an entry of one table
(base/src/environment_variables.cpp, named in base/include/kernelhub/base/environment_variables.hpp;
the test seam's name in base/internal/kernelhub/base/internal/clock.hpp, outside the installed header)
and is read only through it: no product file outside the table's own names a variable in a string
literal or reads the environment itself (getenv, environ; in Python os.environ, os.getenv), and
docs/ENVIRONMENT.md is the table as `kernelhub env --variables --markdown` prints it. Tests,
fuzzers and benchmarks are exempt. The scans need no build; the table's output does."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import KERNELHUB_BIN

ROOT = Path(__file__).resolve().parents[2]
# Where the table's names are constants: the installed header, and the test seam's internal one.
HEADERS = (ROOT / "base/include/kernelhub/base/environment_variables.hpp",
           ROOT / "base/internal/kernelhub/base/internal/clock.hpp")
# The table and the source that reads the process environment into a snapshot.
TABLE_FILES = {
    "base/include/kernelhub/base/environment_variables.hpp",
    "base/internal/kernelhub/base/internal/clock.hpp",
    "base/src/environment_variables.cpp",
    "base/include/kernelhub/base/environment_source.hpp",
    "base/src/environment_source.cpp",
}
CXX_FOLDERS = ("base", "client", "resolver", "loader", "fetch", "kernelhub", "tvm_ffi", "tvm_ffi_loader", "signing", "sigstore",
               "server", "tools", "python/src")
CXX_SUFFIXES = {".cpp", ".hpp", ".h", ".cc"}
PYTHON_PACKAGE = ROOT / "python/src/kernelhub"
PYTHON_TABLE_MODULE = "_environment.py"
# Names of the variable families kernelhub reads: a literal of this form that the table lacks is a
# new variable read past it.
VARIABLE_LIKE = re.compile(r"(KERNELHUB|HF|HUGGINGFACE|HUGGING_FACE|KERNELS|XDG|CUDA)_[A-Z0-9_]+")
# Literals of that form that name no variable: the Python attribute of the kernels version kept.
NOT_VARIABLES = {"KERNELS_COMPATIBLE_VERSION"}
CXX_TOKENS = re.compile(
    r"""(?P<raw>(?<![A-Za-z0-9_])(?:u8|u|U|L)?R"(?P<delim>[^(\s"]*)\((?P<raw_body>.*?)\)(?P=delim)")"""
    r"""|(?P<line_comment>//[^\n]*)|(?P<block_comment>/\*.*?\*/)"""
    r"""|(?P<string>"(?P<body>(?:[^"\\\n]|\\.)*)")|(?P<char>'(?:[^'\\\n]|\\.)*')""",
    re.DOTALL)
READS_ENVIRONMENT = re.compile(r"\b(getenv|secure_getenv|environ)\b")


def table_names() -> set[str]:
    """The names of the headers' constants (every entry of the table has one)."""
    return {name for header in HEADERS
            for name in re.findall(r'inline constexpr std::string_view k\w+ = "([A-Z0-9_]+)";', header.read_text())}


def product_files(suffixes: set[str]):
    for folder in CXX_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in suffixes and path.is_file():
                yield path


def cxx_findings(text: str, rel: str, names: set[str]) -> list[str]:
    """rel:line of each variable-name literal and each read of the environment in C++ `text`."""
    found = []
    code = []  # the text with comments and literals blanked, for the reads
    last = 0
    for token in CXX_TOKENS.finditer(text):
        code.append(text[last:token.start()])
        code.append(re.sub(r"[^\n]", " ", token.group(0)))
        last = token.end()
        literal = token.group("body") if token.group("string") is not None else token.group("raw_body")
        if literal is not None and (literal in names or (VARIABLE_LIKE.fullmatch(literal) and
                                                         literal not in NOT_VARIABLES)):
            line = text.count("\n", 0, token.start()) + 1
            found.append(f'{rel}:{line}: the variable name "{literal}" as a literal (use its env_vars:: constant)')
    code.append(text[last:])
    for number, line in enumerate("".join(code).splitlines(), 1):
        if READS_ENVIRONMENT.search(line):
            found.append(f"{rel}:{number}: reads the environment itself (take an EnvironmentSource)")
    return found


def python_findings(text: str, rel: str, names: set[str]) -> list[str]:
    """The same for Python `text`."""
    found = []
    for node in ast.walk(ast.parse(text, filename=rel)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value in names or (VARIABLE_LIKE.fullmatch(node.value) and node.value not in NOT_VARIABLES)):
            found.append(f'{rel}:{node.lineno}: the variable name "{node.value}" as a literal (use _environment)')
        elif isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "getenvb"):
            found.append(f"{rel}:{node.lineno}: reads the environment itself (os.{node.attr}; use _environment)")
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                alias.name in ("environ", "environb", "getenv", "getenvb") for alias in node.names):
            found.append(f"{rel}:{node.lineno}: imports os's environment (use _environment)")
    return found


def test_no_product_file_outside_the_table_names_a_variable_or_reads_the_environment():
    names = table_names()
    assert len(names) > 40, "the header's constants were not found"
    found = []
    for path in product_files(CXX_SUFFIXES):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in TABLE_FILES:
            found += cxx_findings(path.read_text(errors="replace"), rel, names)
    for path in sorted(PYTHON_PACKAGE.glob("*.py")):
        if path.name != PYTHON_TABLE_MODULE:
            found += python_findings(path.read_text(), path.relative_to(ROOT).as_posix(), names)
    assert not found, "\n".join(found)


def test_the_scan_finds_what_it_forbids():
    """The scanner itself: each way of reading past the table is caught; comments and prose are not."""
    names = table_names()
    cases = {
        'auto v = std::getenv("X");': "reads the environment",
        "extern char** environ;": "reads the environment",
        'if (env("KERNELHUB_TORCH")) {}': '"KERNELHUB_TORCH"',
        'std::string s = "HF_HUB_NEW_SWITCH";': '"HF_HUB_NEW_SWITCH"',
        'auto r = std::regex(R"(KERNELHUB_GPUS)");': '"KERNELHUB_GPUS"',
    }
    for line, expected in cases.items():
        findings = cxx_findings("int f() {\n" + line + "\n}\n", "probe.cpp", names)
        assert len(findings) == 1 and expected in findings[0] and findings[0].startswith("probe.cpp:2:"), (line,
                                                                                                          findings)
    quiet = ('// std::getenv("HF_HOME") is what we never call\nconst char* m = "set HF_HOME to a folder";\n'
             "/* environ */ int environment = 0; const char* u = \"https://x//y\";\n")
    assert cxx_findings(quiet, "quiet.cpp", names) == []
    module = 'import os\nfrom os import environ\nx = os.environ.get("HF_HOME")\ny = os.getenv("Z")\n'
    findings = python_findings(module, "probe.py", names)
    assert sorted(f.split(":")[1] for f in findings) == ["2", "3", "3", "4"], findings


def kernelhub(*args: str) -> str:
    if not KERNELHUB_BIN.exists():
        pytest.skip(f"{KERNELHUB_BIN} not built")
    done = subprocess.run([str(KERNELHUB_BIN), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_docs_environment_md_is_the_table():
    printed = kernelhub("env", "--variables", "--markdown")
    written = (ROOT / "docs/ENVIRONMENT.md").read_text()
    assert written == printed, ("docs/ENVIRONMENT.md differs from the table: run "
                                "`build/bin/kernelhub env --variables --markdown > docs/ENVIRONMENT.md`")


def test_the_table_has_an_entry_for_each_constant_and_masks_tokens():
    entries = json.loads(kernelhub("env", "--variables", "--json"))
    assert {e["name"] for e in entries} == table_names()
    assert all(e["meaning"] and e["default"] and e["read_by"] for e in entries)
    assert {e["name"] for e in entries if e["secret"]} == {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}


def test_variables_shows_values_here_and_never_a_token(tmp_path):
    if not KERNELHUB_BIN.exists():
        pytest.skip(f"{KERNELHUB_BIN} not built")
    env = {"PATH": "/usr/bin:/bin", "HF_HOME": str(tmp_path), "HF_TOKEN": "hf_secret_value_1234"}
    done = subprocess.run([str(KERNELHUB_BIN), "env", "--variables"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"HF_HOME={tmp_path}" in lines
    assert "HF_TOKEN=(set, not shown)" in lines
    assert "hf_secret_value_1234" not in done.stdout
    assert "HF_ENDPOINT unset: https://huggingface.co" in lines
    assert len(lines) == len(table_names())


def test_the_python_package_reads_exactly_its_entries_of_the_table():
    core = pytest.importorskip("kernelhub._core")
    from kernelhub import _environment

    python_entries = {e["name"] for e in core.environment_variables() if "python" in e["read_by"].split(", ")}
    constants = {value for name, value in vars(_environment).items() if name.isupper() and isinstance(value, str)}
    assert constants == python_entries
    assert set(_environment.PINNED_CALL_VARIABLES) <= constants
    with pytest.raises(LookupError, match="HF_HOMEE"):
        _environment.value("HF_HOMEE")


def test_python_reads_the_environment_at_each_call(monkeypatch):
    pytest.importorskip("kernelhub._core")
    from kernelhub import _environment

    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "yes")
    assert _environment.is_truthy(_environment.HF_HUB_DISABLE_PROGRESS_BARS)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "")
    assert _environment.value(_environment.HF_HUB_DISABLE_PROGRESS_BARS) is None
    assert not _environment.is_truthy(_environment.HF_HUB_DISABLE_PROGRESS_BARS)
