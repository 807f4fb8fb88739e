#!/usr/bin/env python3
"""bench/profile_idempotent.py DIR: PROFILE.md from the `perf script`
outputs that `tools/bench profile-idempotent` (bench/profile_idempotent.sh)
left in DIR: where scenario 8's loops spend their CPU time, one call per
transaction, in µs per call.

Each sample (a call stack) is put in the first part below whose marker
functions it holds (so the parts add up to the whole); a part's µs per call
is its samples ÷ the sampling rate ÷ the loop's calls.  Static functions of
Debian's stripped postgres and plpgsql.so do not resolve; they count for
their named callers, which is why the PL/pgSQL statements of the baseline
are grouped by the functions they call.  Standard library only."""

import collections
import os
import re
import sys

D = sys.argv[1]
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def load(path):
    samples, cur = [], None
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if cur is not None:
                    samples.append(cur)
                cur = None
                continue
            if not line[0].isspace():
                cur = []
                continue
            m = FRAME.match(line)
            if m and cur is not None:
                sym, dso = m.group(1), os.path.basename(m.group(2))
                sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
                if sym == "[unknown]" or sym.startswith("0x"):
                    sym = f"[{dso}]"
                cur.append(sym)
    if cur:
        samples.append(cur)
    return samples


SQL_PARSE = {"pg_parse_query", "raw_parser", "pg_analyze_and_rewrite_withcb", "pg_analyze_and_rewrite_fixedparams",
             "pg_analyze_and_rewrite_varparams", "parse_analyze_withcb", "parse_analyze_fixedparams",
             "pg_rewrite_query", "QueryRewrite", "check_sql_fn_retval", "prepare_sql_fn_parse_info",
             "transformStmt", "transformTopLevelStmt",
             # a BEGIN ATOMIC body: read back from its stored node tree
             "stringToNode", "nodeRead", "parseNodeString", "AcquireRewriteLocks"}
SQL_PLAN = {"pg_plan_query", "pg_plan_queries", "planner", "standard_planner"}

# (label, test on the stack's set of symbols and its count of PL/pgSQL
# calls); first match wins
PARTS = [
    ("the loop's cursor, made holdable at the first COMMIT (once per loop)",
     lambda s, n: "PersistHoldablePortal" in s),
    ("COMMIT, and the next transaction's start (mostly waking the WAL writer: kill(), SIGURG)",
     lambda s, n: bool(s & {"CommitTransactionCommand", "StartTransactionCommand", "SPI_commit",
                            "SPI_start_transaction", "CommitTransaction"})),
    ("handler in SQL: parse, analyze and rewrite its body, or read back a BEGIN ATOMIC body's stored tree "
     "(every transaction on PostgreSQL ≤ 17)",
     lambda s, n: "fmgr_sql" in s and bool(s & SQL_PARSE)),
    ("handler in SQL: plan its body (every transaction on PostgreSQL ≤ 17)",
     lambda s, n: "fmgr_sql" in s and bool(s & SQL_PLAN)),
    ("handler in SQL: run the INSERT (executor start, run, end)",
     lambda s, n: "fmgr_sql" in s),
    ("handler in PL/pgSQL: run the INSERT (its plan cached for the backend)",
     lambda s, n: "okno_handler_call" in s),
    ("okno: the request's fingerprint (RFC 8785 form, SHA-256)",
     lambda s, n: bool(s & {"okno_request_fingerprint", "okno_canonical_json_text"})),
    ("okno: the key's lock",
     lambda s, n: bool(s & {"okno_lock_key", "okno_operation_lock_tag"})),
    ("okno: the key's lookup (index scan of okno_key)",
     lambda s, n: "okno_op_key_lookup" in s),
    ("okno: the key's tombstone (index probe of okno_key_tombstone)",
     lambda s, n: bool(s & {"okno_check_expired", "okno_key_expired"})),
    ("okno: the key's row (insert into okno_key, its index)",
     lambda s, n: "okno_op_key_insert" in s),
    ("okno: the rest (arguments, the handler's check, claims)",
     lambda s, n: bool(s & {"okno_idempotent", "okno_idempotent_result"})),
    ("PL/pgSQL function: the fingerprint (request::text, convert_to, sha256)",
     lambda s, n: n >= 2 and bool(s & {"jsonb_out", "sha256_bytea", "pg_convert_to", "pg_convert",
                                       "pg_cryptohash_update", "pg_cryptohash_final"})),
    ("PL/pgSQL function: the lock (pg_advisory_xact_lock, hashtextextended)",
     lambda s, n: n >= 2 and bool(s & {"pg_advisory_xact_lock_int8", "hashtextextended"})),
    ("PL/pgSQL function: its statements' executor (SELECT of the key, the INSERTs)",
     lambda s, n: n >= 2 and bool(s & {"standard_ExecutorStart", "standard_ExecutorRun", "standard_ExecutorEnd",
                                       "ExecutorStart", "ExecutorRun", "ExecutorEnd", "standard_ExecutorFinish"})),
    ("PL/pgSQL function: the rest (interpreter, plan cache, expressions)",
     lambda s, n: n >= 2),
    ("the loop: the procedure's cursor, PERFORM, its arguments",
     lambda s, n: True),
]

KINDS = [
    ("okno_sql", "okno_idempotent, SQL handler, new key"),
    ("okno_sql_atomic", "okno_idempotent, SQL handler (BEGIN ATOMIC), new key"),
    ("okno_plpgsql", "okno_idempotent, PL/pgSQL handler, new key"),
    ("plpgsql", "PL/pgSQL baseline, new key"),
    ("handler_sql", "the SQL handler alone"),
    ("handler_sql_atomic", "the BEGIN ATOMIC handler alone"),
    ("handler_plpgsql", "the PL/pgSQL handler alone"),
    ("okno_replay", "okno_idempotent, replay"),
    ("plpgsql_replay", "PL/pgSQL baseline, replay"),
    ("empty", "empty loop"),
]

meta = {}
if os.path.exists(os.path.join(D, "profile_meta.tsv")):
    with open(os.path.join(D, "profile_meta.tsv")) as f:
        for ln in f:
            p = ln.rstrip("\n").split("\t")
            meta[p[0]] = p[1:]
HZ = float(meta.get("hz", ["4999"])[0])

cols, per = [], {}
for kind, label in KINDS:
    path = os.path.join(D, f"{kind}.perf.txt")
    m = meta.get(kind)
    if not os.path.exists(path) or not m or len(m) < 3 or not m[0]:
        continue
    calls, cpu_ns = int(m[0]), int(m[1])
    samples = load(path)
    counts = collections.Counter()
    for smp in samples:
        s = set(smp)
        n = smp.count("plpgsql_call_handler")
        for lbl, test in PARTS:
            if test(s, n):
                counts[lbl] += 1
                break
    cols.append((kind, label))
    wal = None
    if len(m) >= 5 and "/" in m[3] and "/" in m[4]:
        def lsn(x):
            hi, lo = x.split("/")
            return (int(hi, 16) << 32) + int(lo, 16)
        wal = (lsn(m[4]) - lsn(m[3])) / calls
    per[kind] = {"calls": calls, "cpu_us": cpu_ns / calls / 1000, "samples": len(samples), "wal": wal,
                 "us": {lbl: c / HZ / calls * 1e6 for lbl, c in counts.items()}}

L = []
w = L.append
w("# Where okno_idempotent's time goes, one call per transaction")
w("")
w("Made by `tools/bench profile-idempotent` (bench/profile_idempotent.sh, bench/profile_idempotent.py): "
  "`perf record -g` (cpu-clock sampling at " + f"{HZ:.0f}" + " Hz, frame pointers) on the backend of each of "
  "scenario 8's loops (bench/idempotent.sql: a procedure that makes one call and COMMITs, "
  "synchronous_commit off), after its warm-up calls. Every sample is put in the first part whose "
  "functions are on its stack, so a column adds up to the loop's CPU per call; µs = samples ÷ rate ÷ "
  "calls. perf's own cost is included (compare the measured row). PostgreSQL is Debian's stripped "
  "build: static functions count for their named callers.")
w("")
if "okno_so" in meta:
    w(f"okno.so profiled: md5 {meta['okno_so'][0]}, work tree at commit {meta.get('git', ['?'])[0]}; "
      f"{meta.get('postgres', ['?'])[0]}.")
    w("")
if cols:
    w("| µs per call | " + " | ".join(label for _, label in cols) + " |")
    w("|---" + "|---:" * len(cols) + "|")
    for lbl, _ in PARTS:
        if not any(per[k]["us"].get(lbl) for k, _ in cols):
            continue
        w(f"| {lbl} | " + " | ".join(f"{per[k]['us'].get(lbl, 0):.1f}" for k, _ in cols) + " |")
    w("| **sampled, in all** | " + " | ".join(f"**{sum(per[k]['us'].values()):.1f}**" for k, _ in cols) + " |")
    w("| measured CPU per call (bench.cpu_ns(), perf running) | "
      + " | ".join(f"{per[k]['cpu_us']:.1f}" for k, _ in cols) + " |")
    w("| calls, samples | " + " | ".join(f"{per[k]['calls']}, {per[k]['samples']}" for k, _ in cols) + " |")
    w("| WAL bytes per call | " + " | ".join("–" if per[k]["wal"] is None else f"{per[k]['wal']:.0f}"
                                           for k, _ in cols) + " |")
    w("")
    sql = per.get("okno_sql", {}).get("us", {})
    replan = sum(v for k, v in sql.items() if k.startswith("handler in SQL: parse") or k.startswith("handler in SQL: plan"))
    if replan:
        w(f"The SQL handler's body is parsed, analyzed and planned again in every transaction: "
          f"{replan:.1f} µs of okno_idempotent's {sum(sql.values()):.1f} µs per call here. PostgreSQL 15 to 17 "
          "keep a SQL function's plan in its FmgrInfo for one transaction only (fmgr_sql rebuilds its cache "
          "when the local transaction id changes); PostgreSQL 18 keeps it in the plan cache. A body in "
          "BEGIN ATOMIC form is not parsed again but read back from its stored node tree (stringToNode), "
          "which costs about as much, and planned again. A PL/pgSQL handler's plan is cached for the "
          "backend.")
        w("")
    w("COMMIT: with synchronous_commit off, a commit that leaves a full page of WAL unwritten wakes the "
      "WAL writer (SetLatch, a kill() of SIGURG to its process), which is expensive in this virtual "
      "machine and varies from loop to loop; the WAL row shows what each kind writes per call.")
    w("")

with open(os.path.join(D, "PROFILE.md"), "w") as f:
    f.write("\n".join(L) + "\n")
print(f"wrote {os.path.join(D, 'PROFILE.md')}")
