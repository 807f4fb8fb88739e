#!/usr/bin/env bash
# structure: the code's layout is the one docs/DESIGN.md ("The code")
# draws. src/ is grouped by directory, one header per group saying what the
# group owns and may call; src/okno.c is the module entry only; every
# #include of a group's header and every call of a function another group
# defines follows an arrow of DESIGN.md's list, and the arrows have no
# cycle; DESIGN.md's table names, for each SQL function of the install
# script, the one file that defines its C symbols; no C file in src/ or
# relay/ is longer than 700 lines, and no function longer than 80 (the few
# that still are may not grow, and are listed until they get named steps).
# Prints one "ok - ..." or "not ok - ..." line per check.
# Usage: structure.sh [TREE] (default: this checkout)
set -u
top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1

python3 - <<'PY'
import glob, os, re

def check(desc, cond, why=""):
    print(("ok - " if cond else "not ok - ") + desc)
    if not cond and why:
        print("#   " + why)

MAX_LINES = 700

design = open("docs/DESIGN.md").read()
m = re.search(r"^## The code\n(.*?)^## ", design, re.S | re.M)
section = m.group(1) if m else ""
m = re.search(r"```text\n(.*?)```", section, re.S)
arrows = {}
for line in (m.group(1) if m else "").splitlines():
    a = re.match(r"^(\S+)\s+->\s*(.*)$", line)
    if a:
        arrows[a.group(1)] = [x.strip() for x in a.group(2).split(",") if x.strip()]
check("DESIGN.md's \"The code\" lists the groups' arrows", "okno.c" in arrows and len(arrows) > 2,
      "found %r" % arrows)
groups = sorted(k for k in arrows if k != "okno.c")

# the arrows have no cycle
state, cycle = {}, []
def visit(g, path):
    if state.get(g) == 1:
        cycle.append(" -> ".join(path + [g]))
        return
    if state.get(g) == 2:
        return
    state[g] = 1
    for h in arrows.get(g, []):
        visit(h, path + [g])
    state[g] = 2
for g in arrows:
    visit(g, [])
check("the groups' arrows have no cycle", not cycle, "; ".join(cycle))
unknown = sorted({h for v in arrows.values() for h in v if h not in arrows})
check("every arrow points at a listed group", not unknown, "unknown: %s" % unknown)

# src/ holds okno.c, compat.h and the groups' directories, nothing else
top_files = sorted(os.listdir("src"))
extra = [f for f in top_files
         if not (f in ("okno.c", "compat.h") or f in groups or f.endswith((".o", ".bc")))]
check("src/ holds okno.c, compat.h and one directory per group", not extra, "also: %s" % extra)
missing = [g for g in groups if not os.path.isdir(os.path.join("src", g))]
check("every listed group has its directory under src/", not missing, "missing: %s" % missing)

# one header per group, saying what it owns and may call
bad = []
for g in groups:
    hs = sorted(glob.glob("src/%s/*.h" % g))
    own = "src/%s/%s.h" % (g, g)
    if g == "pure":
        continue                       # plain C headers, one per helper
    if hs != [own]:
        bad.append("%s has %s" % (g, hs))
        continue
    text = open(own).read()
    if "Owns:" not in text or "May call:" not in text:
        bad.append("%s says neither Owns: nor May call:" % own)
check("each group has one header, which says what it owns and may call", not bad, "; ".join(bad))

# the files
def group_of(path):
    parts = path.split("/")
    return parts[1] if len(parts) == 3 else "okno.c"

files = sorted(glob.glob("src/*.c") + glob.glob("src/*/*.c") + glob.glob("src/*/*.h"))
text = {f: open(f).read() for f in files}

def strip_comments(s):
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', s)

# pure C needs no PostgreSQL
bad = [f for f in files if group_of(f) == "pure" and re.search(r'#include\s+"(postgres|fmgr|[a-z]+/)', text[f])]
check("src/pure includes no PostgreSQL or group header", not bad, "offenders: %s" % bad)

# includes follow the arrows
bad = []
for f in files:
    g = group_of(f)
    for inc in re.findall(r'^#include\s+"([a-z_]+)/[a-z_]+\.h"', text[f], re.M):
        if inc in arrows and inc != g and inc not in arrows.get(g, []):
            bad.append("%s includes %s/" % (f, inc))
check("every #include of a group's header follows an arrow", not bad, "; ".join(bad))

# calls follow the arrows: a function one group defines, called in another
defined = {}
for f in files:
    if not f.endswith(".c"):
        continue
    for name in re.findall(r"^(?!static\b)[A-Za-z_][\w \t\*]*\n(okno_\w+)\(", text[f], re.M):
        defined.setdefault(name, set()).add(f)
dups = {n: sorted(v) for n, v in defined.items() if len(v) > 1}
check("no function is defined twice", not dups, "%r" % dups)
bad = set()
for f in files:
    g = group_of(f)
    body = strip_comments(text[f])
    for name in set(re.findall(r"\b(okno_\w+)\s*\(", body)):
        for d in defined.get(name, ()):
            h = group_of(d)
            if h != g and h not in arrows.get(g, []):
                bad.add("%s calls %s (%s)" % (f, name, d))
check("every call of another group's function follows an arrow", not bad, "; ".join(sorted(bad)))

# okno.c is the module entry only
entry = strip_comments(text.get("src/okno.c", ""))
funcs = re.findall(r"^[A-Za-z_][\w \t\*]*\n(\w+)\(", entry, re.M)
m = re.search(r"^_PG_init\(void\)\n\{(.*?)^\}", entry, re.S | re.M)
calls = re.findall(r"\b(\w+)\s*\(", m.group(1)) if m else []
inits = ["okno_%s_init" % g for g in arrows.get("okno.c", [])]
check("src/okno.c has PG_MODULE_MAGIC and defines _PG_init alone",
      "PG_MODULE_MAGIC;" in entry and funcs == ["_PG_init"] and "PG_FUNCTION_INFO_V1" not in entry,
      "defines %s" % funcs)
check("_PG_init calls each group's init, then MarkGUCPrefixReserved",
      calls == inits + ["MarkGUCPrefixReserved"], "calls %s" % calls)

# the SQL functions' table
rows = {}
for line in section.splitlines():
    r = re.match(r"^\|\s*(.*?)\s*\|\s*`(src/[^`]+)`\s*\|$", line)
    if r:
        # (a parenthesis says where the function is used: the views)
        for fn in re.findall(r"`(okno_\w+)`", re.sub(r"\(.*?\)", "", r.group(1))):
            rows.setdefault(fn, []).append(r.group(2))
script = open("sql/okno.sql").read()
symbols = {}
for st in re.split(r"\bCREATE\b", script):
    m = re.match(r"\s+(?:OR REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+@extschema@\.(\w+)", st)
    c = re.search(r"AS 'MODULE_PATHNAME', '(\w+)'", st)
    if m and c:
        symbols.setdefault(m.group(1), set()).add(c.group(1))
info = {}
for f in files:
    for s in re.findall(r"PG_FUNCTION_INFO_V1\((\w+)\)", text[f]):
        info.setdefault(s, []).append(f)
bad = []
for fn, syms in sorted(symbols.items()):
    where = rows.get(fn, [])
    if len(where) != 1:
        bad.append("%s: %d rows" % (fn, len(where)))
        continue
    for s in sorted(syms):
        if info.get(s) != [where[0]]:
            bad.append("%s: %s is in %s, not %s" % (fn, s, info.get(s), where[0]))
check("DESIGN.md names, for each of the install script's C functions (%d), the file that starts it"
      % len(symbols), len(symbols) > 20 and not bad, "; ".join(bad))
stale = sorted(set(rows) - set(symbols))
check("DESIGN.md's table names no function the install script lacks", not stale, "%s" % stale)

# one direct-access layer: only base/direct.c scans an index of a table or
# inserts a row without a plan (catalog scans, systable_*, are PostgreSQL's)
DIRECT_CALLS = r"\b(okno_index_beginscan|index_beginscan|index_getnext_slot|ExecSimpleRelationInsert|ExecInitResultRelation|ExecOpenIndices)\("
direct = sorted("%s: %s" % (f, ", ".join(sorted(set(re.findall(DIRECT_CALLS, text[f])))))
                for f in files if f != "src/base/direct.c" and f != "src/compat.h"
                and re.search(DIRECT_CALLS, re.sub(r"/\*.*?\*/", "", text[f], flags=re.S)))
check("only src/base/direct.c scans an index or inserts a row without a plan", not direct,
      "; ".join(direct))

# file length
long_ = []
for f in sorted(glob.glob("src/*.c") + glob.glob("src/*/*.c") + glob.glob("relay/*.c")):
    n = open(f).read().count("\n")
    if n > MAX_LINES:
        long_.append("%s (%d)" % (f, n))
check("no C file in src/ or relay/ is longer than %d lines" % MAX_LINES, not long_, ", ".join(long_))

# function length: the lines between a function's opening and closing
# brace, each at the start of a line (the layout pgindent keeps)
MAX_FUNCTION = 80
# functions still longer, each with the length it may not exceed; a
# function split into named steps leaves the list
LONGER = {
}
lengths = {}
for f in sorted(glob.glob("src/*.c") + glob.glob("src/*/*.c") + glob.glob("relay/*.c")):
    name, start = None, None
    for i, line in enumerate(open(f).read().split("\n")):
        m = re.match(r"^([A-Za-z_]\w*)\(", line)
        if m:
            name = m.group(1)
        elif line.startswith("{") and name is not None:
            start = i
        elif line.startswith("}") and start is not None:
            lengths["%s %s" % (f, name)] = i - start - 1
            name, start = None, None
over = ["%s (%d)" % (k, n) for k, n in sorted(lengths.items())
        if n > LONGER.get(k, MAX_FUNCTION)]
check("no function in src/ or relay/ is longer than %d lines (%d listed ones no longer than they were)"
      % (MAX_FUNCTION, len(LONGER)), len(lengths) > 300 and not over, ", ".join(over))
gone = sorted(k for k in LONGER if lengths.get(k, 0) <= MAX_FUNCTION)
check("every listed function is still longer than %d lines" % MAX_FUNCTION, not gone,
      "take off the list: %s" % ", ".join(gone))
PY
