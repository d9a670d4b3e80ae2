#!/usr/bin/env python3
"""Every symbol a module imports is exported to it by the kernel source it is for.

usage: check-exports.py KDIR MODULE.ko...

For the trees built from source with `make modules_prepare` (Linux 7.2,
scripts/fetch-source-tree.sh): they have no Module.symvers, so modpost
only warns about an unknown symbol and the module builds, then fails to
load.  Reads the module's undefined symbols and the namespaces it imports
(readelf: any architecture) and the EXPORT_*SYMBOL* uses of KDIR's source
(KDIR/source when the tree was built with O=): tracepoints and static
calls export more than their argument; a file's own wrapper macros
export through them (retpoline.S: GEN(reg) pastes a register name, for
each register of the headers it then includes, every such definition
applied to every such header).  An export to named modules
only (_FOR_MODULES) does not count; one in a namespace counts only if the
module imports it.  Of arch/, only the module's own architecture counts.
Not modelled: exports under #if (counted whatever the .config says).
Prints each import not exported to the module and exits 1; 2 when it
cannot tell.  The exports read are cached beside the trees.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

# EXPORT_SYMBOL(sym), _GPL, _NS(sym, ns), _NS_GPL, _FOR_MODULES(sym, mods),
# EXPORT_TRACEPOINT_SYMBOL(_GPL)(name), EXPORT_PER_CPU_SYMBOL(_GPL)(sym).
# Only whole names: a use with ## is a macro's body, not an export.
EXPORT = re.compile(r"\bEXPORT_(TRACEPOINT_|PER_CPU_|)SYMBOL(_GPL|_NS|_NS_GPL|_FOR_MODULES|"
                    r"_GPL_FOR_MODULES|)\(\s*(\w+)\s*(?:,\s*\"?([\w.:-]*)\"?\s*)?\)")
STATIC_CALL = re.compile(r"\bEXPORT_STATIC_CALL(_TRAMP)?(?:_GPL)?\(\s*(\w+)\s*\)")
DEFINE = re.compile(r"^#define\s+(\w+)\(\s*(\w+)\s*\)(.*)$", re.M)
INCLUDE = re.compile(r"^#include\s+<([\w/.-]+)>", re.M)
SKIP_DIRS = {"Documentation", "tools", "samples", "scripts", ".git"}
ARCHES = {"X86-64": "x86", "AArch64": "arm64"}


def wrappers(text):
    """A file's macros that export their argument, directly or through
    another: {(name, prefix pasted before the argument, "" for none)}.  A
    name may be defined several times (retpoline.S's GEN, once per thunk
    family)."""
    defs = DEFINE.findall(text.replace("\\\n", " "))
    out = set()
    grew = True
    while grew:
        grew = False
        for name, arg, body in defs:
            found = set()
            m = re.search(rf"\bEXPORT_SYMBOL(?:_GPL)?\(\s*(?:(\w+)\s*##\s*)?\b{arg}\s*\)", body)
            if m:
                found.add((name, m.group(1) or ""))
            for w, pre in out:
                m = re.search(rf"\b{w}\(\s*(?:(\w+)\s*##\s*)?\b{arg}\s*\)", body)
                if m:
                    found.add((name, pre + (m.group(1) or "")))
            if found - out:
                out |= found
                grew = True
    return out


def scan_file(path, text, src, arch, exp):
    """Add @text's exports to @exp: {symbol: namespace ("" none)}."""
    for kind, variant, name, extra in EXPORT.findall(text):
        if "FOR_MODULES" in variant:
            continue
        ns = extra if variant in ("_NS", "_NS_GPL") else ""
        if kind == "TRACEPOINT_":
            for n in (f"__tracepoint_{name}", f"__traceiter_{name}",
                      f"__SCK__tp_func_{name}", f"__SCT__tp_func_{name}"):
                exp[n] = ns
        else:
            exp[name] = ns
    for tramp, name in STATIC_CALL.findall(text):
        exp[f"__SCT__{name}"] = ""
        if not tramp:
            exp[f"__SCK__{name}"] = ""
    if "#define" not in text:
        return
    ws = wrappers(text)
    if not ws:
        return
    # Uses of the wrappers here, and in the headers this file includes
    # (GEN-for-each-reg.h is nothing but GEN(rax) ... lines).
    texts = [text]
    for inc in INCLUDE.findall(text):
        for d in (os.path.join(src, "arch", arch, "include"), os.path.join(src, "include")):
            try:
                texts.append(open(os.path.join(d, inc), errors="replace").read())
                break
            except OSError:
                continue
    for t in texts:
        for w, pre in ws:
            for m in re.finditer(rf"^\s*{w}\(\s*(\w+)\s*\)", t, re.M):
                exp[pre + m.group(1)] = ""


unread = []     # files that could not be read: such a scan is not cached


def scan(top, src, arch, exp, skip=()):
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and os.path.join(root, d) not in skip]
        for f in files:
            if not f.endswith((".c", ".S", ".h")):
                continue
            path = os.path.join(root, f)
            try:
                text = open(path, errors="replace").read()
            except OSError:
                unread.append(path)
                continue
            if "EXPORT_" in text:
                scan_file(path, text, src, arch, exp)


def module(ko):
    """(architecture directory, imported symbols, imported namespaces)."""
    def readelf(*args, check=True):
        return subprocess.run(["readelf", *args, ko], capture_output=True, text=True,
                              check=check).stdout
    m = re.search(r"Machine:\s+(.*)", readelf("-hW"))
    arch = next((d for k, d in ARCHES.items() if m and k in m.group(1)), None)
    if not arch:
        raise ValueError(f"unknown machine {m.group(1) if m else '?'}")
    # The name is the last field; the Vis column may hold more than one word.
    syms = sorted({m.group(1) for m in re.finditer(r"\sUND\s+(\S+)\s*$",
                                                   readelf("-sW"), re.M)})
    ns = set(re.findall(r"import_ns=(\S+)", readelf("-p", ".modinfo", check=False)))
    return arch, syms, ns


def cached(src, arch, exp=None):
    """The exports of @src for @arch kept in the cache ($HVNOISE_CACHE,
    ~/.cache/hvnoise), keyed by this script, the source's path and its
    Makefile (a version's unpacked tree, never changed after) and @arch:
    read (None when not there), or written when @exp is given and every
    file could be read."""
    cache = os.environ.get("HVNOISE_CACHE") or os.path.expanduser("~/.cache/hvnoise")
    h = hashlib.sha256(os.path.realpath(src).encode() + arch.encode())
    for f in (__file__, os.path.join(src, "Makefile")):
        try:
            with open(f, "rb") as fh:
                h.update(fh.read())
        except OSError:
            return None
    path = os.path.join(cache, f"exports-{arch}-{h.hexdigest()[:16]}.json")
    if exp is None:
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None
    if unread:
        return exp
    try:
        os.makedirs(cache, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=".exports-")
        with os.fdopen(fd, "w") as f:
            json.dump(exp, f)
        os.replace(tmp, path)
    except OSError:
        pass        # only slower next time
    return exp


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
            print(f"check-exports: cannot read {ko}: {e}", file=sys.stderr)
            return 2
    bad = 0
    common = {}
    for arch in sorted({a for a, _, _ in mods.values()}):
        exp = cached(src, arch)
        if exp is None:
            if not common:
                scan(src, src, arch, common, skip={os.path.join(src, "arch")})
            exp = dict(common)
            scan(os.path.join(src, "arch", arch), src, arch, exp)
            cached(src, arch, exp)
        for ko, (a, imports, nss) in mods.items():
            if a != arch:
                continue
            missing = []
            for s in imports:
                if s not in exp:
                    missing.append(f"{s}, which {src} does not export for {arch}")
                elif exp[s] and exp[s] not in nss:
                    missing.append(f"{s}, exported in namespace {exp[s]}, which it does not "
                                   "import (MODULE_IMPORT_NS)")
            for m in missing:
                print(f"check-exports: {ko} imports {m}")
            print(f"check-exports: {ko} ({arch}): {len(imports) - len(missing)} of "
                  f"{len(imports)} imports exported to it ({len(exp)} exports)")
            bad += len(missing)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
