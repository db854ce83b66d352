#!/usr/bin/env python3
"""Write Sightline's wheel: the release binary plus the `sightline` Python package.

    python3 python/build_wheel.py --binary target/dist-stage/sightline --out target/dist

Standard library only (zipfile, hashlib, base64). The wheel follows the binary
distribution format (PEP 427 / PEP 491) the way ruff and uv ship theirs:

    sightline/…                          the Python package (Env, Client, the Gymnasium env)
    sightline-VER.data/scripts/sightline the binary; pip installs it into the scripts
                                         directory (a venv's bin/), next to the interpreter
    sightline-VER.dist-info/METADATA, WHEEL, RECORD

The tag is py3-none-manylinux_2_NN_ARCH: no Python ABI (the package is pure
Python, the binary is a program), and NN is the glibc floor read from the
binary itself: the highest GLIBC_2.NN version its dynamic symbols need
(.gnu.version_r). The libraries it links (DT_NEEDED) must all be ones the
manylinux policy lets a wheel assume; anything else is refused. The version
is the one `BINARY --version` prints.

Reproducible: entries are sorted and dated SOURCE_DATE_EPOCH (default 1980-01-01).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import re
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The libraries PEP 600's manylinux policies let a wheel take from the system
# (auditwheel's policy list, the ones a Rust binary can link).
MANYLINUX_LIBS = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "librt.so.1",
    "libpthread.so.0",
    "libutil.so.1",
    "libgcc_s.so.1",
    "libstdc++.so.6",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}

# e_machine -> the architecture word of a manylinux tag.
ELF_MACHINES = {62: "x86_64", 183: "aarch64"}

SHT_DYNAMIC = 6
SHT_GNU_VERNEED = 0x6FFFFFFE
DT_NEEDED = 1


class ElfFacts:
    """What a wheel tag needs from an ELF executable."""

    def __init__(self, arch: str, needed: list[str], versions: set[str]):
        self.arch = arch
        self.needed = needed
        self.versions = versions

    @property
    def glibc_floor(self) -> tuple[int, int]:
        found = [tuple(int(p) for p in v[len("GLIBC_") :].split(".")[:2]) for v in self.versions if v.startswith("GLIBC_2.")]
        if not found:
            raise SystemExit("build_wheel: the binary needs no GLIBC_2.* symbol version; is it a glibc executable?")
        return max(found)  # type: ignore[return-value]


def read_elf(path: Path) -> ElfFacts:
    data = path.read_bytes()
    if data[:4] != b"\x7fELF":
        raise SystemExit(f"build_wheel: {path} is not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise SystemExit(f"build_wheel: {path} is not a 64-bit little-endian ELF file")
    (e_machine,) = struct.unpack_from("<H", data, 18)
    (e_shoff,) = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 58)
    arch = ELF_MACHINES.get(e_machine)
    if arch is None:
        raise SystemExit(f"build_wheel: unsupported ELF machine {e_machine}")
    sections = []
    for i in range(e_shnum):
        sh = struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
        # name, type, flags, addr, offset, size, link, info, addralign, entsize
        sections.append(sh)

    def string(section_index: int, offset: int) -> str:
        base = sections[section_index][4] + offset
        end = data.index(b"\0", base)
        return data[base:end].decode()

    needed: list[str] = []
    versions: set[str] = set()
    for _, sh_type, _, _, offset, size, link, info, _, _ in sections:
        if sh_type == SHT_DYNAMIC:
            for pos in range(offset, offset + size, 16):
                tag, val = struct.unpack_from("<qQ", data, pos)
                if tag == DT_NEEDED:
                    needed.append(string(link, val))
        elif sh_type == SHT_GNU_VERNEED:
            pos = offset
            for _ in range(info):  # sh_info: the number of Verneed entries
                _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, pos)
                apos = pos + aux
                for _ in range(cnt):
                    _, _, _, name, anext = struct.unpack_from("<IHHII", data, apos)
                    versions.add(string(link, name))
                    apos += anext
                pos += nxt
    if not versions:
        raise SystemExit(f"build_wheel: {path} has no symbol version requirements (.gnu.version_r)")
    return ElfFacts(arch, needed, versions)


def platform_tag(facts: ElfFacts) -> str:
    outside = [lib for lib in facts.needed if lib not in MANYLINUX_LIBS]
    if outside:
        raise SystemExit(f"build_wheel: the binary links libraries a manylinux wheel cannot assume: {outside}")
    major, minor = facts.glibc_floor
    return f"manylinux_{major}_{minor}_{facts.arch}"


def binary_version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout
    m = re.fullmatch(r"sightline (\S+)\s*", out)
    if not m:
        raise SystemExit(f"build_wheel: `{binary} --version` printed {out!r}, not 'sightline VERSION'")
    return m.group(1)


def metadata(version: str) -> str:
    readme = (HERE / "README.md").read_text()
    head = [
        "Metadata-Version: 2.1",
        "Name: sightline",
        f"Version: {version}",
        "Summary: A real browser for AI agents: headless Chromium over CDP as element indexes, page text and actions"
        " (the sightline binary and its Python client)",
        "License: MIT",
        "Requires-Python: >=3.8",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Programming Language :: Rust",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Typing :: Typed",
        "Provides-Extra: gymnasium",
        'Requires-Dist: gymnasium>=1.0; extra == "gymnasium"',
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + readme


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build(binary: Path, out_dir: Path) -> Path:
    facts = read_elf(binary)
    plat = platform_tag(facts)
    version = binary_version(binary)
    tag = f"py3-none-{plat}"
    dist_info = f"sightline-{version}.dist-info"
    data_dir = f"sightline-{version}.data"

    files: list[tuple[str, bytes, int]] = []  # (archive name, bytes, unix mode)
    package = HERE / "sightline"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed"):
            files.append((f"sightline/{path.relative_to(package).as_posix()}", path.read_bytes(), 0o644))
    files.append((f"{data_dir}/scripts/sightline", binary.read_bytes(), 0o755))
    files.append((f"{dist_info}/METADATA", metadata(version).encode(), 0o644))
    wheel = f"Wheel-Version: 1.0\nGenerator: sightline build_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    files.append((f"{dist_info}/WHEEL", wheel.encode(), 0o644))
    record = "\n".join([record_line(n, d) for n, d, _ in files] + [f"{dist_info}/RECORD,,"]) + "\n"
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))

    stamp = time.gmtime(max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800))[:6]
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"sightline-{version}-{tag}.whl"
    for old in out_dir.glob("sightline-*.whl"):
        old.unlink()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | mode) << 16  # a regular file with its permission bits
            z.writestr(info, data, compresslevel=6)
    target.write_bytes(buf.getvalue())
    floor = ".".join(map(str, facts.glibc_floor))
    print(f"build_wheel: {target} (glibc >= {floor}, {facts.arch}, links {' '.join(facts.needed)})")
    return target


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", type=Path, required=True, help="the sightline release binary to ship")
    p.add_argument("--out", type=Path, help="directory the wheel is written to")
    p.add_argument("--print-tag", action="store_true", help="only print the platform tag the binary gets")
    p.add_argument("--print-glibc", action="store_true", help="only print the binary's glibc floor (2.NN)")
    a = p.parse_args()
    if a.print_tag:
        print(platform_tag(read_elf(a.binary)))
        return 0
    if a.print_glibc:
        print(".".join(map(str, read_elf(a.binary).glibc_floor)))
        return 0
    if a.out is None:
        p.error("--out is required")
    build(a.binary, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
