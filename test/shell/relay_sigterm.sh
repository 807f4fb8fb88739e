#!/usr/bin/env bash
# relay_sigterm: SIGTERM in the middle of its work stops the relay within
# seconds with exit status 0: the event in hand is finished and the handled
# events stay delivered.  With --exec every event commits on its own, so the
# events after the one in hand were never taken (nothing to hand back); on
# stdout the rest of the batch is handed back with okno_release (attempts
# unchanged).  A following --once delivers the rest, so every event reaches
# the recipient exactly once.  SIGINT while idle stops it at once.
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

# --- SIGTERM in the middle of --exec deliveries -------------------------------
# 30 events, --batch 10, each event takes 0.3 s
book "$db" 1 30
cat >"$work/handler" <<EOF
#!/bin/sh
cat >>"$work/handled.\$1"
sleep \$2
EOF
chmod +x "$work/handler"

start_relay run1 --dbname "$db" --batch 10 --exec "$work/handler 1 0.3" --verbose
relay=$RELAY_PID
wait_until 60 at_least 3 "$work/handled.1"
started=$SECONDS
stop_relay "$relay" 60
check "SIGTERM while an event is in hand: exit status 0" 0 "$STOP_RC"
if [ $((SECONDS - started)) -le 3 ]; then
	ok "... within a few seconds ($((SECONDS - started)) s)"
else
	not_ok "... within a few seconds" "$((SECONDS - started)) s"
fi

n1=$(lines "$work/handled.1")
echo "# $n1 events handled before the relay stopped"
if [ "$n1" -ge 3 ] && [ "$n1" -lt 10 ]; then
	ok "it stopped after the event in hand (within the first 10)"
else
	not_ok "it stopped after the event in hand (within the first 10)" "$n1 handled"
fi
ids_of "$work/handled.1" >"$work/ids1"
check "the handled events stay delivered (not handed back)" "$n1" \
	"$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL AND id = ANY ('{$(paste -sd, "$work/ids1")}'::uuid[])")"
check "nothing else is delivered" "$n1" \
	"$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL")"
check "the others are pending: attempts 0, no error" "$((30 - n1))|0|0" \
	"$(q "$db" "SELECT count(*) || '|' || max(attempts) || '|' || count(last_error) FROM outbox WHERE delivered_at IS NULL AND parked_at IS NULL AND available_at IS NULL")"
# (a relay that took --batch events per transaction with --exec would have
# handed the rest of its batch of 10 back here)
check "they were never taken: nothing to hand back" 0 \
	"$(grep -c "handed back" "$work/run1.err")"
wait_until 60 no_relay_backends "$db"
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
# connected, and waiting for work in the server
waiting() {
	[ "$(q postgres "SELECT count(*) FROM pg_stat_activity
	                  WHERE datname = '$db' AND application_name = 'okno-relay' AND state = 'active'
	                    AND wait_event_type = 'Extension' AND query LIKE 'CALL %okno_wait(%'")" -ge 1 ]
}
wait_until 60 waiting
kill -INT "$relay"
# (at once: well before okno_wait's --poll of 60 s, and before the 5 s the
# relay gives a cancelled wait)
if wait_until 4 exited "$relay"; then
	wait "$relay"
	check "SIGINT while waiting for work: exit status 0 at once" 0 $?
else
	not_ok "SIGINT while waiting for work: exit status 0 at once" "still running after 4 s"
fi

# --- SIGTERM while a handler hangs: the event in hand is finished ------------
book "$db" 31 1
start_relay hang --dbname "$db" --exec "echo \$\$ >\"$work/hang.pid\"; exec sleep 60" --exec-timeout 2
relay=$RELAY_PID
wait_until 60 test -s "$work/hang.pid"
started=$SECONDS
stop_relay "$relay" 60
check "SIGTERM during a handler: the relay waits for it (here its 2 s timeout) and exits 0" 0 "$STOP_RC"
check "... and records the outcome of the event in hand" "1|timed out after 2 s" \
	"$(q "$db" "SELECT attempts, last_error FROM outbox WHERE (payload->>'booking_id')::int = 31")"

# --- SIGTERM in the middle of a batch on stdout --------------------------------
# a reader that takes its time keeps the relay inside one batch of 2,000
# lines (the pipe holds a few hundred): the lines written stay delivered,
# the rest of the batch is handed back with okno_release (a database of
# its own: the event above comes due again after its backoff)
db=okno_relay_sigterm_stdout
new_db "$db"
book "$db" 1 2000
mkfifo "$work/fifo"
python3 -c '
import sys, time
with open(sys.argv[1], "w") as out:
    for line in sys.stdin:
        out.write(line)
        out.flush()
        time.sleep(0.002)
' "$work/slow.lines" <"$work/fifo" &
reader=$!
PIDS+=("$reader")
"$RELAY" --dbname "$db" --batch 2000 --verbose >"$work/fifo" 2>"$work/slow.err" &
relay=$!
PIDS+=("$relay")
wait_until 60 at_least 200 "$work/slow.lines"
stop_relay "$relay" 60
check "SIGTERM in the middle of a batch on stdout: exit status 0" 0 "$STOP_RC"
wait_until 60 exited "$reader"
n3=$(lines "$work/slow.lines")
echo "# $n3 lines written before the relay stopped"
if [ "$n3" -ge 200 ] && [ "$n3" -lt 2000 ]; then
	ok "it stopped inside the batch of 2,000"
else
	not_ok "it stopped inside the batch of 2,000" "$n3 lines"
fi
ids_of "$work/slow.lines" >"$work/ids3"
check "exactly the events written are delivered" \
	"$(md5sum <"$work/ids3")" \
	"$(q "$db" "SELECT id FROM outbox WHERE delivered_at IS NOT NULL ORDER BY id" | md5sum)"
check "the rest of the batch was handed back: pending, attempts 0, no error" "$((2000 - n3))|0|0" \
	"$(q "$db" "SELECT count(*) || '|' || max(attempts) || '|' || count(last_error) FROM outbox WHERE delivered_at IS NULL")"
check "stderr says how many were handed back" 1 \
	"$(grep -c "^okno-relay: handed back $((2000 - n3)) undelivered events of the batch$" "$work/slow.err")"
q "$db" "SELECT id FROM outbox WHERE delivered_at IS NULL ORDER BY id" >"$work/pending3"
timeout 60 "$RELAY" --dbname "$db" --once >"$work/rest.lines" 2>/dev/null
check "a following --once exits 0" 0 $?
ids_of "$work/rest.lines" >"$work/ids4"
check "... and prints exactly the handed-back events" \
	"$(md5sum <"$work/pending3")" "$(md5sum <"$work/ids4")"
check "all 2,000 are delivered" 0 "$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")"
