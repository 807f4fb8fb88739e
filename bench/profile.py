#!/usr/bin/env python3
"""bench/profile.py DIR: PROFILE.md from the `perf script` outputs that
`tools/bench profile` (bench/profile.sh) left in DIR.

Each sample is a call stack.  A function's inclusive share is the fraction
of samples with that function anywhere on the stack; its self share, the
fraction with it at the leaf.  Static functions of Debian's stripped
postgres do not resolve; they count for their named callers."""

import collections
import os
import re
import sys

D = sys.argv[1]
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def load(path):
    samples = []
    cur = None
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
                cur.append((sym, dso))
    if cur:
        samples.append(cur)
    return samples


meta = {}
if os.path.exists(os.path.join(D, "profile_meta.tsv")):
    with open(os.path.join(D, "profile_meta.tsv")) as f:
        for ln in f:
            p = ln.rstrip("\n").split("\t")
            meta[p[0]] = p[1:]

# okno's steps (okno.so's exported functions), labelled when known; any
# other okno.so function found in the samples is listed too, so the table
# follows the code as it changes
STEP_LABELS = {
    "okno_check_key": "1. key rule",
    "okno_parse_payload": "2. payload: jsonb walk, RFC 3339 parsing",
    "okno_fingerprint_hex": "3. canonical text + SHA-256",
    "okno_lock_request": "4. advisory lock on actor:key",
    "okno_spi_connect": "SPI_connect",
    "okno_lookup_key": "5. key lookup (SPI SELECT)",
    "okno_check_references": "6. actor and resource exist (SPI SELECT)",
    "okno_lock_resource": "6. resource lock",
    "okno_insert_booking": "6. the INSERT statement(s) (SPI)",
    "okno_booking_card": "7. the card (jsonb)",
    "okno_insert_key": "6. INSERT idempotency (SPI)",
    "okno_event_payload": "6. event payload (jsonb)",
    "okno_insert_event": "6. INSERT outbox event (SPI)",
    "okno_notify": "NOTIFY okno_outbox (Async_Notify)",
    "okno_spi_finish": "SPI_finish",
    "okno_plan": "plan lookup (okno_plan)",
    "okno_schema_name": "schema lookup",
}
ROOTS = {"okno_create_booking", "okno_create_booking_result", "create_booking", "create_new"}

# cross-cutting mechanisms, by the exported functions that mark them
MECH = [
    ("executor startup (ExecutorStart: plan tree, ResultRelInfo, triggers, expression init)",
     {"standard_ExecutorStart", "ExecutorStart", "ExecInitNode", "ExecInitModifyTable", "ExecInitQual",
      "ExecBuildProjectionInfo", "ExecInitExprWithParams", "ExecInitExpr", "ExecOpenIndices",
      "InitResultRelInfo", "ExecInitRangeTable"}),
    ("executor end (ExecutorEnd, ExecutorFinish without triggers)",
     {"standard_ExecutorEnd", "ExecutorEnd", "ExecEndNode", "ExecCloseIndices", "FreeExecutorState"}),
    ("plan cache (GetCachedPlan, revalidation)", {"GetCachedPlan", "ReleaseCachedPlan", "CachedPlanIsValid",
                                                   "RevalidateCachedQuery", "CachedPlanAllowsSimpleValidityCheck"}),
    ("CHECK constraints (re-read from the catalog each execution: stringToNode)",
     {"ExecConstraints", "ExecRelCheck", "stringToNode"}),
    ("exclusion check (bookings_no_overlap: GiST search)",
     {"check_exclusion_constraint", "check_exclusion_or_unique_constraint"}),
    ("GiST (insert + search)", {"gistinsert", "gistdoinsert", "gistgettuple", "gistrescan", "gistbeginscan",
                                "range_gist_consistent", "range_gist_penalty", "gistchoose", "gistplacetopage"}),
    ("B-tree (insert + search)", {"btinsert", "_bt_doinsert", "btgettuple", "_bt_search", "_bt_first",
                                  "_bt_check_unique", "btrescan", "btbeginscan"}),
    ("heap insert / fetch", {"heap_insert", "heapam_tuple_insert", "heap_fetch", "heap_hot_search_buffer",
                             "heapam_index_fetch_tuple", "heap_getnext"}),
    ("foreign-key (RI) triggers", {"RI_FKey_check_ins", "RI_FKey_check", "AfterTriggerEndQuery",
                                   "AfterTriggerSaveEvent", "AfterTriggerFireDeferred", "ExecARInsertTriggers"}),
    ("WAL records (XLogInsert)", {"XLogInsert", "XLogInsertRecord", "XLogBeginInsert"}),
    ("locks (relation and advisory: LockAcquire/LockRelease)",
     {"LockAcquireExtended", "LockAcquire", "LockRelease", "LockRelationOid", "UnlockRelationId",
      "LockReleaseAll"}),
    ("snapshots", {"GetSnapshotData", "GetTransactionSnapshot", "PushActiveSnapshot", "PopActiveSnapshot",
                   "GetLatestSnapshot", "RegisterSnapshot", "UnregisterSnapshot"}),
    ("NOTIFY (queue at call, at commit)", {"Async_Notify", "PreCommit_Notify", "AtCommit_Notify",
                                           "SignalBackends", "ProcessCompletedNotifies"}),
    ("JSON (jsonb iterate/build)", {"JsonbIteratorNext", "JsonbIteratorInit", "pushJsonbValue",
                                    "JsonbValueToJsonb", "jsonb_in", "findJsonbValueFromContainer"}),
    ("SHA-256 (cryptohash)", {"pg_cryptohash_create", "pg_cryptohash_init", "pg_cryptohash_update",
                              "pg_cryptohash_final", "pg_cryptohash_free", "pg_sha256_update",
                              "pg_sha256_final"}),
    ("numeric (resource_id)", {"numeric_int4_opt_error", "numeric_eq", "int64_to_numeric", "cmp_numerics"}),
    ("relcache / catcache lookups", {"RelationIdGetRelation", "relation_open", "SearchCatCache1",
                                     "SearchCatCache", "SearchSysCache1", "RelationGetIndexList"}),
    ("memory contexts (palloc, context create/delete/reset)",
     {"palloc", "palloc0", "pfree", "MemoryContextReset", "MemoryContextDelete", "AllocSetContextCreateInternal",
      "MemoryContextAllocZero", "MemoryContextAlloc", "repalloc", "AllocSetReset", "AllocSetDelete"}),
    ("commit (CommitTransaction: WAL flush, lock release, NOTIFY, cleanup)",
     {"CommitTransactionCommand", "CommitTransaction"}),
    ("WAL flush at commit (XLogFlush)", {"XLogFlush", "issue_xlog_fsync"}),
    ("client protocol (parse/bind/execute messages, socket I/O)",
     {"exec_bind_message", "exec_execute_message", "pq_getbyte", "pq_flush", "pq_getmessage",
      "ReadCommand", "pq_putmessage", "secure_read", "secure_write"}),
    ("kernel", {"[kernel.kallsyms]"}),
]


def analyse(samples, root):
    """samples containing root; inclusive/self counts"""
    inroot = [s for s in samples if any(sym == root for sym, _ in s)] if root else samples
    incl = collections.Counter()
    selfc = collections.Counter()
    for s in inroot:
        seen = set()
        for sym, dso in s:
            key = "[kernel.kallsyms]" if dso == "[kernel.kallsyms]" else sym
            if key not in seen:
                incl[key] += 1
                seen.add(key)
        if s:
            sym, dso = s[0]
            selfc[sym if dso != "[kernel.kallsyms]" else f"{sym} [kernel]"] += 1
    return inroot, incl, selfc


def mech_share(inroot, names):
    n = 0
    for s in inroot:
        if any((sym in names) or (dso == "[kernel.kallsyms]" and "[kernel.kallsyms]" in names) for sym, dso in s):
            n += 1
    return n


L = []
w = L.append
w("# Where okno_create_booking's time goes")
w("")
w("Made by `tools/bench profile` (bench/profile.sh, bench/profile.py): `perf record -g` "
  "(cpu-clock sampling, frame pointers) on one backend of a throwaway cluster. PostgreSQL is Debian's "
  "stripped build: exported functions resolve, static ones show as their library and count for their "
  "named callers, so the mechanism shares below are lower bounds. Shares are inclusive (a function "
  "and everything it calls) and overlap; µs are the share times the measured CPU per call.")
w("")


def section(title, path, root, per_call_us, unit):
    if not os.path.exists(path):
        return
    samples = load(path)
    if not samples:
        w(f"## {title}\n\nno samples\n")
        return
    inroot, incl, selfc = analyse(samples, root)
    n = len(inroot)
    w(f"## {title}")
    w("")
    w(f"{len(samples)} samples, {n} of them inside `{root}`" if root else f"{len(samples)} samples")
    if per_call_us:
        w(f" ({unit}: {per_call_us:.1f} µs of CPU per call in total).")
    w("")
    if root == "okno_create_booking":
        okno_fns = collections.Counter()
        for smp in inroot:
            seen = set()
            for sym, dso in smp:
                if dso.startswith("okno") and not sym.startswith("[") and sym not in ROOTS and sym not in seen:
                    okno_fns[sym] += 1
                    seen.add(sym)
        w("okno's own functions (okno.so), inclusive:")
        w("")
        w("| function | what | share of the create | ≈ µs/call |")
        w("|---|---|---:|---:|")
        for fn, c in okno_fns.most_common():
            share = c / n
            us = f"{share * per_call_us:.1f}" if per_call_us else ""
            w(f"| `{fn}` | {STEP_LABELS.get(fn, '')} | {100 * share:.1f}% | {us} |")
        w("")
        # inside the insert statement
        ins = [smp for smp in inroot if any(sym == "okno_insert_booking" for sym, _ in smp)]
        if ins:
            w(f"Inside `okno_insert_booking` ({100 * len(ins) / n:.1f}% of the create), by mechanism:")
            w("")
            w("| mechanism | share of the insert | ≈ µs/call |")
            w("|---|---:|---:|")
            for label, names in MECH:
                c = mech_share(ins, names)
                if c:
                    share = c / len(ins)
                    us = f"{share * len(ins) / n * per_call_us:.1f}" if per_call_us else ""
                    w(f"| {label} | {100 * share:.1f}% | {us} |")
            w("")
        w("The whole create, by mechanism:")
        w("")
    w("| mechanism (inclusive, overlapping) | share | ≈ µs/call |")
    w("|---|---:|---:|")
    for label, names in MECH:
        c = mech_share(inroot, names)
        if c == 0:
            continue
        share = c / n
        us = f"{share * per_call_us:.1f}" if per_call_us else ""
        w(f"| {label} | {100 * share:.1f}% | {us} |")
    w("")
    w("Top functions by self time (leaf of the stack):")
    w("")
    w("| function | self | inclusive |")
    w("|---|---:|---:|")
    for sym, c in selfc.most_common(25):
        base = sym.replace(" [kernel]", "")
        ic = incl.get(base, incl.get("[kernel.kallsyms]", 0) if sym.endswith("[kernel]") else 0)
        w(f"| `{sym}` | {100 * c / n:.1f}% | {100 * ic / n:.1f}% |")
    w("")
    w("Top functions by inclusive time:")
    w("")
    w("| function | inclusive |")
    w("|---|---:|")
    for sym, c in incl.most_common(60):
        if sym.startswith("[") or sym in ("main", "PostmasterMain", "PostgresMain", "__libc_start_call_main",
                                          "__libc_start_main_impl", "_start"):
            continue
        w(f"| `{sym}` | {100 * c / n:.1f}% |")
    w("")


if "okno_so" in meta:
    w(f"okno.so profiled: md5 {meta['okno_so'][0]}, work tree at commit {meta.get('git', ['?'])[0]}.")
    w("")
loop = meta.get("loop", [])
empty = meta.get("loop_empty", [])
per_call = None
if len(loop) >= 3 and loop[0]:
    per_call = int(loop[1]) / int(loop[0]) / 1000
    if len(empty) >= 3 and empty[0]:
        per_call_net = per_call - int(empty[1]) / int(empty[0]) / 1000
    else:
        per_call_net = per_call
    w(f"Loop: {loop[0]} creates in one transaction, {per_call:.1f} µs CPU per call in the loop, "
      f"{per_call_net:.1f} µs without the loop's own cost.")
    w("")
    # the create's own share of the loop is measured by the samples; its µs
    # are that share of the loop's per-call CPU
HZ = float(meta.get("hz", ["4999"])[0])
calls = int(loop[0]) if loop and loop[0] else 0
path = os.path.join(D, "loop.perf.txt")
create_us = None
if os.path.exists(path) and calls:
    _s = load(path)
    _in = [x for x in _s if any(sym == "okno_create_booking" for sym, _ in x)]
    create_us = len(_in) / HZ / calls * 1e6
    w(f"Samples inside okno_create_booking: {len(_in)} at {HZ:.0f} Hz over {calls} calls = "
      f"**{create_us:.1f} µs of CPU per create** (perf's own overhead included); the µs columns below "
      "are shares of that.")
    w("")
section("1. A loop of creates in one transaction (per call, no commit)", path,
        "okno_create_booking", create_us, "okno_create_booking")

for sync in ("on", "off"):
    tps = meta.get(f"pgbench_{sync}", [""])[0]
    path = os.path.join(D, f"pgbench-{sync}.perf.txt")
    if not os.path.exists(path):
        continue
    samples = load(path)
    psecs = float(meta.get(f"pgbench_{sync}", ["", "5"])[1] or 5)
    w(f"## 2. pgbench, 1 client, one create per transaction, synchronous_commit {sync} ({float(tps or 0):.0f} TPS)")
    w("")
    inroot, incl, selfc = analyse(samples, None)
    n = len(inroot)
    tx = float(tps or 0) * psecs
    per_tx = n / HZ / tx * 1e6 if tx else None
    w(f"{n} samples of the backend's CPU over about {psecs:.0f} s, about {tx:.0f} transactions: "
      f"≈ {per_tx:.0f} µs of backend CPU per transaction (idle time — waiting for the WAL flush or "
      "the client — is not sampled). Share of the backend's CPU:" if per_tx else f"{n} samples.")
    w("")
    w("| part of the transaction | share | ≈ µs/transaction |")
    w("|---|---:|---:|")
    for label, names in [("okno_create_booking", {"okno_create_booking"}),
                         ("building the payload argument (bench.payload: format, to_char, jsonb_in)",
                          {"jsonb_in", "text_format", "timestamp_to_char", "timestamptz_to_char"})] + MECH:
        c = mech_share(inroot, names)
        if c:
            us = f"{c / n * per_tx:.1f}" if per_tx else ""
            w(f"| {label} | {100 * c / n:.1f}% | {us} |")
    w("")
    w("Top functions by self time:")
    w("")
    w("| function | self |")
    w("|---|---:|")
    for sym, c in selfc.most_common(20):
        w(f"| `{sym}` | {100 * c / n:.1f}% |")
    w("")

with open(os.path.join(D, "PROFILE.md"), "w") as f:
    f.write("\n".join(L) + "\n")
print(f"wrote {os.path.join(D, 'PROFILE.md')}")
