#!/usr/bin/env bash
# relay_subscribers: two subscribers, each with a relay of its own
# (--subscriber).  journal's command succeeds, notify's always fails.
# journal gets every event once, each booking's in order; notify's
# booking_created events are parked after okno.max_attempts, and the
# cancellations behind them are never handed to it.  The default
# subscriber's state is untouched.  After okno_requeue_parked, notify's
# relay (a working command now) gets the events in order.  An unknown or
# invalid subscriber stops the relay with exit 3, and so does an okno older
# than 0.5.0.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_subscribers
new_db "$db"
q "$db" "SELECT okno_subscribe('journal'), okno_subscribe('notify')" >/dev/null
book "$db" 1 20
q "$db" "SELECT count(okno_cancel_booking(1, id)) FROM bookings WHERE id <= 5" >/dev/null

# the handlers note "kind booking_id" of each event they are handed
cat >"$work/ok" <<EOF
#!/bin/sh
python3 -c 'import json, sys; e = json.load(sys.stdin); print(e["kind"], e["payload"]["booking_id"])' >>"\$1"
EOF
cat >"$work/fail" <<EOF
#!/bin/sh
python3 -c 'import json, sys; e = json.load(sys.stdin); print(e["kind"], e["payload"]["booking_id"])' >>"\$1"
exit 1
EOF
chmod +x "$work/ok" "$work/fail"

export PGOPTIONS='-c okno.retry_base=100ms -c okno.max_attempts=2'
start_relay journal --dbname "$db" --subscriber journal --exec "$work/ok $work/journal.log" --poll 1
journal=$RELAY_PID
start_relay notify --dbname "$db" --subscriber notify --exec "$work/fail $work/notify.log" --poll 1
notify=$RELAY_PID
unset PGOPTIONS

status() { q "$db" "SELECT pending || '/' || parked || '/' || held_back FROM okno_subscribers WHERE subscriber = '$1'"; }
# the relay of subscriber $1 waits in the server: only a drain that found
# nothing is followed by okno_wait, so once its subscriber's state is
# settled, whatever more it would (wrongly) hand out has been handed out
waits_in_server() {
	[ "$(q "$db" "SELECT count(*) FROM pg_stat_activity
	               WHERE datname = current_database() AND application_name = 'okno-relay'
	                 AND state = 'active' AND wait_event_type = 'Extension'
	                 AND query LIKE 'CALL %okno_wait(%, NULL, ''$1'')'")" -ge 1 ]
}
settled() {	# settled SUBSCRIBER STATUS: its state is STATUS and its relay idle
	[ "$(status "$1")" = "$2" ] && waits_in_server "$1"
}
# (generous bounds: each event runs a python3, 65 of them across the two
# relays, which on a loaded 2-core machine took longer than 60 s once;
# nothing here measures speed)
check_true "journal's relay delivers everything and goes idle" wait_until 180 settled journal "0/0/0"
check_true "notify's relay parks every booking_created and goes idle" wait_until 180 settled notify "5/20/5"

check "journal gets each of the 25 events exactly once" \
	"25/25" "$(lines "$work/journal.log")/$(sort -u "$work/journal.log" | wc -l | tr -d ' ')"
check "journal gets each booking's creation before its cancellation" "" \
	"$(for b in 1 2 3 4 5; do grep -n " $b\$" "$work/journal.log" | cut -d: -f1 | paste -sd' ' | awk -v b=$b '{ if (!($1 < $2)) print b }'; done)"
check "notify's booking_created events are each tried twice, then parked; it has nothing pending but the 5 held-back cancellations" \
	"40/20/5/20/5" \
	"$(lines "$work/notify.log")/$(sort -u "$work/notify.log" | wc -l | tr -d ' ')/$(status notify)"
check "notify is never handed a cancellation whose booking_created is parked" 0 \
	"$(grep -c '^booking_cancelled' "$work/notify.log")"
check "journal has nothing pending, parked or held back" "0/0/0" "$(status journal)"
check "the default subscriber's state is untouched" "25/0/0" \
	"$(q "$db" "SELECT count(*) FILTER (WHERE delivered_at IS NULL) || '/' || count(*) FILTER (WHERE attempts > 0) || '/' || count(*) FILTER (WHERE parked_at IS NOT NULL) FROM outbox")"

stop_relay "$notify" 60
check "notify's relay stops on SIGTERM with exit 0" 0 "$STOP_RC"
check "okno_requeue_parked('notify') requeues its 20 parked events" 20 \
	"$(q "$db" "SELECT okno_requeue_parked('notify')")"
: >"$work/notify.log"
start_relay notify2 --dbname "$db" --subscriber notify --exec "$work/ok $work/notify.log" --poll 1
notify=$RELAY_PID
check_true "notify's new relay delivers everything and goes idle" wait_until 180 settled notify "0/0/0"
check "then notify gets each of the 25 events exactly once" \
	"25/25" "$(lines "$work/notify.log")/$(sort -u "$work/notify.log" | wc -l | tr -d ' ')"
check "each booking's creation before its cancellation" "" \
	"$(for b in 1 2 3 4 5; do grep -n " $b\$" "$work/notify.log" | cut -d: -f1 | paste -sd' ' | awk -v b=$b '{ if (!($1 < $2)) print b }'; done)"
server_waits() { waits_in_server journal && waits_in_server notify; }
check_true "both relays wait in the server, each for its subscriber" wait_until 60 server_waits
book "$db" 21 1
wait_until 60 at_least 26 "$work/journal.log"
wait_until 60 at_least 26 "$work/notify.log"
check "a new event reaches both relays while they wait" "booking_created 21|booking_created 21" \
	"$(tail -n1 "$work/journal.log")|$(tail -n1 "$work/notify.log")"
stop_relay "$notify" 60
stop_relay "$journal" 60
check "okno_verify() is empty" 0 "$(q "$db" "SELECT count(*) FROM okno_verify()")"

# an unknown subscriber, an invalid name, "default"
timeout 60 "$RELAY" --dbname "$db" --subscriber nobody --once >"$work/nobody.out" 2>"$work/nobody.err"
check "--subscriber with an unknown subscriber exits 3" 3 "$?"
check "and says why" 1 "$(grep -c 'subscriber "nobody" does not exist' "$work/nobody.err")"
timeout 60 "$RELAY" --dbname "$db" --subscriber 'No Such' --once >"$work/bad.out" 2>"$work/bad.err"
check "--subscriber with an invalid name exits 3" 3 "$?"
# (okno 0.4.1 can be installed only where its full script is: tools/run's
# second cluster, OKNO_HISTORY_PGHOST and OKNO_HISTORY_PGPORT)
if [ -n "${OKNO_HISTORY_PGHOST:-}" ]; then
	old="host=$OKNO_HISTORY_PGHOST port=$OKNO_HISTORY_PGPORT dbname=okno_relay_subscribers_041"
	PGHOST=$OKNO_HISTORY_PGHOST PGPORT=$OKNO_HISTORY_PGPORT "$PGBIN/dropdb" --if-exists --force okno_relay_subscribers_041 2>/dev/null
	PGHOST=$OKNO_HISTORY_PGHOST PGPORT=$OKNO_HISTORY_PGPORT "$PGBIN/createdb" okno_relay_subscribers_041
	q "$old" "CREATE EXTENSION btree_gist; CREATE EXTENSION okno VERSION '0.4.1'" >/dev/null
	timeout 60 "$RELAY" --dbname "$old" --subscriber journal --once >"$work/old.out" 2>"$work/old.err"
	check "--subscriber against okno 0.4.1 exits 3" 3 "$?"
	check "and says okno is older than 0.5.0" 1 "$(grep -c '^okno-relay: .* or it is older than 0.5.0 (no ' "$work/old.err")"
	PGHOST=$OKNO_HISTORY_PGHOST PGPORT=$OKNO_HISTORY_PGPORT "$PGBIN/dropdb" --if-exists --force okno_relay_subscribers_041 2>/dev/null
else
	not_ok "--subscriber against okno 0.4.1: no cluster that can install it (OKNO_HISTORY_PGHOST; tools/run starts one)"
fi
timeout 60 "$RELAY" --dbname "$db" --subscriber default --once >"$work/default.out" 2>"$work/default.err"
check "--subscriber default is the default subscriber" "0/26" "$?/$(lines "$work/default.out")"
