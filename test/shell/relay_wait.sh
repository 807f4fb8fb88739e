#!/usr/bin/env bash
# relay_wait: how okno-relay waits between batches.  By default
# (--wait=server) it waits inside the server in CALL okno_wait: with
# okno.notify off and --poll 30, a create made while it idles arrives
# within seconds (the commit wakes it); meanwhile its backend is active in
# okno_wait with wait_event Extension and no backend_xmin; SIGTERM during
# the wait cancels it and the relay exits 0 at once.  A wake that finds
# nothing to drain (another session holds the due event) does not make it
# spin.  Where okno has no okno_wait it falls back to LISTEN, saying so
# once.  --wait=listen (woken by NOTIFY, okno.notify on) and --wait=poll
# still deliver.  --metrics-file writes Prometheus's text format whose
# counters match what was delivered, every series labelled with the
# relay's subscriber; in a shared directory it follows no symlink, neither
# at the name of its temporary file nor at the file's own.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_wait
new_db "$db"

if [ "$(q "$db" "SELECT pg_catalog.to_regprocedure('public.okno_wait(integer,boolean)') IS NOT NULL")" != t ]; then
	echo "ok - # SKIP the installed okno has no okno_wait (install this checkout's okno first)"
	exit 0
fi
check "okno.notify is off by default" off "$(q "$db" "LOAD 'okno'; SHOW okno.notify")"

# the relay's session, when it waits in okno_wait: state|wait_event_type|wait_event|xmin is null
wait_state() {
	q postgres "SELECT state || '|' || coalesce(wait_event_type, '') || '|' || coalesce(wait_event, '') || '|' || (backend_xmin IS NULL)
	              FROM pg_stat_activity
	             WHERE application_name = 'okno-relay' AND datname = '$1' AND query LIKE 'CALL %okno_wait(%'"
}
in_okno_wait() { [ "$(wait_state "$1")" = "active|Extension|Extension|true" ]; }
delivered_count() { q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# --- the default: waiting in the server --------------------------------------
mkdir -p "$work/metrics"
start_relay server --dbname "$db" --poll 30 --verbose --metrics-file "$work/metrics/okno-relay.prom"
relay=$RELAY_PID
wait_until 60 in_okno_wait "$db"
check "idle, the relay's backend is active in CALL okno_wait: wait_event Extension, no backend_xmin" \
	"active|Extension|Extension|true" "$(wait_state "$db")"
check "stderr says it waits in the server" 1 \
	"$(grep -c '^okno-relay: waiting between batches: server$' "$work/server.err")"

sleep 1.5	# well inside its 30-second wait
t0=$(date +%s%N)
book "$db" 1 1
wait_until 60 at_least 1 "$work/server.out"
ms=$(ms_since "$t0")
echo "# a create made while it waited arrived after $ms ms (psql included)"
if [ "$(lines "$work/server.out")" -eq 1 ] && [ "$ms" -lt 5000 ]; then
	ok "okno.notify off, --poll 30: a create arrives at once, woken by its commit"
else
	not_ok "okno.notify off, --poll 30: a create arrives at once, woken by its commit" \
		"$(lines "$work/server.out") lines after $ms ms"
fi

# more, in transactions of their own, while it waits
for i in 2 3 4 5 6; do
	book "$db" "$i" 1
	sleep 0.1
done
book "$db" 7 20		# and 20 in one transaction
wait_until 60 at_least 26 "$work/server.out"
check "26 more creates, alone and in a transaction of 20, arrive too" 26 "$(lines "$work/server.out")"
check "each event was printed once" 26 "$(sort -u "$work/server.out" | wc -l | tr -d ' ')"
wait_until 60 in_okno_wait "$db"
check "... and it waits in okno_wait again" "active|Extension|Extension|true" "$(wait_state "$db")"

# the metrics file, while running and at exit
wait_until 60 test -s "$work/metrics/okno-relay.prom"
metric() {	# metric NAME [,LABEL="VALUE"] [FILE] [SUBSCRIBER]: its value in the metrics file
	sed -n "s/^$1{subscriber=\"${4:-default}\"${2:-}} //p" "${3:-$work/metrics/okno-relay.prom}"
}
wait_until 60 eval '[ "$(metric okno_relay_events_delivered_total)" = 26 ]'
check "while running, the metrics file counts 26 delivered" 26 "$(metric okno_relay_events_delivered_total)"

wait_until 60 in_okno_wait "$db"
started=$(date +%s%N)
stop_relay "$relay" 60
ms=$(ms_since "$started")
check "SIGTERM during the server wait: exit status 0" 0 "$STOP_RC"
if [ "$ms" -lt 3000 ]; then
	ok "... at once (the wait is cancelled): $ms ms"
else
	not_ok "... at once (the wait is cancelled)" "$ms ms"
fi
wait_until 60 no_relay_backends "$db"
check "... and its session is gone" "" "$(relay_backends "$db")"

check "at exit the metrics file says delivered 26, failed 0, parked 0, released 0, reconnects 0" \
	"26|0|0|0|0" \
	"$(metric okno_relay_events_delivered_total)|$(metric okno_relay_events_failed_total)|$(metric okno_relay_events_parked_total)|$(metric okno_relay_events_released_total)|$(metric okno_relay_reconnects_total)"
check "... and a lag histogram of 26 observations" "26|26" \
	"$(metric okno_relay_delivery_lag_seconds_count)|$(metric okno_relay_delivery_lag_seconds_bucket ',le="+Inf"')"
bad=$(python3 - "$work/metrics/okno-relay.prom" <<'PY'
import re, sys, time
text = open(sys.argv[1]).read()
bad = []
helped, typed = set(), {}
buckets = []
for line in text.splitlines():
    m = re.match(r"# HELP (\w+) .+$", line)
    if m:
        helped.add(m.group(1))
        continue
    m = re.match(r"# TYPE (\w+) (counter|gauge|histogram)$", line)
    if m:
        typed[m.group(1)] = m.group(2)
        continue
    m = re.match(r'(\w+)\{subscriber="default"(,le="([^"]+)")?\} (\S+)$', line)
    if not m:
        bad.append("line: " + line)
        continue
    name, le, value = m.group(1), m.group(3), float(m.group(4))
    family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in typed else name
    if family not in typed or family not in helped:
        bad.append("no HELP/TYPE for " + name)
    if le is not None:
        buckets.append((le, value))
want = ["0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5",
        "1", "2.5", "5", "10", "30", "60", "+Inf"]
if [b[0] for b in buckets] != want:
    bad.append("buckets %s" % [b[0] for b in buckets])
if any(b[1] > c[1] for b, c in zip(buckets, buckets[1:])):
    bad.append("buckets not cumulative")
# the events waited seconds at most: most of them fall under 2.5 s
if buckets and buckets[10][1] < 20:
    bad.append("only %d of 26 within 2.5 s" % buckets[10][1])
last = re.search(r"^okno_relay_last_success_timestamp_seconds\{subscriber=\"default\"\} (\S+)$", text, re.M)
if not last or abs(float(last.group(1)) - time.time()) > 120:
    bad.append("last success %s" % (last and last.group(1)))
for name in ("okno_relay_events_delivered_total", "okno_relay_events_failed_total",
             "okno_relay_events_parked_total", "okno_relay_events_released_total",
             "okno_relay_batches_total", "okno_relay_reconnects_total"):
    if typed.get(name) != "counter":
        bad.append("not a counter: " + name)
if typed.get("okno_relay_delivery_lag_seconds") != "histogram":
    bad.append("no histogram")
print("; ".join(bad) if bad else "fine")
PY
)
check "the metrics file is Prometheus's text format: HELP and TYPE, every series labelled subscriber=\"default\", 16 cumulative buckets, a recent last success" fine "$bad"
check "no temporary metrics file is left behind" "okno-relay.prom" "$(ls "$work/metrics")"

# --- a wake with nothing to drain does not make it spin ------------------------
# another session drains an event and holds it, uncommitted, for 3 s:
# okno_wait counts it as due, the relay's drain skips it (locked)
book "$db" 27 1
"$PGBIN/psql" -X -q -At -d "$db" -c "BEGIN" -c "SELECT count(*) FROM okno_drain(1)" \
	-c "SELECT pg_sleep(3)" -c "ROLLBACK" >"$work/holder.out" 2>&1 &
holder=$!
PIDS+=("$holder")
holding() { [ "$(q "$db" "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query = 'SELECT pg_sleep(3)'")" = 1 ]; }
wait_until 60 holding
start_relay spin --dbname "$db"
relay=$RELAY_PID
wait_until 60 eval '[ -n "$(relay_backends "$db")" ]'
backend=$(relay_backends "$db")
ticks() {	# ticks PID: user + system CPU time in clock ticks
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
b0=$(ticks "$backend")
r0=$(ticks "$relay")
sleep 2
b1=$(ticks "$backend")
r1=$(ticks "$relay")
hz=$(getconf CLK_TCK)
echo "# 2 s with a due event held by another session: the relay's backend used $((b1 - b0)), the relay $((r1 - r0)) of $((2 * hz)) ticks"
if [ $((b1 - b0 + r1 - r0)) -lt $((hz / 2)) ]; then
	ok "while another session holds a due event, the relay backs off instead of spinning"
else
	not_ok "while another session holds a due event, the relay backs off instead of spinning" \
		"backend $((b1 - b0)), relay $((r1 - r0)) ticks in 2 s"
fi
wait "$holder"
wait_until 60 at_least 1 "$work/spin.out"
check "once it is rolled back, the relay delivers it" 1 "$(lines "$work/spin.out")"
stop_relay "$relay" 60
check "... and stops on SIGTERM with 0" 0 "$STOP_RC"

# --- --wait=poll and --wait=listen ------------------------------------------
start_relay poll --dbname "$db" --wait=poll
relay=$RELAY_PID
wait_until 60 eval '[ -n "$(relay_backends "$db")" ]'
book "$db" 101 3
wait_until 60 at_least 3 "$work/poll.out"
check "--wait=poll delivers (by polling)" 3 "$(lines "$work/poll.out")"
check "... without waiting in okno_wait" "" "$(wait_state "$db")"
stop_relay "$relay" 60
check "... and stops on SIGTERM with 0" 0 "$STOP_RC"

q postgres "ALTER DATABASE $db SET okno.notify = on" >/dev/null
# idle for 6 s, its polls are 5 s apart by now: only the NOTIFY brings a
# create in sooner
start_relay listen --dbname "$db" --wait=listen --poll 30
relay=$RELAY_PID
wait_until 60 eval '[ -n "$(relay_backends "$db")" ]'
sleep 6
t0=$(date +%s%N)
book "$db" 201 3
wait_until 60 at_least 3 "$work/listen.out"
ms=$(ms_since "$t0")
if [ "$(lines "$work/listen.out")" -eq 3 ] && [ "$ms" -lt 2500 ]; then
	ok "--wait=listen, okno.notify on, --poll 30: woken by the NOTIFY ($ms ms)"
else
	not_ok "--wait=listen, okno.notify on, --poll 30: woken by the NOTIFY" "$(lines "$work/listen.out") lines after $ms ms"
fi
stop_relay "$relay" 60
check "... and stops on SIGTERM with 0" 0 "$STOP_RC"
q postgres "ALTER DATABASE $db RESET okno.notify" >/dev/null

# --- an okno without okno_wait: LISTEN instead ----------------------------------
old=okno_relay_wait_old
new_db "$old"
q "$old" "ALTER EXTENSION okno DROP PROCEDURE okno_wait(integer, boolean);
          DROP PROCEDURE okno_wait(integer, boolean)" >/dev/null
start_relay old --dbname "$old" --verbose
relay=$RELAY_PID
wait_until 60 eval '[ -n "$(relay_backends "$old")" ]'
book "$old" 1 2
wait_until 60 at_least 2 "$work/old.out"
check "without okno_wait the default relay still delivers (LISTEN and polling)" 2 "$(lines "$work/old.out")"
check "... and says so once" 1 "$(grep -c '^okno-relay: okno in schema "public" has no okno_wait (an older okno): waiting with LISTEN okno_outbox and polling instead$' "$work/old.err")"
check "... waiting with listen" 1 "$(grep -c '^okno-relay: waiting between batches: listen$' "$work/old.err")"
stop_relay "$relay" 60
check "... and stops on SIGTERM with 0" 0 "$STOP_RC"

# --- a role that may not use okno_wait: the relay says so and listens ----------
den=okno_relay_wait_denied
new_db "$den"
q "$den" "SET client_min_messages = warning; DROP ROLE IF EXISTS okno_relay_wait_denied;
          CREATE ROLE okno_relay_wait_denied LOGIN;
          GRANT EXECUTE ON FUNCTION okno_drain(integer), okno_record_failure(uuid, text), okno_release(uuid) TO okno_relay_wait_denied;
          REVOKE EXECUTE ON PROCEDURE okno_wait(integer, boolean) FROM PUBLIC;
          GRANT SELECT (id, kind, payload, created_at, delivered_at, attempts, last_error, available_at, parked_at,
                        order_key),
                UPDATE (delivered_at, attempts, last_error, available_at, parked_at)
             ON outbox TO okno_relay_wait_denied" >/dev/null
start_relay den --dbname "dbname=$den user=okno_relay_wait_denied" --verbose
relay=$RELAY_PID
wait_until 60 eval '[ -n "$(relay_backends "$den")" ]'
book "$den" 1 2
wait_until 60 at_least 2 "$work/den.out"
check "a role without EXECUTE on okno_wait still delivers (LISTEN and polling)" 2 "$(lines "$work/den.out")"
check "... and the relay says why" 1 "$(grep -c '^okno-relay: this role may not use okno_wait in schema "public"' "$work/den.err")"
stop_relay "$relay" 60
"$PGBIN/dropdb" --force "$den" 2>/dev/null
q postgres "DROP ROLE okno_relay_wait_denied" >/dev/null

# --- the command line -----------------------------------------------------------
"$RELAY" --wait=sometimes >/dev/null 2>"$work/usage.err"
check "--wait=sometimes exits 1" 1 $?
check "... naming the modes" 1 "$(grep -c 'server, listen or poll' "$work/usage.err")"
timeout 30 "$RELAY" --dbname "$db" --once --metrics-file "$work/no-such-dir/m.prom" >/dev/null 2>"$work/nodir.err"
check "an unwritable metrics file does not stop the relay (--once exits 0)" 0 $?
check "... it is logged once" 1 "$(grep -c '^okno-relay: could not write the metrics file' "$work/nodir.err")"

# --- the metrics file in a shared directory -------------------------------------
# Someone who may write in the metrics file's directory plants symlinks to
# files of the relay's user: at the file's own name, and at the temporary
# name the relay used to write first (PATH.tmp.<pid>, opened with O_TRUNC,
# which followed the link and overwrote its target).  Neither is followed:
# the relay writes a file of its own and renames it over PATH.
mkdir -p "$work/shared"
echo precious >"$work/victim"
echo precious >"$work/victim2"
prom=$work/shared/okno-relay.prom
ln -s "$work/victim2" "$prom"
start_relay shared --dbname "$db" --poll 30 --metrics-file "$prom"
relay=$RELAY_PID
ln -s "$work/victim" "$prom.tmp.$relay"
regular_file() { [ -f "$1" ] && [ ! -L "$1" ]; }
wait_until 60 regular_file "$prom"
check_true "a symlink at the metrics file is replaced by the relay's file" regular_file "$prom"
# a write after the symlinks are in place: the one that counts this event
book "$db" 301 1
wait_until 60 eval '[ "$(metric okno_relay_events_delivered_total "" "$prom")" = 1 ]'
check "... and the relay's file counts the event delivered after them" 1 "$(metric okno_relay_events_delivered_total "" "$prom")"
stop_relay "$relay" 10
check "... SIGTERM: exit status 0" 0 "$STOP_RC"
check "the files the symlinks pointed at are unchanged" "precious|precious" "$(cat "$work/victim")|$(cat "$work/victim2")"
check "the metrics file is the relay's own, not a symlink" "yes" "$(regular_file "$prom" && echo yes)"
check "the symlink planted at the old temporary name is untouched, and nothing else is left" \
	"okno-relay.prom okno-relay.prom.tmp.$relay -> $work/victim" \
	"$(cd "$work/shared" && ls | tr '\n' ' ' | sed 's/ $//') -> $(readlink "$prom.tmp.$relay")"

# --- a subscriber's relay labels its series with the subscriber ------------------
q "$db" "SELECT okno_subscribe('journal')" >/dev/null
book "$db" 302 2
timeout 30 "$RELAY" --dbname "$db" --once --subscriber journal \
	--metrics-file "$work/metrics/journal.prom" >"$work/journal.out" 2>"$work/journal.err"
check "--subscriber journal --once delivers journal's 2 events" "0|2" "$?|$(lines "$work/journal.out")"
check "... and its metrics file counts them with subscriber=\"journal\"" 2 \
	"$(metric okno_relay_events_delivered_total "" "$work/metrics/journal.prom" journal)"
check "... every one of its series labelled so (6 counters, a gauge, 16 buckets, sum and count)" "25|25" \
	"$(grep -vc '^#' "$work/metrics/journal.prom")|$(grep -c '^okno_relay_[a-z_]*{subscriber="journal"[,}]' "$work/metrics/journal.prom")"
