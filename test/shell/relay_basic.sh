#!/usr/bin/env bash
# relay_basic: okno-relay --once hands every due event out exactly once as
# a compact JSON line and marks all of them delivered; the command line
# and the exit codes (--help 0, usage 1, no server 2, no okno 3, stdout
# write failure 4); okno found in another, quoted schema whatever the
# search_path.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_basic
new_db "$db"
book "$db" 1 1000

started=$SECONDS
timeout 120 "$RELAY" --dbname "$db" --once --verbose >"$work/out" 2>"$work/err"
rc=$?
check "--once exits 0 after draining 1,000 events" 0 "$rc"
check "--once prints exactly 1,000 lines" 1000 "$(lines "$work/out")"
echo "# 1,000 events in $((SECONDS - started)) s"

# every line: valid JSON, exactly these keys in this order, compact, the
# event's kind, payload and attempts
bad=$(python3 - "$work/out" <<'PY'
import json, sys
bad = 0
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    line = line.rstrip("\n")
    try:
        ev = json.loads(line)
    except ValueError as e:
        print("line %d: not JSON (%s): %s" % (n, e, line[:200]), file=sys.stderr)
        bad += 1
        continue
    if (not isinstance(ev, dict) or list(ev) != ["event_id", "kind", "payload", "attempts"]
            or ev["kind"] != "booking_created" or ev["attempts"] != 0
            or list(ev["payload"]) != ["booking_id"]
            or not isinstance(ev["payload"]["booking_id"], int)
            or json.dumps(ev, separators=(",", ":"), ensure_ascii=False) != line):
        print("line %d: unexpected: %s" % (n, line[:200]), file=sys.stderr)
        bad += 1
print(bad)
PY
)
check "every line is a compact JSON object {event_id, kind, payload, attempts}" 0 "$bad"

python3 -c '
import json, sys
for line in open(sys.argv[1]):
    ev = json.loads(line)
    print(ev["event_id"], ev["payload"]["booking_id"])
' "$work/out" >"$work/printed" 2>/dev/null
check "each event id is printed exactly once" 1000 "$(cut -d' ' -f1 "$work/printed" | sort -u | wc -l | tr -d ' ')"
check "the printed ids are exactly the outbox's ids" \
	"$(q "$db" "SELECT id FROM outbox ORDER BY id" | md5sum)" \
	"$(cut -d' ' -f1 "$work/printed" | sort | md5sum)"
check "the events come in id order" \
	"$(cut -d' ' -f1 "$work/printed" | md5sum)" \
	"$(cut -d' ' -f1 "$work/printed" | sort | md5sum)"
check "the payloads name bookings 1 .. 1000" \
	"$(seq 1 1000 | md5sum)" "$(cut -d' ' -f2 "$work/printed" | sort -n | md5sum)"
check "all 1,000 events are delivered in the table" "1000/0" \
	"$(q "$db" "SELECT count(*) FILTER (WHERE delivered_at IS NOT NULL) || '/' || count(*) FILTER (WHERE delivered_at IS NULL) FROM outbox")"
check "--verbose reports the count on stderr" 1 \
	"$(grep -c 'delivered 1000, failed 0' "$work/err")"

timeout 30 "$RELAY" --dbname "$db" --once >"$work/out2" 2>"$work/err2"
rc=$?
check "a second --once exits 0 and prints nothing" "0/0" "$rc/$(lines "$work/out2")"

# --- the command line ------------------------------------------------------
"$RELAY" --help >"$work/help" 2>&1
rc=$?
check "--help exits 0" 0 "$rc"
check "--help shows the usage and every exit code" 6 \
	"$(grep -cE '^Usage:|^  [0-4]  ' "$work/help")"

"$RELAY" --no-such-option >/dev/null 2>"$work/usage.err"
check "an unknown option exits 1" 1 $?
check "a usage error names the option and points to --help" 2 \
	"$(grep -cE '^okno-relay: unknown option --no-such-option$|^Try "okno-relay --help"' "$work/usage.err")"
"$RELAY" --batch 0 >/dev/null 2>&1
check "--batch 0 exits 1" 1 $?
"$RELAY" --batch 10001 >/dev/null 2>&1
check "--batch 10001 exits 1" 1 $?
"$RELAY" --poll -1 >/dev/null 2>&1
check "--poll -1 exits 1" 1 $?
"$RELAY" --exec-timeout abc >/dev/null 2>&1
check "--exec-timeout abc exits 1" 1 $?
"$RELAY" --once stray >/dev/null 2>&1
check "a stray argument exits 1" 1 $?

timeout 30 "$RELAY" --dbname "host=$work/no-such-dir port=1 dbname=$db" --once >/dev/null 2>"$work/noserver.err"
rc=$?
check "an unreachable server exits 2" 2 "$rc"
check "... with a message on stderr" 1 "$(grep -c '^okno-relay: cannot connect' "$work/noserver.err")"

nookno=okno_relay_basic_none
"$PGBIN/dropdb" --if-exists --force "$nookno" 2>/dev/null
"$PGBIN/createdb" "$nookno"
DBS+=("$nookno")
timeout 30 "$RELAY" --dbname "$nookno" --once >/dev/null 2>"$work/nookno.err"
rc=$?
check "a database without okno exits 3" 3 "$rc"
check "... saying okno is not installed" 1 "$(grep -c '^okno-relay: okno is not installed' "$work/nookno.err")"
timeout 30 "$RELAY" --dbname "$db" --schema no_such_schema --once >/dev/null 2>&1
check "--schema naming a schema without okno exits 3" 3 $?

# --- okno in another, quoted schema; a search_path that does not have it ---
lab=okno_relay_basic_lab
"$PGBIN/dropdb" --if-exists --force "$lab" 2>/dev/null
"$PGBIN/createdb" "$lab"
DBS+=("$lab")
q "$lab" "CREATE SCHEMA \"Okno Lab\"; CREATE EXTENSION okno SCHEMA \"Okno Lab\" CASCADE;
          SELECT count(*) FROM \"Okno Lab\".okno_create_tables();
          INSERT INTO \"Okno Lab\".actors (name) VALUES ('ann');
          INSERT INTO \"Okno Lab\".resources (name) VALUES ('room')" >/dev/null 2>&1
book "$lab" 1 3 '"Okno Lab"'
PGOPTIONS='-c search_path=pg_catalog' timeout 30 "$RELAY" --dbname "$lab" --once >"$work/lab.out" 2>"$work/lab.err"
rc=$?
check "okno in schema \"Okno Lab\" is found and drained (search_path pg_catalog)" "0/3" "$rc/$(lines "$work/lab.out")"
book "$lab" 4 2 '"Okno Lab"'
PGOPTIONS='-c search_path=pg_catalog' timeout 30 "$RELAY" --dbname "$lab" --schema "Okno Lab" --once >"$work/lab2.out" 2>&1
rc=$?
check "--schema \"Okno Lab\" works too" "0/2" "$rc/$(lines "$work/lab2.out")"

# --- standard output that cannot be written --------------------------------
book "$db" 1001 5
timeout 30 "$RELAY" --dbname "$db" --once >/dev/full 2>"$work/full.err"
rc=$?
check "a failed write to stdout (/dev/full) exits 4" 4 "$rc"
check "... with a message on stderr" 1 "$(grep -c '^okno-relay: could not write to standard output' "$work/full.err")"
check "... and the batch rolls back: its 5 events are still pending" 5 \
	"$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")"
timeout 30 "$RELAY" --dbname "$db" --once >&- 2>/dev/null
check "a closed stdout exits 4" 4 $?
timeout 30 "$RELAY" --dbname "$db" --once >"$work/out3" 2>/dev/null
check "a later run delivers those 5" "0/5" "$?/$(lines "$work/out3")"

# --- without notifications (okno.notify is off by default) ----------------
# the relay polls: soon after events, backing off to --poll (default 1 s)
# while there are none, so an event created while it idles arrives within
# about a second (with a fixed 5-second poll it would take 4.5 s here)
check "okno.notify is off by default" off "$(q "$db" "LOAD 'okno'; SHOW okno.notify")"
start_relay poll --dbname "$db"
book "$db" 2001 5
wait_until 60 at_least 5 "$work/poll.out"
check "a relay without notifications delivers events as they come" 5 "$(lines "$work/poll.out")"
sleep 5.5	# idle: its wait has backed off to --poll
t0=$(date +%s%N)
book "$db" 2006 1
wait_until 60 at_least 6 "$work/poll.out"
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$(lines "$work/poll.out")" -eq 6 ] && [ "$ms" -lt 2500 ]; then
	ok "... and, idle, finds a new one within --poll (1 s): ${ms} ms"
else
	not_ok "... and, idle, finds a new one within --poll (1 s)" "$(lines "$work/poll.out") lines after ${ms} ms"
fi
stop_relay "$RELAY_PID" 60
check "... and stops on SIGTERM with 0" 0 "$STOP_RC"
