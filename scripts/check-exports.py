#!/usr/bin/env python3
"""Every symbol a module imports is exported by the kernel source it is for.

usage: check-exports.py KDIR MODULE.ko...

For the trees built from source with `make modules_prepare` (Linux 7.2,
scripts/fetch-source-tree.sh): they have no Module.symvers, so modpost
only warns about an unknown symbol and the module builds, then fails to
load.  Reads the module's undefined symbols (readelf: any architecture)
and the EXPORT_*SYMBOL* macros of KDIR's source (KDIR/source when the
tree was built with O=), expanding those that export more than their
argument (tracepoints, static calls) or a family (`name_ ## reg`).  Prints
each import the source does not export and exits 1; 2 when it cannot tell.
"""
import os
import re
import subprocess
import sys

EXPORT = re.compile(r"\bEXPORT_(TRACEPOINT_|PER_CPU_|STATIC_CALL_|)SYMBOL(?:_GPL|_NS|_NS_GPL|"
                    r"_FOR_MODULES|_GPL_FOR_MODULES)?\(\s*(\w+)(\s*##)?")
STATIC_CALL = re.compile(r"\bEXPORT_STATIC_CALL(_TRAMP)?(?:_GPL)?\(\s*(\w+)")
SKIP_DIRS = {"Documentation", "tools", "samples", "scripts", ".git"}


DEFINE = re.compile(r"^#define\s+(\w+)\(\s*(\w+)\s*\)(.*)$", re.M)


def wrapped(text):
    """Exports through a file's own wrapper macros (retpoline.S:
    `#define GEN(reg) __EXPORT_THUNK(__x86_indirect_thunk_ ## reg)`,
    `#define __EXPORT_THUNK(sym) ... EXPORT_SYMBOL(sym)`), as EXPORT's
    (kind, name, paste) tuples."""
    defs = DEFINE.findall(text)
    wrappers = {"EXPORT_SYMBOL"}
    grew = True
    while grew:
        grew = False
        for name, arg, body in defs:
            if name not in wrappers and (
                    re.search(rf"\bEXPORT_\w*SYMBOL\w*\(\s*{arg}\s*\)", body) or
                    any(re.search(rf"\b{w}\(\s*{arg}\s*\)", body) for w in wrappers)):
                wrappers.add(name)
                grew = True
    wrappers.discard("EXPORT_SYMBOL")
    out = []
    for _, arg, body in defs:
        # A wrapper that pastes onto its argument: GEN(reg) exports a family.
        for w in wrappers:
            m = re.search(rf"\b{w}\(\s*(\w+)\s*##\s*{arg}\s*\)", body)
            if m:
                out.append(("", m.group(1), "##"))
    for w in wrappers:
        for m in re.finditer(rf"^\s*{w}\(\s*(\w+)\s*\)", text, re.M):
            out.append(("", m.group(1), ""))
    return out


ARCHES = {"X86-64": "x86", "AArch64": "arm64"}


def scan(top, names, prefixes, skip=()):
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and os.path.join(root, d) not in skip]
        for f in files:
            if not f.endswith((".c", ".S", ".h")):
                continue
            try:
                text = open(os.path.join(root, f), errors="replace").read()
            except OSError:
                continue
            if "EXPORT_" not in text:
                continue
            for kind, name, paste in EXPORT.findall(text) + wrapped(text):
                if paste:
                    prefixes.append(name)
                elif kind == "TRACEPOINT_":
                    names.update((f"__tracepoint_{name}", f"__traceiter_{name}",
                                  f"__SCK__tp_func_{name}", f"__SCT__tp_func_{name}"))
                else:
                    names.add(name)
            for tramp, name in STATIC_CALL.findall(text):
                names.add(f"__SCT__{name}")
                if not tramp:
                    names.add(f"__SCK__{name}")


def module(ko):
    """(architecture directory, imported symbols) of @ko."""
    head = subprocess.run(["readelf", "-hW", ko], capture_output=True, text=True,
                          check=True).stdout
    m = re.search(r"Machine:\s+(.*)", head)
    arch = next((d for k, d in ARCHES.items() if m and k in m.group(1)), None)
    if not arch:
        raise ValueError(f"unknown machine {m.group(1) if m else '?'}")
    out = subprocess.run(["readelf", "-sW", ko], capture_output=True, text=True,
                         check=True).stdout
    return arch, sorted({v[7] for v in (line.split() for line in out.splitlines())
                         if len(v) >= 8 and v[6] == "UND" and v[7]})


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    kdir, kos = sys.argv[1], sys.argv[2:]
    src = os.path.join(kdir, "source") if os.path.exists(os.path.join(kdir, "source")) else kdir
    if not os.path.isdir(os.path.join(src, "kernel")):
        print(f"check-exports: no kernel source at {src}", file=sys.stderr)
        return 2
    mods = {}
    for ko in kos:
        try:
            mods[ko] = module(ko)
        except (OSError, ValueError, subprocess.CalledProcessError) as e:
            print(f"check-exports: cannot read {ko}'s symbols: {e}", file=sys.stderr)
            return 2
    common, common_pre = set(), []
    scan(src, common, common_pre, skip={os.path.join(src, "arch")})
    bad = 0
    for ko, (arch, imports) in mods.items():
        names, prefixes = set(common), list(common_pre)
        scan(os.path.join(src, "arch", arch), names, prefixes)
        missing = [s for s in imports if s not in names and not s.startswith(tuple(prefixes))]
        for s in missing:
            print(f"check-exports: {ko} imports {s}, which {src} does not export for {arch}")
        print(f"check-exports: {ko} ({arch}): {len(imports) - len(missing)} of {len(imports)} "
              f"imports exported ({len(names)} exports)")
        bad += len(missing)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
