#!/usr/bin/python3
"""The folders depend on each other in one direction only, and every include of a project
header ("..." or <...>) names it from the project's root. The matrix (README.md, "Layers"):

    folder         may include
    include/       include/
    events/        events/
    record/        record/, events/
    otf2_writer/   otf2_writer/, record/, events/
    lib/           lib/, include/, otf2_writer/, record/, events/
    reader/        reader/, record/, events/
    analysis/      analysis/, reader/, record/, events/
    tools/common/  tools/common/, reader/, record/, events/
    tools/NAME/    tools/NAME/, tools/common/, analysis/, reader/, record/, events/
    tools/*.cpp    the commands' entry headers (the front end dispatches)
    tools/analyze/ tools/analyze/, tools/common/, the commands' entry headers (it runs them
                   as an MPI job)
    tests/, bench/, examples/                                         anything

No command includes another command. A few includes cross on purpose, each with its reason
(ON_PURPOSE below). Fails naming each include against the direction and each include of a
project header not written from the root.

    include_direction_test.py SOURCE_ROOT     check the tree
    include_direction_test.py --self-test     check that planted wrong includes are caught
"""
import os
import re
import sys
import tempfile

LAYERS = {
    "include": {"include"},
    "events": {"events"},
    "record": {"record", "events"},
    "otf2_writer": {"otf2_writer", "record", "events"},
    "lib": {"lib", "include", "otf2_writer", "record", "events"},
    "reader": {"reader", "record", "events"},
    "analysis": {"analysis", "reader", "record", "events"},
    "tools/common": {"tools/common", "reader", "record", "events"},
}
COMMAND_ALLOWED = {"tools/common", "analysis", "reader", "record", "events"}
# (folder, header): allowed although against the layers.
ON_PURPOSE = {
    # One definition of the settings: run checks them as the runtime reads them; prv names them.
    ("tools/run", "lib/settings.hpp"),
    ("tools/prv", "lib/settings.hpp"),
    # recover does at the command line what the ranks do at MPI_Finalize: the writer and the
    # runtime's region table make the same archive.
    ("tools/recover", "otf2_writer/writer.hpp"),
    ("tools/recover", "lib/regions.hpp"),
    # The MPI program that lists MPI_T's variables reads them as the runtime does.
    ("tools/mpit", "lib/mpit_variables.hpp"),
}
OPEN = ("tests", "bench", "examples")
TOPS = ("include", "events", "record", "otf2_writer", "lib", "reader", "analysis", "tools")
GENERATED = {"lib/mpi_functions.hpp",  # written into the build tree by lib/wrappers
             "tools/report/timeline_assets.hpp"}  # by tools/report/embed_assets.py
INCLUDE = re.compile(r'^\s*#\s*include\s+["<]([^">]+)[">]', re.M)
ENTRY = re.compile(r"^tools/[a-z_]+/[a-z_]+_main\.hpp$|^tools/prv/convert\.hpp$|"
                   r"^tools/recover/recover\.hpp$")


def layer_of(rel):
    """The layer a file (or header) belongs to: 'tools/NAME' for a command, 'tools' for the
    front end's own files, the top folder otherwise."""
    parts = rel.split("/")
    if parts[0] == "tools":
        return "tools/" + parts[1] if len(parts) > 2 else "tools"
    return parts[0]


def allowed(source_layer, header):
    to = layer_of(header)
    if (source_layer, header) in ON_PURPOSE:
        return True
    if source_layer in LAYERS:
        return to in LAYERS[source_layer]
    if source_layer == "tools":  # the front end: the commands' entry points
        return bool(ENTRY.match(header)) or to == "tools/common"
    if source_layer == "tools/analyze":  # the MPI job runs commands as the front end does
        return bool(ENTRY.match(header)) or to in ("tools/common", "tools/analyze")
    if source_layer.startswith("tools/"):
        return to == source_layer or to in COMMAND_ALLOWED
    return True


def check(root):
    against, unqualified, files = [], [], 0
    for top in TOPS + OPEN:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith((".c", ".cpp", ".h", ".hpp")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                files += 1
                with open(path, errors="replace") as f:
                    text = f.read()
                source_layer = layer_of(rel)
                for included in INCLUDE.findall(text):
                    project = included.split("/")[0] in TOPS
                    exists = os.path.exists(os.path.join(root, included)) or included in GENERATED
                    if not project:
                        # A bare name that is a project header is an include not from the root.
                        if "/" not in included and os.path.exists(os.path.join(folder, included)):
                            unqualified.append(f"{rel}: \"{included}\"")
                        continue
                    if not exists:
                        unqualified.append(f"{rel}: \"{included}\"")
                        continue
                    if top in OPEN:
                        continue
                    if not allowed(source_layer, included):
                        against.append(f"{rel} ({source_layer}/) includes {included} "
                                       f"({layer_of(included)}/)")
    return files, against, unqualified


def self_test():
    """Plants each kind of wrong include in a small tree and expects the check to name it."""
    plants = {
        "reader/a.hpp": '#include "tools/report/b.hpp"\n',  # a layer above
        "tools/diff/c.cpp": '#include "tools/report/b.hpp"\n',  # another command
        "analysis/d.cpp": "#include <tools/common/e.hpp>\n",  # angle brackets count
        "record/f.hpp": '#include "lib/g.hpp"\n',  # the runtime from the format
        "lib/h.cpp": '#include "g.hpp"\n',  # not from the root
    }
    headers = ["tools/report/b.hpp", "tools/common/e.hpp", "lib/g.hpp"]
    with tempfile.TemporaryDirectory() as root:
        for rel in headers:
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").close()
        for rel, text in plants.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        _, against, unqualified = check(root)
    found = against + unqualified
    missed = [rel for rel in plants if not any(line.startswith(rel) for line in found)]
    if missed or len(found) != len(plants):
        print(f"planted wrong includes not caught: {missed}; found: {found}", file=sys.stderr)
        sys.exit(1)
    print(f"all {len(plants)} planted wrong includes caught")


def main():
    if sys.argv[1] == "--self-test":
        self_test()
        return
    files, against, unqualified = check(sys.argv[1])
    for line in against:
        print(f"against the direction: {line}", file=sys.stderr)
    for line in unqualified:
        print(f"not written from the project's root: {line}", file=sys.stderr)
    if against or unqualified:
        sys.exit(1)
    print(f"{files} files: every include from the project's root, none against the direction")


if __name__ == "__main__":
    main()
