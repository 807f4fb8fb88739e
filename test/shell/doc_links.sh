#!/usr/bin/env bash
# doc_links: every Markdown link to a heading, [..](#anchor) or
# [..](file.md#anchor), in the project's documents (the top-level *.md,
# docs/, relay/, examples/, test/) names a file that exists and a heading
# in it (GitHub's anchors: lowercase, punctuation dropped, spaces to
# hyphens, -1, -2 ... for repeats). Prints "ok - ..." / "not ok - ...".
# Usage: doc_links.sh [TREE] (default: this checkout)
set -u
top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1

python3 - <<'PY'
import glob, os, re

files = sorted(set(glob.glob("*.md") + glob.glob("docs/**/*.md", recursive=True)
                   + glob.glob("relay/**/*.md", recursive=True)
                   + glob.glob("examples/**/*.md", recursive=True)
                   + glob.glob("test/**/*.md", recursive=True)))

def lines(path):
    fence = False
    for i, l in enumerate(open(path, encoding="utf-8"), 1):
        if l.startswith("```"):
            fence = not fence
            continue
        if not fence:
            yield i, l

def anchors(path):
    seen, out = {}, set()
    for _, l in lines(path):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", l)
        if not m:
            continue
        h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2))
        a = re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else "%s-%d" % (a, n))
    return out

cache, bad, total = {}, [], 0
for f in files:
    for i, l in lines(f):
        for target in re.findall(r"\]\(([^)\s]*#[^)\s]*)\)", l):
            path, a = target.split("#", 1)
            if re.match(r"^[a-z]+:", path):
                continue
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            total += 1
            if not os.path.exists(dest):
                bad.append("%s:%d: %s: no such file" % (f, i, target))
                continue
            if dest not in cache:
                cache[dest] = anchors(dest)
            if a not in cache[dest]:
                bad.append("%s:%d: %s: no such heading" % (f, i, target))
print(("ok - " if total > 50 else "not ok - ") + "the documents have their links to headings (%d)" % total)
print(("ok - " if not bad else "not ok - ") + "every link to a heading names one that exists")
for b in bad:
    print("#   " + b)
PY
