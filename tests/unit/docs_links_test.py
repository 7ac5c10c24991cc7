#!/usr/bin/python3
"""Every relative link in README.md and docs/*.md names a file of the checkout, and every
`#anchor` one of the target's headings (GitHub's spelling: lower case, spaces to hyphens,
punctuation dropped): moved or renamed documentation must not leave dead links behind.

    docs_links_test.py REPO
"""
import glob
import os
import re
import sys


def anchors(path):
    with open(path) as f:
        heads = re.findall(r"^#+ (.+)$", f.read(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def main():
    repo = sys.argv[1]
    pages = [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "*.md")))
    failures, links = [], 0
    for page in pages:
        with open(page) as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue  # a web address
            links += 1
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            name = os.path.relpath(page, repo)
            if not os.path.exists(full):
                failures.append(f"{name}: link to {target}: no such file")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                failures.append(f"{name}: link to {target}: no such heading")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"{links} links in {len(pages)} pages resolve")


if __name__ == "__main__":
    main()
