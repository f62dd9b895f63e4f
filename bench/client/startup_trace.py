#!/usr/bin/env python3
"""Where a short process's time goes, on a machine with no strace or perf: not a test.

    python3 bench/client/startup_trace.py [--env NAME=VALUE ...] [--min-gap MS] -- COMMAND [ARG ...]

Runs COMMAND once with LD_DEBUG=files (the dynamic linker writes a line to stderr as it maps each
library, runs its initialiser and is asked to dlopen one), stamps every line as it arrives through
the pipe, and prints: when each library was mapped and initialised (ms from the fork), who loaded it
(a program's NEEDED list at start, or a dlopen later), and every gap of at least --min-gap ms between
two lines, with the line after it: the time the program spent in its own code between two
libraries. The command's own stderr lines are stamped too (`--json` output goes to stdout, apart).
Used by torch_free_get.py --trace.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def event(line: str) -> str:
    """A dynamic linker line without its "<pid>:" prefix."""
    return line.split(":", 1)[1].strip() if line[:1].isdigit() and ":" in line else line


def trace(argv: list[str], env: dict, min_gap_ms: float = 1.0) -> str:
    """The timeline of one run of argv, as Markdown-friendly text."""
    env = dict(env, LD_DEBUG="files")
    start = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    stamped: list[tuple[float, str]] = []
    pending = b""
    while True:
        chunk = os.read(process.stderr.fileno(), 65536)
        now = (time.perf_counter() - start) * 1e3
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        stamped.extend((now, line.decode(errors="replace").strip()) for line in lines if line.strip())
    process.wait()
    end = (time.perf_counter() - start) * 1e3
    out = [f"`{' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv))}`: exit "
           f"{process.returncode} at {end:.1f} ms, {len(stamped)} lines from the dynamic linker and the program"]
    out.append("")
    out.append("| ms | event |")
    out.append("|---:|---|")
    needed = [ms for ms, line in stamped if "needed by" in line]
    if needed:
        out.append(f"| {needed[-1]:.1f} | {len(needed)} libraries mapped at start (the program's NEEDED, and theirs) |")
    # The start libraries' initialisers as one row (their last), then every dlopen and what it ran.
    first_dlopen = next((i for i, (_, line) in enumerate(stamped) if "dynamically loaded by" in line), len(stamped))
    inits = [ms for ms, line in stamped[:first_dlopen] if "calling init" in line]
    if inits:
        out.append(f"| {inits[-1]:.1f} | their {len(inits)} initialisers run, main() starts |")
    for ms, line in stamped[first_dlopen:]:
        text = event(line)
        if "dynamically loaded by" in text or text.startswith("calling init"):
            out.append(f"| {ms:.1f} | {text[:150]} |")
    out.append("")
    out.append(f"Gaps of {min_gap_ms:g} ms or more (the process in its own code, or waiting), with the line after:")
    out.append("")
    previous = 0.0
    for ms, line in stamped + [(end, "(exit)")]:
        if ms - previous >= min_gap_ms:
            out.append(f"- {previous:.1f} -> {ms:.1f} ms ({ms - previous:.1f}): {event(line)[:150]}")
        previous = ms
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE added to the environment")
    parser.add_argument("--min-gap", type=float, default=1.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    env = dict(os.environ, **dict(item.split("=", 1) for item in args.env))
    print(trace(command, env, args.min_gap))
    return 0


if __name__ == "__main__":
    sys.exit(main())
