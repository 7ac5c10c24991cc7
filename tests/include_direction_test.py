#!/usr/bin/python3
"""The folders depend on each other in one direction only, and every include says which folder
its header is in:

    include/      the public C API's headers                          -> nothing else
    events/       what Peruse says: the catalogue, the selection     -> nothing else
    otf2_writer/  OTF2 and the archive's schema (and the records it
                  encodes)                                            -> events/
    lib/          the runtime                                -> include/, events/, otf2_writer/
    tools/        the launcher, converters, report, recover           -> all of the above
    tests/, bench/, examples/                                         -> anything

Fails naming each include against the direction, and each include of a project header that is
not written from the project's root ("lib/record_file.hpp", not "record_file.hpp").

    include_direction_test.py SOURCE_ROOT
"""
import os
import re
import sys

ALLOWED = {
    "include": {"include"},
    "events": {"events"},
    "otf2_writer": {"otf2_writer", "events"},
    "lib": {"lib", "include", "events", "otf2_writer"},
    "tools": {"tools", "lib", "include", "events", "otf2_writer"},
}
OPEN = ("tests", "bench", "examples")
GENERATED = {"lib/mpi_functions.hpp",  # written into the build tree by lib/wrappers
             "tools/report/timeline_assets.hpp"}  # by tools/report/embed_assets.py
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = sys.argv[1]
    against, unqualified, files = [], [], 0
    for top in list(ALLOWED) + list(OPEN):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith((".c", ".cpp", ".h", ".hpp")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                files += 1
                with open(path, errors="replace") as f:
                    text = f.read()
                for included in INCLUDE.findall(text):
                    exists = os.path.exists(os.path.join(root, included)) or included in GENERATED
                    if not exists:
                        unqualified.append(f"{rel}: \"{included}\"")
                        continue
                    to = included.split("/")[0]
                    if top in ALLOWED and to not in ALLOWED[top]:
                        against.append(f"{rel} ({top}/) includes {included} ({to}/)")
    for line in against:
        print(f"against the direction: {line}", file=sys.stderr)
    for line in unqualified:
        print(f"not written from the project's root: {line}", file=sys.stderr)
    if against or unqualified:
        sys.exit(1)
    print(f"{files} files: every include from the project's root, none against the direction")


if __name__ == "__main__":
    main()
