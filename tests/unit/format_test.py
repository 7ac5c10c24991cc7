#!/usr/bin/python3
"""Every C and C++ file of the project is formatted as .clang-format says (clang-format
--dry-run -Werror); fails naming the files that are not.

    format_test.py SOURCE_ROOT
"""
import os
import subprocess
import sys

DIRS = ("include", "bench", "events", "examples", "lib", "otf2_writer", "record", "reader",
        "analysis", "tests", "tools")
EXTENSIONS = (".c", ".cpp", ".h", ".hpp")


def main():
    root = sys.argv[1]
    files = []
    for top in DIRS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(EXTENSIONS)]
    if not files:
        sys.exit(f"no C or C++ file under {root}: wrong source root?")
    run = subprocess.run(["clang-format", "--dry-run", "-Werror", *files], capture_output=True,
                         text=True)
    if run.returncode != 0:
        bad = sorted({line.split(":")[0] for line in run.stderr.splitlines()
                      if ": error:" in line})
        print(f"{len(bad)} of {len(files)} files are not formatted (clang-format -i FILE):",
              file=sys.stderr)
        for path in bad:
            print(f"  {os.path.relpath(path, root)}", file=sys.stderr)
        sys.exit(1)
    print(f"{len(files)} files formatted as .clang-format says")


if __name__ == "__main__":
    main()
