#!/usr/bin/env bash
# relay_exec_hang: with --exec a command that hangs holds only its own
# event.  Each event has a delivery transaction of its own, so while the
# command of one event hangs (--exec-timeout 30, --batch 10) the events
# behind it are neither taken nor locked: another session can drain them,
# and a second relay delivers them within seconds.  Once the hanging
# command is killed, the first relay records the failure and delivers its
# event on the retry; every event reaches a recipient exactly once.
# SIGTERM while a command hangs: the relay finishes that event (here its
# 2 s timeout) and exits 0; the events behind it were never taken.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_exec_hang
new_db "$db"

# takeable DB: how many events another session could drain right now (in
# a transaction that rolls back, so nothing is taken for good)
takeable() {
	printf 'BEGIN;\nSELECT count(*) FROM okno_drain(100);\nROLLBACK;\n' |
		"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$1"
}
ids() {	# ids FILE...: the lines of the files that exist, sorted
	cat "$@" 2>/dev/null | sort
}
secs_since() {	# secs_since T0: seconds since T0 (date +%s.%N), 2 decimals
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'
}

# the handler (argument: a name): the first event any handler gets hangs
# for 60 s; every other one is delivered, its id appended to $work/NAME.ids.
# Every run is noted in $work/NAME.runs, the hanging one's process group in
# $work/hung.pgid (and in $work/pgids, for the cleanup).
cat >"$work/handler" <<EOF
#!/bin/sh
cat >/dev/null
echo "\$OKNO_EVENT_ID" >>"$work/\$1.runs"
if mkdir "$work/hung" 2>/dev/null; then
	pgid=\$(cut -d' ' -f5 /proc/\$\$/stat)
	echo "\$pgid" >>"$work/pgids"
	echo "\$pgid" >"$work/hung.pgid"
	exec sleep 60
fi
echo "\$OKNO_EVENT_ID" >>"$work/\$1.ids"
EOF
chmod +x "$work/handler"

# --- a hanging command holds only its own event --------------------------------
book "$db" 1 10
PGOPTIONS='-c okno.retry_base=200ms' start_relay a --dbname "$db" --batch 10 \
	--exec-timeout 30 --exec "$work/handler a"
relay=$RELAY_PID
if ! wait_until 60 test -s "$work/hung.pgid"; then
	not_ok "the first relay's command hangs on its first event" "$(cat "$work/a.err")"
	exit 1
fi
hung_at=$(date +%s.%N)
hung=$(head -n 1 "$work/a.runs")
pgid=$(cat "$work/hung.pgid")
check "while the command hangs, 10 events are pending (its event not committed)" 10 \
	"$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")"
check "... and another session can drain the 9 behind it (not taken, not locked)" 9 \
	"$(takeable "$db")"

timeout 20 "$RELAY" --dbname "$db" --batch 10 --exec "$work/handler b" --once \
	>/dev/null 2>"$work/b.err"
rc=$?
elapsed=$(secs_since "$hung_at")
check "a second relay (--once) exits 0" 0 "$rc"
check "... having delivered those 9" 9 "$(lines "$work/b.ids")"
check "... which are all the events but the hanging one" \
	"$(q "$db" "SELECT id FROM outbox WHERE id <> '$hung' ORDER BY id")" \
	"$(ids "$work/b.ids")"
if kill -0 -- "-$pgid" 2>/dev/null && awk -v e="$elapsed" 'BEGIN { exit !(e < 10) }'; then
	ok "... within seconds, while the first command still hangs (${elapsed} s)"
else
	not_ok "... within seconds, while the first command still hangs" "${elapsed} s"
fi
check "the first relay has not run anything else meanwhile" 1 "$(lines "$work/a.runs")"

kill -KILL -- "-$pgid"
delivered() { [ "$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")" -eq 0 ]; }
wait_until 60 delivered
check "killed, the command counts as a failure and the event is delivered on the retry" \
	"1|killed by signal 9|t" \
	"$(q "$db" "SELECT attempts, last_error, delivered_at IS NOT NULL FROM outbox WHERE id = '$hung'")"
check "stderr tells of the failure" 1 \
	"$(grep -c "^okno-relay: event $hung failed (killed by signal 9): attempt 1, next in" "$work/a.err")"
check "every event reached a recipient exactly once" \
	"$(q "$db" "SELECT id FROM outbox ORDER BY id")" \
	"$(ids "$work/a.ids" "$work/b.ids")"
check "the handlers ran 11 times: the hanging event twice, the others once" \
	"$hung 2|9 once" \
	"$(ids "$work/a.runs" "$work/b.runs" | uniq -c | awk -v h="$hung" '
		$2 == h { hc = $1 } $2 != h && $1 == 1 { once++ }
		END { printf "%s %d|%d once", h, hc, once }')"
check "the other 9 have no failed attempt" 0 \
	"$(q "$db" "SELECT count(*) FROM outbox WHERE attempts <> 0 AND id <> '$hung'")"
stop_relay "$relay" 60
check "the first relay stops on SIGTERM with 0" 0 "$STOP_RC"

# --- SIGTERM while a command hangs ---------------------------------------------
# the event in hand is finished (here: its --exec-timeout of 2 s); the
# events behind it were never taken, so there is nothing to hand back
rm -rf "$work/hung" "$work/hung.pgid"
book "$db" 11 5
PGOPTIONS='-c okno.retry_base=1h' start_relay c --dbname "$db" --batch 10 \
	--exec-timeout 2 --exec "$work/handler c" --verbose
relay=$RELAY_PID
if ! wait_until 60 test -s "$work/hung.pgid"; then
	not_ok "the relay's command hangs on its first event" "$(cat "$work/c.err")"
	exit 1
fi
hung=$(head -n 1 "$work/c.runs")
kill -TERM "$relay"
check "after SIGTERM, while the command still hangs, the 4 others can be drained" 4 \
	"$(takeable "$db")"
started=$(date +%s.%N)
stop_relay "$relay" 60
elapsed=$(secs_since "$started")
check "the relay waits for the event in hand and exits 0" 0 "$STOP_RC"
if awk -v e="$elapsed" 'BEGIN { exit !(e < 5) }'; then
	ok "... within its 2 s timeout (${elapsed} s)"
else
	not_ok "... within its 2 s timeout" "${elapsed} s"
fi
check "the event in hand is settled: a failure, timed out" "1|timed out after 2 s" \
	"$(q "$db" "SELECT attempts, last_error FROM outbox WHERE id = '$hung'")"
check "the other 4 were never taken: pending, attempts 0, no error" "4|0|0" \
	"$(q "$db" "SELECT count(*) || '|' || max(attempts) || '|' || count(last_error) FROM outbox WHERE delivered_at IS NULL AND id <> '$hung'")"
check "... nor run" 1 "$(lines "$work/c.runs")"
check "... so nothing was handed back" 0 "$(grep -c 'handed back' "$work/c.err")"
timeout 20 "$RELAY" --dbname "$db" --exec "$work/handler d" --once >/dev/null 2>"$work/d.err"
rc=$?
check "a following --once exits 0 and delivers exactly those 4" \
	"0|$(q "$db" "SELECT id FROM outbox WHERE (payload->>'booking_id')::int > 10 AND id <> '$hung' ORDER BY id" | md5sum)" \
	"$rc|$(ids "$work/d.ids" | md5sum)"
