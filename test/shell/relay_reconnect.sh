#!/usr/bin/env bash
# relay_reconnect: a relay whose session is killed (pg_terminate_backend)
# says so on stderr, connects again, waits again (in okno_wait, or with
# LISTEN where okno has none) and goes on delivering.  Once while it waits
# for work (--poll 60, and okno.notify on for the database: only a wake-up
# on the new session, okno_wait's or a NOTIFY, can bring the later events
# in time), once in the middle of a
# batch (the batch is lost with the session and handed out again: every
# event still arrives).
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_reconnect
new_db "$db"
q postgres "ALTER DATABASE $db SET okno.notify = on" >/dev/null

one_backend() {	# one_backend DB [NOT-PID]: exactly one relay session, not NOT-PID
	local b
	b=$(relay_backends "$1")
	[ -n "$b" ] && [ "$(echo "$b" | wc -l)" -eq 1 ] && [ "$b" != "${2:-}" ]
}
grep_count() {	# grep_count PATTERN FILE: matching lines (0 when none)
	grep -c -- "$1" "$2" 2>/dev/null || true
}
has_line() { [ "$(grep_count "$1" "$2")" -ge "${3:-1}" ]; }

# --- killed while idle ------------------------------------------------------
book "$db" 1 10
start_relay idle --dbname "$db" --poll 60
relay=$RELAY_PID
wait_until 60 at_least 10 "$work/idle.out"
check "the relay delivers the first 10 events" 10 "$(lines "$work/idle.out")"

wait_until 60 one_backend "$db"
old=$(relay_backends "$db")
check "the relay's session is found by application_name okno-relay" 1 "$(echo "$old" | grep -c .)"
check "pg_terminate_backend ends it" t "$(q postgres "SELECT pg_terminate_backend($old)")"

wait_until 60 has_line 'reconnected' "$work/idle.err"
check "stderr reports the lost connection" 1 \
	"$(grep_count '^okno-relay: lost the connection to the server' "$work/idle.err")"
check "stderr reports the reconnect" 1 "$(grep_count '^okno-relay: reconnected$' "$work/idle.err")"
wait_until 60 one_backend "$db" "$old"
new=$(relay_backends "$db")
if [ -n "$new" ] && [ "$new" != "$old" ]; then
	ok "a new session with application_name okno-relay replaces it"
else
	not_ok "a new session with application_name okno-relay replaces it" "old $old, now: $new"
fi

started=$SECONDS
book "$db" 11 10
wait_until 60 at_least 20 "$work/idle.out"
check "events created after the reconnect are delivered" 20 "$(lines "$work/idle.out")"
if [ $((SECONDS - started)) -lt 30 ]; then
	ok "... by notification, not by --poll 60 ($((SECONDS - started)) s)"
else
	not_ok "... by notification, not by --poll 60" "$((SECONDS - started)) s"
fi
check "each of the 20 was printed once" 20 "$(sort -u "$work/idle.out" | wc -l | tr -d ' ')"
stop_relay "$relay" 60
check "the relay still stops cleanly (SIGTERM, exit 0)" 0 "$STOP_RC"

# --- killed in the middle of a batch -----------------------------------------
# each event takes 0.2 s; 10 events in one batch; the session is killed
# after the third
book "$db" 21 10
cat >"$work/handler" <<EOF
#!/bin/sh
cat >>"$work/handled"
sleep 0.2
EOF
chmod +x "$work/handler"
start_relay batch --dbname "$db" --exec "$work/handler" --batch 10 --poll 60
relay=$RELAY_PID
wait_until 60 at_least 3 "$work/handled"
wait_until 60 one_backend "$db"
victim=$(relay_backends "$db")
check "pg_terminate_backend in the middle of a batch" t "$(q postgres "SELECT pg_terminate_backend($victim)")"
handled_at_kill=$(lines "$work/handled")

wait_until 60 has_line 'reconnected' "$work/batch.err"
check "stderr reports the reconnect" 1 "$(grep_count '^okno-relay: reconnected$' "$work/batch.err")"
delivered() { [ "$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")" -eq 0 ]; }
wait_until 60 delivered
check "every event of the lost batch is delivered after the reconnect" 0 \
	"$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["event_id"])
' "$work/handled" | sort >"$work/handled.ids"
check "each of the 10 reached the handler at least once" \
	"$(q "$db" "SELECT id FROM outbox WHERE (payload->>'booking_id')::int > 20 ORDER BY id")" \
	"$(sort -u "$work/handled.ids")"
dups=$(uniq -d "$work/handled.ids" | wc -l | tr -d ' ')
echo "# $handled_at_kill handled when the session was killed; $dups handed out twice"
if [ "$dups" -le $((handled_at_kill + 1)) ]; then
	ok "the relay noticed the loss within an event: at most the events handled by then came twice"
else
	not_ok "the relay noticed the loss within an event" "$dups duplicates, $handled_at_kill handled at the kill"
fi
stop_relay "$relay" 60
check "the relay stops cleanly (SIGTERM, exit 0)" 0 "$STOP_RC"
