#!/usr/bin/env bash
# relay_failures: --exec failures go through okno_record_failure.  An
# event whose handler always fails is retried after okno's backoff (never
# before available_at, and without waiting for --poll), with attempts 0,
# 1, 2, and parked after okno.max_attempts = 3; a parked event is not
# handed out again until okno_requeue.  A handler that hangs is killed
# (its whole process group) after --exec-timeout and counts as a failure,
# and so does one killed by a signal.  In a batch with one failing event
# the others are delivered exactly once.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_failures
new_db "$db"

# --- retries, backoff, parking ------------------------------------------------
book "$db" 1 1
id=$(q "$db" "SELECT id FROM outbox")

# the handler (which names the server itself: the relay keeps its PG*
# variables from commands) notes, in the server's clock, when it runs and the event's
# committed available_at and attempts at that moment, then fails
cat >"$work/fail" <<EOF
#!/bin/sh
line=\$(cat)
row=\$("$PGBIN/psql" -X -q -At -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d "$db" -c "SELECT extract(epoch FROM clock_timestamp()), coalesce(extract(epoch FROM available_at)::text, '-'), attempts FROM outbox WHERE id = '\$OKNO_EVENT_ID'")
echo "\$row|\$OKNO_EVENT_ID|\$OKNO_EVENT_KIND|\$line" >>"$work/attempts"
exit 1
EOF
chmod +x "$work/fail"

export PGOPTIONS='-c okno.retry_base=200ms -c okno.max_attempts=3'
start_relay retry --dbname "$db" --exec "$work/fail" --poll 30
relay=$RELAY_PID
unset PGOPTIONS
parked() { [ "$(q "$db" "SELECT parked_at IS NOT NULL FROM outbox WHERE id = '$id'")" = t ]; }
wait_until 60 parked
check "the event is parked after 3 failed attempts" "3|t|exit status 1|t" \
	"$(q "$db" "SELECT attempts, parked_at IS NOT NULL, last_error, delivered_at IS NULL FROM outbox WHERE id = '$id'")"
# the relay waits in the server: only a drain that found nothing is
# followed by okno_wait, so a 4th attempt would have been handed out
idle() {
	[ "$(q postgres "SELECT count(*) FROM pg_stat_activity
	                  WHERE datname = '$db' AND application_name = 'okno-relay' AND state = 'active'
	                    AND wait_event_type = 'Extension' AND query LIKE 'CALL %okno_wait(%'")" -ge 1 ]
}
wait_until 60 idle
check "the handler ran exactly 3 times" 3 "$(lines "$work/attempts")"
stop_relay "$relay" 60
check "the relay stops on SIGTERM with exit 0" 0 "$STOP_RC"
check "the handler saw OKNO_EVENT_ID and OKNO_EVENT_KIND" "$id|booking_created" \
	"$(cut -d'|' -f4,5 "$work/attempts" | sort -u)"

# columns: run time | available_at seen | attempts seen | id | kind | line
verdict=$(python3 - "$work/attempts" 2>"$work/verdict.err" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("|", 5) for l in open(sys.argv[1])]
t = [float(r[0]) for r in rows]
avail = [None if r[1] == "-" else float(r[1]) for r in rows]
seen = [int(r[2]) for r in rows]
sent = [json.loads(r[5])["attempts"] for r in rows]
out = []
out.append("attempts in the JSON line %s" % sent)
out.append("attempts in the table %s" % seen)
# no retry before available_at
out.append("early retries %d" % sum(1 for k in (1, 2) if t[k] < avail[k]))
# available_at moves forward
out.append("available_at increasing %s" % (avail[1] is not None and avail[2] > avail[1]))
# okno's backoff after failure k (k = 1, 2): d = 200 ms * 2^(k-1), delay in
# [d/2, d] from the failure, which comes just after the handler's run time
# (the upper bound allows for a slow machine)
ok = True
for k, d in ((1, 0.2), (2, 0.4)):
    delay = avail[k] - t[k - 1]
    if not (d / 2 <= delay <= d + 1.0):
        ok = False
        print("# delay after failure %d: %.3f s, want %.2f..%.2f" % (k, delay, d / 2, d), file=sys.stderr)
out.append("backoff %s" % ok)
# the relay came back on time (it waits for available_at, not for --poll 30)
late = max(t[k] - avail[k] for k in (1, 2))
out.append("prompt %s" % (late < 2.0))
print("# delays after failures 1, 2: %.3f s, %.3f s; retries came %.3f s, %.3f s after available_at"
      % (avail[1] - t[0], avail[2] - t[1], t[1] - avail[1], t[2] - avail[2]), file=sys.stderr)
print("; ".join(out))
PY
)
cat "$work/verdict.err" 2>/dev/null
check "attempts 0, 1, 2; never before available_at; available_at moves forward with okno's backoff; retries on time" \
	"attempts in the JSON line [0, 1, 2]; attempts in the table [0, 1, 2]; early retries 0; available_at increasing True; backoff True; prompt True" \
	"$verdict"
check "stderr tells of each failure and of the parking" 3 \
	"$(grep -cE "^okno-relay: event $id failed \(exit status 1\): (attempt [12], next in|parked after 3 attempts)" "$work/retry.err")"

timeout 30 "$RELAY" --dbname "$db" --exec "$work/fail" --once >/dev/null 2>&1
check "a parked event is not handed out again (--once runs no handler)" 3 "$(lines "$work/attempts")"

check "okno_requeue unparks it" t "$(q "$db" "SELECT okno_requeue('$id')")"
timeout 30 "$RELAY" --dbname "$db" --exec "cat >\"$work/requeued\"" --once >/dev/null 2>"$work/requeue.err"
check "a relay with a succeeding handler delivers it" "0|$id|0" \
	"$?|$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print("%s|%s" % (e["event_id"], e["attempts"]))' "$work/requeued" 2>&1)"
check "... and it is delivered in the table" "t|f" \
	"$(q "$db" "SELECT delivered_at IS NOT NULL, parked_at IS NOT NULL FROM outbox WHERE id = '$id'")"

# --- a handler that hangs, one killed by a signal -----------------------------
export PGOPTIONS='-c okno.retry_base=1h'
book "$db" 2 1
id=$(q "$db" "SELECT id FROM outbox WHERE delivered_at IS NULL")
started=$(date +%s.%N)
timeout 30 "$RELAY" --dbname "$db" --exec-timeout 1 \
	--exec "sleep 60 & echo \$! >\"$work/sleep.pid\"; wait" --once >/dev/null 2>"$work/hang.err"
rc=$?
elapsed=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
check "--exec-timeout 1: the relay goes on and --once exits 0" 0 "$rc"
if awk -v e="$elapsed" 'BEGIN { exit !(e >= 1 && e < 5) }'; then
	ok "... after about 1 s ($elapsed s)"
else
	not_ok "... after about 1 s" "$elapsed s"
fi
check "the hanging handler counts as a failure" "1|timed out after 1 s|t" \
	"$(q "$db" "SELECT attempts, last_error, delivered_at IS NULL FROM outbox WHERE id = '$id'")"
sleep_pid=$(cat "$work/sleep.pid" 2>/dev/null)
if [ -n "$sleep_pid" ] && wait_until 60 exited "$sleep_pid"; then
	ok "its whole process group was killed (the shell's background sleep too)"
else
	not_ok "its whole process group was killed" "sleep pid ${sleep_pid:-?} still there"
	[ -n "$sleep_pid" ] && kill -KILL "$sleep_pid" 2>/dev/null
fi

book "$db" 3 1
id=$(q "$db" "SELECT id FROM outbox WHERE delivered_at IS NULL AND attempts = 0")
timeout 30 "$RELAY" --dbname "$db" --exec 'kill -KILL $$' --once >/dev/null 2>&1
check "a handler killed by a signal counts as a failure" "1|killed by signal 9" \
	"$(q "$db" "SELECT attempts, last_error FROM outbox WHERE id = '$id'")"
timeout 30 "$RELAY" --dbname "$db" --exec 'exit 3' --once >/dev/null 2>&1
check "a failing event is not retried before its backoff (okno.retry_base 1h)" "1|killed by signal 9" \
	"$(q "$db" "SELECT attempts, last_error FROM outbox WHERE id = '$id'")"

# --- one failing event in a batch of five -------------------------------------
book "$db" 11 5
# the third of the five fails
bad=$(q "$db" "SELECT payload->>'booking_id' FROM outbox WHERE delivered_at IS NULL AND attempts = 0 ORDER BY id OFFSET 2 LIMIT 1")
cat >"$work/mixed" <<EOF
#!/bin/sh
line=\$(cat)
case "\$line" in
*'"payload":{"booking_id":$bad}'*) exit 1 ;;
esac
echo "\$OKNO_EVENT_ID" >>"$work/mixed.ids"
EOF
chmod +x "$work/mixed"
timeout 30 "$RELAY" --dbname "$db" --exec "$work/mixed" --once >/dev/null 2>"$work/mixed.err"
check "a batch with one failing event: --once exits 0" 0 $?
five="(payload->>'booking_id')::int BETWEEN $((bad - 2)) AND $((bad + 2))"
check "the four others reached the handler, once each" \
	"$(q "$db" "SELECT id FROM outbox WHERE $five AND payload->>'booking_id' <> '$bad' ORDER BY id")" \
	"$(sort "$work/mixed.ids")"
check "... and are delivered in the table; the failing one is pending with attempt 1" \
	"t:0|t:0|f:1|t:0|t:0" \
	"$(q "$db" "SELECT string_agg(format('%s:%s', delivered_at IS NOT NULL, attempts), '|' ORDER BY id) FROM outbox WHERE $five")"
timeout 30 "$RELAY" --dbname "$db" --exec "$work/mixed" --once >/dev/null 2>&1
check "a second relay hands none of them out again" 4 "$(lines "$work/mixed.ids")"
unset PGOPTIONS
