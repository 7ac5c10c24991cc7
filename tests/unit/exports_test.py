#!/usr/bin/python3
"""libperusetrace exports the MPI functions it wraps (in C, and under the Fortran names of
lib/wrappers/fortran.py), the C library calls it guards or times while it samples
(lib/blocking_calls.cpp, lib/timed_waits.cpp) and the functions of its public C API
(include/perusetrace/*.h), and nothing else.

    exports_test.py LIBRARY WRAPPERS_CPP FORTRAN_WRAPPERS_CPP INTERPOSER_CPP... PUBLIC_HEADER...

Anything else it exported (its own C++ functions, globals, the standard-library template
instances its files use) could be replaced by a symbol of the traced program or of another
library, and every call the library makes to it would go through the PLT.
"""
import re
import subprocess
import sys


def main():
    library, wrappers, fortran = sys.argv[1:4]
    interposers = [a for a in sys.argv[4:] if a.endswith(".cpp")]
    headers = [a for a in sys.argv[4:] if a.endswith(".h")]
    # Every Fortran name is an alias of a hidden wrapper; the aliases are what programs call.
    fortran_names = set(re.findall(r'^\w+ (\w+)\(.*\) __attribute__\(\(alias\(',
                                   open(fortran).read(), re.M))
    if len(fortran_names) < 1000:
        sys.exit(f"{fortran}: only {len(fortran_names)} Fortran names found")
    # A guard the library does not export leaves the C library's call unguarded: a sample
    # signal would cut it short, or its time would be charged to another stack.
    guarded = set()
    for interposer in interposers:
        found = set(re.findall(r'^__attribute__\(\(visibility\("default"\)\)\) \w+ (\w+)\(',
                               open(interposer).read(), re.M))
        if len(found) < 5:
            sys.exit(f"{interposer}: only {sorted(found)} found as exported definitions")
        guarded |= found
    api = set()
    for header in headers:
        # A header's static inline functions are the program's own, not the library's.
        api |= set(re.findall(r"^(?!static )\w[\w ]*\b(perusetrace_\w+)\(", open(header).read(),
                              re.M))
    nm = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True)
    if nm.returncode != 0:
        sys.exit(f"nm -D {library} failed: {nm.stderr.strip()}")
    # "ADDRESS TYPE NAME[@VERSION]"; type A marks a version node, not a symbol.
    rows = [line.split() for line in nm.stdout.splitlines()]
    exported = {row[2].split("@")[0] for row in rows if len(row) == 3 and row[1] != "A"}
    stray = sorted(s for s in exported
                   if not s.startswith("MPI_") and s not in api and s not in guarded
                   and s not in fortran_names)
    hidden = sorted((api | guarded | fortran_names) - exported)
    if hidden:
        sys.exit(f"{library} does not export its public API or guards: {', '.join(hidden)} "
                 "(lib/exports.map, and visibility(\"default\") on the definition)")
    if stray:
        shown = "\n  ".join(stray[:20]) + ("\n  ..." if len(stray) > 20 else "")
        sys.exit(f"{library} exports {len(stray)} symbols that are not MPI functions:\n  {shown}\n"
                 "Build it with gnu_symbol_visibility 'hidden' and lib/exports.map "
                 "(lib/meson.build), and keep the generated wrappers' visibility push(default).")
    # Every wrapper the generator wrote is exported: a hidden one would silently leave the
    # MPI's own function in place. Those under `#ifndef NAME` are absent where mpi.h makes NAME
    # a macro.
    lines = open(wrappers).read().splitlines()
    missing = []
    for i, line in enumerate(lines):
        m = re.match(r"(?:int|double|MPI_\w+) (MPI_\w+)\(.*\) \{$", line)
        if m and m.group(1) not in exported and lines[i - 1] != f"#ifndef {m.group(1)}":
            missing.append(m.group(1))
    if missing:
        sys.exit(f"{library} does not export {len(missing)} of its wrappers ({', '.join(missing[:8])}"
                 f"{', ...' if len(missing) > 8 else ''}): lib/wrappers/gen_wrappers.py must "
                 "keep its visibility push(default) around them")
    print(f"{library}: {len(exported)} symbols exported: MPI functions, {len(fortran_names)} "
          f"Fortran names of them, {len(guarded)} guarded "
          f"blocking calls and the API ({', '.join(sorted(api))})")


if __name__ == "__main__":
    main()
