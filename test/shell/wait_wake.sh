#!/usr/bin/env bash
# wait_wake: CALL okno_wait(timeout_ms) while other sessions work.  The
# commit of a transaction that wrote an event wakes a waiting session (every
# waiting session); a rollback does not, and neither does ROLLBACK PREPARED,
# while COMMIT PREPARED does.  The events an open drain holds are due for
# nobody else until it rolls back.  While it waits, the waiting backend has no
# xmin and no xid.  pg_cancel_backend and pg_terminate_backend end the wait,
# and no lock of okno's stays behind.  A subscriber's wait (okno_wait(ms,
# NULL, subscriber)) is woken by the commit of an event it has not copied,
# and held while a drain of it copies.  (Waits that need no second session:
# test/specs/wait_wake.spec and test/sql/wait.sql.)
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.  Bounds are
# generous (every condition is polled for up to 60 s; the timed waits are
# 3 s, long enough to be seen waiting on a loaded machine); nothing here
# measures speed.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_wait_wake
new_db "$db"

now_ms() { date +%s%3N; }

# the writer: one psql session fed through a pipe, so a transaction stays
# open between steps
mkfifo "$work/writer.in"
"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=0 -d "$db" <"$work/writer.in" >"$work/writer.out" 2>&1 &
PIDS+=($!)
exec 7>"$work/writer.in"
n=0
writer() { echo "$1" >&7; }
writer_create() {	# BEGIN and a create (hour n of 2030), left open
	n=$((n + 1))
	writer "BEGIN; SELECT okno_create_booking(1, 'w$n', jsonb_build_object('resource_id', 1, 'starts_at', to_char(timestamp '2030-01-01' + $n * interval '1 hour', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), 'ends_at', to_char(timestamp '2030-01-01 01:00' + $n * interval '1 hour', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))) ->> 'status';"
}
writer_sync() {	# wait until the writer has run everything sent so far
	n=$((n + 1))
	writer "SELECT 'sync$n';"
	wait_until 60 grep -q "^sync$n\$" "$work/writer.out"
}

# start_wait NAME MS [SUBSCRIBER]: CALL okno_wait(MS) in the background
# (CALL okno_wait(MS, NULL, SUBSCRIBER) for a subscriber)
start_wait() {
	rm -f "$work/$1.out"
	( s=$(now_ms); "$PGBIN/psql" -X -q -At -d "$db" -c "CALL okno_wait($2${3:+, NULL, '$3'})" >"$work/$1.out" 2>&1
	  echo "elapsed $(( $(now_ms) - s ))" >>"$work/$1.out" ) &
	eval "${1}_pid=$!"
	PIDS+=($!)
}
waiters() { q "$db" "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'CALL okno_wait%' AND wait_event_type = 'Extension'"; }
waiting() { [ "$(waiters)" -ge "${1:-1}" ]; }
finished() { exited "$(eval echo "\$${1}_pid")"; }
result() { head -n 1 "$work/$1.out"; }
elapsed() { sed -n 's/^elapsed //p' "$work/$1.out"; }
locks() { q "$db" "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 4 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"; }
drain_all() { q "$db" "SELECT count(*) FROM okno_drain(1000)" >/dev/null; }

# 1. a commit wakes every waiting session
writer_create
writer_sync
start_wait a 60000
start_wait b 60000
check_true "two sessions wait in okno_wait" wait_until 60 waiting 2
check "a waiting backend has no xmin and no xid" "2" \
	"$(q "$db" "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'CALL okno_wait%' AND wait_event_type = 'Extension' AND backend_xmin IS NULL AND backend_xid IS NULL")"
check "the waiters hold okno's wait tag, shared" "2" \
	"$(q "$db" "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1869311599 AND objid = 0 AND objsubid = 4 AND mode = 'ShareLock' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")"
writer "COMMIT;"
check_true "the commit ends the first wait" wait_until 60 finished a
check_true "and the second" wait_until 60 finished b
check "the first wait says woken" "t" "$(result a)"
check "the second wait says woken" "t" "$(result b)"
drain_all

# 2. a rollback does not: the wait runs to its timeout
writer_create
writer_sync
start_wait r 3000
check_true "a session waits (3 s)" wait_until 60 waiting
writer "ROLLBACK;"
check_true "the wait ends" wait_until 60 finished r
check "after a rollback the wait ends at its timeout, not woken" "f" "$(result r)"
check_true "and not before it" test "$(elapsed r)" -ge 2900

# 3. a prepared transaction's events wake it at COMMIT PREPARED
writer_create
writer "PREPARE TRANSACTION 'okno_wait_1';"
writer_sync
start_wait p 60000
check_true "a session waits while a prepared transaction holds an event" wait_until 60 waiting
check "the prepared transaction holds okno's prepared-events tag" "1" \
	"$(q "$db" "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1869311599 AND objid = 1 AND objsubid = 4 AND pid IS NULL AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")"
q "$db" "COMMIT PREPARED 'okno_wait_1'"
check_true "COMMIT PREPARED ends the wait" wait_until 60 finished p
check "the wait says woken" "t" "$(result p)"
drain_all

# 4. ROLLBACK PREPARED does not
writer_create
writer "PREPARE TRANSACTION 'okno_wait_2';"
writer_sync
start_wait rp 3000
check_true "a session waits (3 s)" wait_until 60 waiting
q "$db" "ROLLBACK PREPARED 'okno_wait_2'"
check_true "the wait ends" wait_until 60 finished rp
check "after ROLLBACK PREPARED the wait ends at its timeout, not woken" "f" "$(result rp)"
check_true "and not before it" test "$(elapsed rp)" -ge 2900

# 5. a create in its own transaction (autocommit) wakes it
start_wait c 60000
check_true "a session waits" wait_until 60 waiting
writer "SELECT okno_create_booking(1, 'auto', jsonb_build_object('resource_id', 1, 'starts_at', '2031-01-01T10:00:00Z', 'ends_at', '2031-01-01T11:00:00Z')) ->> 'status';"
check_true "an autocommitted create ends the wait" wait_until 60 finished c
check "the wait says woken" "t" "$(result c)"
drain_all

# 6. the events a drain holds (not committed yet) are not due for anyone
# else: the wait goes on, and ends when that drain rolls back
writer "SELECT okno_create_booking(1, 'held', jsonb_build_object('resource_id', 1, 'starts_at', '2031-01-02T10:00:00Z', 'ends_at', '2031-01-02T11:00:00Z')) ->> 'status';"
writer "BEGIN; SELECT count(*) AS held FROM okno_drain(10);"
writer_sync
start_wait h 3000
check_true "a session waits while another holds the only due event" wait_until 60 waiting
check_true "the wait ends" wait_until 60 finished h
check "an event an open drain holds does not end the wait" "f" "$(result h)"
check_true "and the wait ran to its timeout" test "$(elapsed h)" -ge 2900
start_wait h2 60000
check_true "a session waits" wait_until 60 waiting
writer "ROLLBACK;"
check_true "the drain's rollback ends the wait (the event is due again)" wait_until 60 finished h2
check "the wait says woken" "t" "$(result h2)"
drain_all

# 7. cancel and terminate end the wait; no lock stays
start_wait x 60000
check_true "a session waits" wait_until 60 waiting
q "$db" "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'CALL okno_wait%'" >/dev/null
check_true "pg_cancel_backend ends the wait" wait_until 60 finished x
check_true "with the cancel error" grep -q "canceling statement due to user request" "$work/x.out"
start_wait y 60000
check_true "a session waits" wait_until 60 waiting
q "$db" "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'CALL okno_wait%'" >/dev/null
check_true "pg_terminate_backend ends the wait" wait_until 60 finished y
check_true "with the terminate error" grep -q "terminating connection due to administrator command" "$work/y.out"
check_true "no lock of okno's wait stays" wait_until 60 test "$(locks)" = 0
# 8. a subscriber's wait (0.5.0): the commit of an event it has not copied
# wakes it; while a drain of the subscriber copies (its transaction open),
# the new events are that drain's, and its rollback makes them due again
q "$db" "SELECT okno_subscribe('journal')" >/dev/null
writer_create
writer_sync
start_wait s 60000 journal
check_true "a session waits for subscriber journal" wait_until 60 waiting
writer "COMMIT;"
check_true "the commit ends the subscriber's wait" wait_until 60 finished s
check "the wait says woken" "t" "$(result s)"
writer "BEGIN; SELECT count(*) AS copying FROM okno_drain(10, 'journal');"
writer_sync
start_wait s2 3000 journal
check_true "a session waits while a drain of journal copies" wait_until 60 waiting
check_true "the wait ends" wait_until 60 finished s2
check "events a copying drain holds do not end the wait" "f" "$(result s2)"
start_wait s3 60000 journal
check_true "a session waits" wait_until 60 waiting
writer "ROLLBACK;"
check_true "the copying drain's rollback ends the wait" wait_until 60 finished s3
check "the wait says woken" "t" "$(result s3)"
q "$db" "SELECT count(*) FROM okno_drain(1000, 'journal')" >/dev/null
start_wait s4 300 journal
check_true "the wait ends" wait_until 60 finished s4
check "with everything delivered, the subscriber's wait times out" "f" "$(result s4)"
check_true "no lock of okno's wait stays" wait_until 60 test "$(locks)" = 0

check "the writer saw no error" "" "$(grep -E 'ERROR|FATAL' "$work/writer.out")"
exec 7>&-
