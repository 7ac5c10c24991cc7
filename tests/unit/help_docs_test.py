#!/usr/bin/python3
"""Every command's --help is what docs/commands.md says it is: the docs hold each help text
verbatim under a heading `## perusetrace COMMAND`, one per command that `perusetrace --help`
lists, and nothing else. A help text changed without its docs (or the other way round), a
command without a section or a section of a command that went away all fail.

    help_docs_test.py PERUSETRACE DOCS/commands.md [--update]

--update rewrites the help blocks of DOCS/commands.md from the program (then review the diff).
"""
import re
import subprocess
import sys

FENCE = "```"


def run_help(exe, *args):
    done = subprocess.run([exe, *args, "--help"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        sys.exit(f"{exe} {' '.join(args)} --help: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout.rstrip("\n")


def commands(top_help):
    """The command names `perusetrace --help` lists under 'commands:'."""
    block = top_help.split("commands:\n", 1)
    if len(block) != 2:
        sys.exit(f"'perusetrace --help' lists no commands:\n{top_help}")
    names = []
    for line in block[1].splitlines():
        m = re.match(r"^  ([a-z]+)\s{2,}\S", line)
        if m:
            names.append(m.group(1))
        elif line.strip() == "":
            break
    return names


def sections(doc):
    """{title: help block} for each `## `perusetrace ...`` heading: the first fenced block below
    it, before the next heading."""
    out, lines, i = {}, doc.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^## `(perusetrace(?: [a-z]+)?)`$", lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and lines[i] != FENCE and not lines[i].startswith("## "):
            i += 1
        if i < len(lines) and lines[i] == FENCE:
            end = lines.index(FENCE, i + 1) if FENCE in lines[i + 1:] else len(lines)
            out[m.group(1)] = "\n".join(lines[i + 1:end])
            i = end + 1
    return out


def main():
    exe, path = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    top = run_help(exe)
    want = {"perusetrace": top}
    for name in commands(top):
        want[f"perusetrace {name}"] = run_help(exe, name)
    with open(path) as f:
        doc = f.read()
    have = sections(doc)
    if update:
        for title, text in want.items():
            if title in have:
                doc = doc.replace(f"{FENCE}\n{have[title]}\n{FENCE}", f"{FENCE}\n{text}\n{FENCE}", 1)
            else:
                doc += f"\n## `{title}`\n\n{FENCE}\n{text}\n{FENCE}\n"
        with open(path, "w") as f:
            f.write(doc)
        print(f"{path}: {len(want)} help texts written; sections of no command: "
              f"{sorted(set(have) - set(want)) or 'none'}")
        return
    failures = []
    for title, text in want.items():
        if title not in have:
            failures.append(f"{path} has no section '## `{title}`' with its --help")
        elif have[title] != text:
            old, new = have[title].splitlines(), text.splitlines()
            first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b),
                         min(len(old), len(new)))
            failures.append(
                f"`{title} --help` differs from {path} from line {first + 1}:\n"
                f"    docs:    {old[first] if first < len(old) else '(ends)'}\n"
                f"    program: {new[first] if first < len(new) else '(ends)'}")
    for title in sorted(set(have) - set(want)):
        failures.append(f"{path} documents `{title}`, which `perusetrace --help` does not list")
    if failures:
        print("\n".join(failures) + f"\n(tests/unit/help_docs_test.py {exe} {path} --update "
              "rewrites the blocks)", file=sys.stderr)
        sys.exit(1)
    print(f"{len(want)} help texts match {path}")


if __name__ == "__main__":
    main()
