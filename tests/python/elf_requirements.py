"""What an ELF file asks of the system it runs on, read with readelf: the libraries it needs, the
newest symbol version it needs of each (GLIBC_2.x, GLIBCXX_3.4.x, CXXABI_1.3.x) and the symbols a
shared object exports.

    python tests/python/elf_requirements.py [--max-glibc 2.28] PATH...

prints that for every ELF file under PATH and, with --max-glibc, fails (exit 1) where a file needs
more than a manylinux system of that glibc has: a newer glibc symbol, a libstdc++ newer than GCC 8's
(GLIBCXX_3.4.25, CXXABI_1.3.11), a library outside glibc and the C++ runtime, or (a shared
object other than a lib*.so library) an exported symbol other than a Python module's init.
scripts/release.sh runs it on each artifact before leaving it in dist/; the tests
(test_shim_wheel.py, test_release_cli.py) ask it the same questions of what they installed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# The libraries a manylinux system provides (PEP 600's glibc set, and GCC's C++ runtime).
SYSTEM_LIBRARIES = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libstdc++.so.6", "libgcc_s.so.1",
}
# GCC 8's libstdc++ (the compiler of RHEL 8 and of manylinux_2_28's devtoolset baseline).
GCC8_VERSIONS = {"GLIBCXX": (3, 4, 25), "CXXABI": (1, 3, 11)}


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@dataclass
class ElfRequirements:
    path: Path
    needed: list[str] = field(default_factory=list)
    # the newest version needed of each versioned family: {"GLIBC": (2, 17), "GLIBCXX": (3, 4, 21)}
    newest: dict[str, tuple[int, ...]] = field(default_factory=dict)
    exported: list[str] = field(default_factory=list)
    shared_object: bool = False

    def problems(self, max_glibc: tuple[int, ...]) -> list[str]:
        found = []
        if self.newest.get("GLIBC", ()) > max_glibc:
            found.append(f"needs GLIBC_{'.'.join(map(str, self.newest['GLIBC']))}, "
                         f"newer than {'.'.join(map(str, max_glibc))}")
        for family, limit in GCC8_VERSIONS.items():
            if self.newest.get(family, ()) > limit:
                found.append(f"needs {family}_{'.'.join(map(str, self.newest[family]))}, newer than GCC 8's")
        outside = [lib for lib in self.needed if lib not in SYSTEM_LIBRARIES]
        if outside:
            found.append(f"needs libraries a manylinux system lacks: {outside}")
        # A Python module exports its init alone; a library (lib*.so, the TVM-FFI runtime the CLI
        # tarball ships) exports its API.
        extra = [name for name in self.exported if not name.startswith("PyInit_")]
        if self.shared_object and not self.path.name.startswith("lib") and extra:
            found.append(f"exports {len(extra)} symbols besides PyInit_* (e.g. {extra[:3]})")
        return found


def is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def read(path: Path) -> ElfRequirements:
    out = subprocess.run(["readelf", "-W", "-h", "-l", "-d", "-V", "--dyn-syms", str(path)],
                         capture_output=True, text=True, check=True).stdout
    # A shared object is a DYN file without a program interpreter (a PIE executable has one).
    result = ElfRequirements(path=path, shared_object=bool(re.search(r"Type:\s+DYN", out))
                             and not re.search(r"^\s*INTERP\s", out, re.MULTILINE))
    result.needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out)
    # .gnu.version_r: "  0x0010:   Name: GLIBC_2.14  Flags: none  Version: 3"
    for family, version in re.findall(r"Name: ([A-Z]+)_([0-9.]+)\s+Flags", out):
        if version_tuple(version) > result.newest.get(family, ()):
            result.newest[family] = version_tuple(version)
    # .dynsym: "   12: 0000000000001139    35 FUNC    GLOBAL DEFAULT   14 PyInit__core"
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[0].endswith(":") and fields[4] in ("GLOBAL", "WEAK") \
                and fields[5] in ("DEFAULT", "PROTECTED") and fields[6] != "UND":
            result.exported.append(fields[7].split("@")[0])
    return result


def elf_files(*roots: Path) -> list[Path]:
    files = []
    for root in roots:
        candidates = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
        files += [p for p in candidates if is_elf(p)]
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--max-glibc", help="fail where a file needs more than a manylinux system of this glibc has")
    args = parser.parse_args()
    files = elf_files(*args.paths)
    if not files:
        print(f"no ELF file under {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 1
    failed = False
    for path in files:
        req = read(path)
        newest = ", ".join(f"{family}_{'.'.join(map(str, v))}" for family, v in sorted(req.newest.items()))
        print(f"{path}: needs {' '.join(req.needed) or 'nothing'}; newest versions {newest or 'none'}; "
              f"exports {len(req.exported)}")
        for problem in req.problems(version_tuple(args.max_glibc)) if args.max_glibc else []:
            print(f"  {path.name} {problem}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
