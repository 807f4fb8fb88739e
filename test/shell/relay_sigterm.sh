#!/usr/bin/env bash
# relay_sigterm: SIGTERM in the middle of a batch stops the relay within
# seconds with exit status 0: the event in hand is finished, the rest of
# the batch is handed back with okno_release (attempts unchanged), the
# handled events stay delivered; a following --once delivers the rest, so
# every event reaches the handler exactly once.  SIGINT while idle stops it
# at once.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_sigterm
new_db "$db"

ids_of() {	# ids_of FILE: the event ids of the JSON lines in FILE, sorted
	[ -f "$1" ] || return 0
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["event_id"])
' "$1" | sort
}

# --- SIGTERM in the middle of a batch ----------------------------------------
# 30 events, batches of 10, each event takes 0.3 s
book "$db" 1 30
cat >"$work/handler" <<EOF
#!/bin/sh
cat >>"$work/handled.\$1"
sleep \$2
EOF
chmod +x "$work/handler"

start_relay run1 --dbname "$db" --batch 10 --exec "$work/handler 1 0.3" --verbose
relay=$RELAY_PID
wait_until 20 at_least 3 "$work/handled.1"
started=$SECONDS
stop_relay "$relay" 10
check "SIGTERM while a batch is in hand: exit status 0" 0 "$STOP_RC"
if [ $((SECONDS - started)) -le 3 ]; then
	ok "... within a few seconds ($((SECONDS - started)) s)"
else
	not_ok "... within a few seconds" "$((SECONDS - started)) s"
fi

n1=$(lines "$work/handled.1")
echo "# $n1 events handled before the relay stopped"
if [ "$n1" -ge 3 ] && [ "$n1" -lt 10 ]; then
	ok "it stopped inside the first batch of 10, after the event in hand"
else
	not_ok "it stopped inside the first batch of 10, after the event in hand" "$n1 handled"
fi
ids_of "$work/handled.1" >"$work/ids1"
check "the handled events stay delivered (not handed back)" "$n1" \
	"$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL AND id = ANY ('{$(paste -sd, "$work/ids1")}'::uuid[])")"
check "nothing else is delivered" "$n1" \
	"$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL")"
check "the rest of the batch was handed back: pending, attempts 0, no error" "$((30 - n1))|0|0" \
	"$(q "$db" "SELECT count(*) || '|' || max(attempts) || '|' || count(last_error) FROM outbox WHERE delivered_at IS NULL AND parked_at IS NULL AND available_at IS NULL")"
check "stderr says how many were handed back" 1 \
	"$(grep -c "^okno-relay: handed back $((10 - n1)) undelivered events of the batch$" "$work/run1.err")"
wait_until 5 no_relay_backends "$db"
check "the relay's session is gone" "" "$(relay_backends "$db")"

timeout 60 "$RELAY" --dbname "$db" --batch 10 --exec "$work/handler 2 0" --once >/dev/null 2>"$work/run2.err"
check "a following --once exits 0" 0 $?
ids_of "$work/handled.2" >"$work/ids2"
check "it delivers exactly the other events" "$((30 - n1))|0" \
	"$(lines "$work/ids2")|$(comm -12 "$work/ids1" "$work/ids2" | wc -l | tr -d ' ')"
check "every event reached the handler exactly once" \
	"$(q "$db" "SELECT id FROM outbox ORDER BY id")" \
	"$(sort -m "$work/ids1" "$work/ids2")"
check "all 30 are delivered" 0 "$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")"

# --- SIGINT while idle ----------------------------------------------------------
start_relay idle --dbname "$db" --poll 60
relay=$RELAY_PID
connected() { [ -n "$(relay_backends "$db")" ]; }
wait_until 10 connected
sleep 0.2
kill -INT "$relay"
if wait_until 2 exited "$relay"; then
	wait "$relay"
	check "SIGINT while waiting for work: exit status 0 at once" 0 $?
else
	not_ok "SIGINT while waiting for work: exit status 0 at once" "still running after 2 s"
fi

# --- SIGTERM while a handler hangs: the event in hand is finished ------------
book "$db" 31 1
start_relay hang --dbname "$db" --exec "echo \$\$ >\"$work/hang.pid\"; exec sleep 60" --exec-timeout 2
relay=$RELAY_PID
wait_until 10 test -s "$work/hang.pid"
started=$SECONDS
stop_relay "$relay" 10
check "SIGTERM during a handler: the relay waits for it (here its 2 s timeout) and exits 0" 0 "$STOP_RC"
check "... and records the outcome of the event in hand" "1|timed out after 2 s" \
	"$(q "$db" "SELECT attempts, last_error FROM outbox WHERE (payload->>'booking_id')::int = 31")"
