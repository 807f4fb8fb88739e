#!/usr/bin/env bash
# drain_portal: a drain read in part by a client never loses its events.
# Two ways clients read a result in part: the extended protocol's Execute
# with a row limit (drivers' server-side cursors, here spoken by a small
# protocol client below), and psycopg's server-side cursor (DECLARE and
# FETCH).  Stopping before the end and committing makes the commit fail and
# every event stays due; reading to the end delivers them.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh
PY=/usr/bin/python3

db=okno_drain_portal
new_db "$db"
book "$db" 1 20
due() { q "$db" "SELECT due_now FROM okno_outbox_status"; }

# wire.py DB STEP...: speaks the protocol over the Unix socket; a step is
# "simple:SQL", "extended:MAXROWS:SQL" (Parse, Bind, Execute with MAXROWS,
# then Sync unless MAXROWS ends in "+", which sends a second Execute
# without a limit first) or "sync".  Prints what came back, one word per
# message kind: "rows=N suspended complete error=SQLSTATE ready=STATUS".
cat >"$work/wire.py" <<'PY'
import os, socket, struct, sys

def msg(kind, body):
    return kind + struct.pack("!I", len(body) + 4) + body

def cstr(s):
    return s.encode() + b"\0"

db, steps = sys.argv[1], sys.argv[2:]
path = os.path.join(os.environ["PGHOST"], ".s.PGSQL." + os.environ.get("PGPORT", "5432"))
s = socket.socket(socket.AF_UNIX)
s.connect(path)
body = struct.pack("!I", 196608) + cstr("user") + cstr(os.environ.get("PGUSER", "postgres")) + cstr("database") + cstr(db) + b"\0"
s.sendall(struct.pack("!I", len(body) + 4) + body)
buf = b""

def read():
    global buf
    while len(buf) < 5 or len(buf) < 1 + struct.unpack("!I", buf[1:5])[0]:
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("connection closed")
        buf += chunk
    n = struct.unpack("!I", buf[1:5])[0]
    kind, body, buf = buf[:1], buf[5:1 + n], buf[1 + n:]
    return kind, body

def until_ready():
    out, rows = [], 0
    while True:
        kind, body = read()
        if kind == b"D":
            rows += 1
            continue
        if rows:
            out.append("rows=%d" % rows)
            rows = 0
        if kind == b"s":
            out.append("suspended")
        elif kind == b"C":
            out.append("complete")
        elif kind == b"E":
            fields = dict((f[:1], f[1:]) for f in body.split(b"\0") if f)
            out.append("error=" + fields[b"C"].decode())
        elif kind == b"Z":
            out.append("ready=" + body.decode())
            return " ".join(out)
        elif kind == b"R" and body[:4] != b"\0\0\0\0":
            raise SystemExit("authentication other than trust")

until_ready()
for step in steps:
    how, _, rest = step.partition(":")
    if how == "simple":
        s.sendall(msg(b"Q", cstr(rest)))
    elif how == "extended":
        limit, _, sql = rest.partition(":")
        more = limit.endswith("+")
        wire = msg(b"P", cstr("") + cstr(sql) + struct.pack("!H", 0))
        wire += msg(b"B", cstr("") + cstr("") + struct.pack("!HHH", 0, 0, 0))
        wire += msg(b"E", cstr("") + struct.pack("!I", int(limit.rstrip("+"))))
        if more:
            wire += msg(b"E", cstr("") + struct.pack("!I", 0))
        s.sendall(wire + msg(b"S", b""))
    print(until_ready())
s.sendall(msg(b"X", b""))
PY
wire() { "$PY" "$work/wire.py" "$@" 2>&1; }

# --- the extended protocol's row limit ---------------------------------------
check "Execute with a row limit of 2 of 10, then Sync: the commit fails" \
	"rows=2 suspended error=24000 ready=I" \
	"$(wire "$db" "extended:2:SELECT * FROM okno_drain(10)")"
check "... and all 20 events are still due" 20 "$(due)"
# (the simple query COMMIT replaces the unnamed portal first: the error
# comes before the commit, and leaves the transaction failed)
check "in a transaction: the COMMIT fails" \
	"complete ready=T|rows=2 suspended ready=T|error=24000 ready=E|complete ready=I" \
	"$(wire "$db" "simple:BEGIN" "extended:2:SELECT * FROM okno_drain(10)" "simple:COMMIT" "simple:ROLLBACK" | paste -sd'|')"
check "... and all 20 events are still due" 20 "$(due)"
check "a new query on the unnamed portal replaces the one read in part: it fails" \
	"complete ready=T|rows=2 suspended ready=T|error=24000 ready=E|complete ready=I" \
	"$(wire "$db" "simple:BEGIN" "extended:2:SELECT * FROM okno_drain(10)" "extended:0:SELECT 1" "simple:ROLLBACK" | paste -sd'|')"
check "... and all 20 events are still due" 20 "$(due)"
check "the rest read by a second Execute: delivered" \
	"rows=2 suspended rows=8 complete ready=I" \
	"$(wire "$db" "extended:2+:SELECT * FROM okno_drain(10)")"
check "... 10 events are left" 10 "$(due)"
check "as many rows asked as the drain returns: delivered" \
	"rows=3 suspended ready=I" \
	"$(wire "$db" "extended:3:SELECT * FROM okno_drain(3)")"
check "... 7 events are left" 7 "$(due)"
check "no row limit: delivered" \
	"rows=2 complete ready=I" \
	"$(wire "$db" "extended:0:SELECT * FROM okno_drain(2)")"
check "... 5 events are left" 5 "$(due)"

# --- psycopg's server-side cursor (DECLARE, FETCH FORWARD n) -----------------
cat >"$work/psycopg_cursor.py" <<'PY'
import sys
import psycopg

db, how = sys.argv[1], sys.argv[2]
with psycopg.connect(dbname=db) as conn:
    cur = conn.cursor(name="relay")
    cur.itersize = 2
    cur.execute("SELECT event_id FROM okno_drain(4)")
    try:
        if how == "some":
            got = len(cur.fetchmany(2))
        else:
            got = sum(1 for _ in cur)
        cur.close()
        conn.commit()
        print("read %d, committed" % got)
    except psycopg.Error as e:
        print("read %d, %s" % (got, e.sqlstate))
PY
check "psycopg, fetchmany(2) of 4, commit: fails" "read 2, 24000" \
	"$("$PY" "$work/psycopg_cursor.py" "$db" some 2>&1)"
check "... and 5 events are still due" 5 "$(due)"
check "psycopg, iterated to the end (2 at a time): delivered" "read 4, committed" \
	"$("$PY" "$work/psycopg_cursor.py" "$db" all 2>&1)"
check "... 1 event is left" 1 "$(due)"
check "okno_verify is empty" "" "$(q "$db" "SELECT * FROM okno_verify()")"
