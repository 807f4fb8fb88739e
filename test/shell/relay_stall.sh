#!/usr/bin/env bash
# relay_stall: the relay neither loops on one event nor waits for ever.
#
# - idle_in_transaction_session_timeout (and, from PostgreSQL 17,
#   transaction_timeout) shorter than a command or a slow reader does not
#   end the relay's delivery transactions: every event is delivered once.
# - A delivery transaction that keeps being lost (here the command itself
#   terminates the relay's session before the COMMIT) is charged a failed
#   attempt after 3 losses in a row, so okno's backoff and
#   okno.max_attempts apply: the event ends parked, never run for ever.
# - A server that stops answering (a stopped backend: SIGSTOP) holds the
#   relay no longer than the wait's timeout plus its grace, or
#   --statement-timeout, plus 5 s: it reconnects and delivers what came
#   meanwhile; SIGTERM ends a relay blocked in COMMIT within 5 s.
# - A read-only server (default_transaction_read_only): --once ends with
#   exit 3; a daemon connects again until it finds the server writable.
# - TCP connections get keepalives and tcp_user_timeout by default, and a
#   keyword in --dbname overrides them (strace of setsockopt).
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_stall
new_db "$db"
server_num=$(q "$db" "SHOW server_version_num")

emit() {	# emit N: N events of kind "e" with payload {"n": i}
	q "$db" "SELECT count(okno_emit('e', jsonb_build_object('n', i))) FROM generate_series(1, $1) AS i" >/dev/null
}
pending() { q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL"; }
distinct_lines() { sort -u "$1" 2>/dev/null | wc -l | tr -d ' '; }
# backend_of PID: the server pid of the relay PID's session
relay_backend() { relay_backends "$db" | head -n 1; }
stopped=()
cont_all() {
	local p
	for p in "${stopped[@]}"; do
		kill -CONT "$p" 2>/dev/null
	done
	stopped=()
}
trap 'cont_all; cleanup' EXIT

# --- session timeouts shorter than a delivery --------------------------------
q "$db" "ALTER DATABASE $db SET idle_in_transaction_session_timeout = '1s'" >/dev/null
if [ "$server_num" -ge 170000 ]; then
	q "$db" "ALTER DATABASE $db SET transaction_timeout = '1s'" >/dev/null
fi
emit 3
cat >"$work/slow" <<EOF
#!/bin/sh
# slow: note the event, take 2.5 s (longer than the session's timeouts)
cat >/dev/null
echo "\$OKNO_EVENT_ID" >>"$work/slow.runs"
sleep 2.5
EOF
chmod +x "$work/slow"
timeout 120 "$RELAY" --dbname "$db" --once --exec "$work/slow" >/dev/null 2>"$work/slow.err"
check "idle_in_transaction_session_timeout (and transaction_timeout) of 1 s, a 2.5 s command: --once exits 0" 0 "$?"
check "each of the 3 events run once and delivered" "3/3/0" \
	"$(lines "$work/slow.runs")/$(distinct_lines "$work/slow.runs")/$(pending)"

# a reader that takes a while: 300 events of 1 kB, more than a pipe holds
q "$db" "SELECT count(okno_emit('e', jsonb_build_object('n', i, 's', repeat('x', 1000)))) FROM generate_series(1, 300) AS i" >/dev/null
timeout 120 "$RELAY" --dbname "$db" --once 2>"$work/reader.err" |
	python3 -c '
import sys, time
sys.stdin.buffer.read(1)
time.sleep(2.5)
sys.stdout.buffer.write(sys.stdin.buffer.read())' >"$work/reader.out"
check "a reader that pauses 2.5 s: --once exits 0" 0 "${PIPESTATUS[0]}"
check "each of the 300 events written once and delivered" "300/300/0" \
	"$(lines "$work/reader.out")/$(distinct_lines "$work/reader.out")/$(pending)"
q "$db" "ALTER DATABASE $db RESET idle_in_transaction_session_timeout" >/dev/null
[ "$server_num" -ge 170000 ] && q "$db" "ALTER DATABASE $db RESET transaction_timeout" >/dev/null
q "$db" "DELETE FROM outbox" >/dev/null

# --- a delivery transaction lost again and again ------------------------------
# The command ends the relay's own session (its PG* variables are not
# passed on: it names the server itself), so no COMMIT ever happens.
cat >"$work/killer" <<EOF
#!/bin/sh
cat >/dev/null
echo "\$OKNO_EVENT_ID" >>"$work/killer.runs"
"$PGBIN/psql" -X -q -At -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -c \
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	  WHERE application_name = 'okno-relay' AND datname = '$db'" >/dev/null
EOF
chmod +x "$work/killer"
q "$db" "ALTER DATABASE $db SET okno.max_attempts = 2" >/dev/null
q "$db" "ALTER DATABASE $db SET okno.retry_base = '10ms'" >/dev/null
emit 1
start_relay killer --dbname "$db" --exec "$work/killer" --poll 0.2
parked() { [ "$(q "$db" "SELECT count(*) FROM outbox WHERE parked_at IS NOT NULL")" = 1 ]; }
wait_until 120 parked
check "an event whose delivery transaction is always lost ends parked (okno.max_attempts 2)" \
	"2/true/true" \
	"$(q "$db" "SELECT attempts || '/' || (parked_at IS NOT NULL) || '/' ||
	               (last_error = 'its delivery transaction was lost 3 times in a row') FROM outbox")"
check "its command ran 3 times per charged attempt, 6 in all" 6 "$(lines "$work/killer.runs")"
stop_relay "$RELAY_PID" 30
check "the relay stops on SIGTERM, exit 0" 0 "$STOP_RC"
q "$db" "ALTER DATABASE $db RESET okno.max_attempts" >/dev/null
q "$db" "DELETE FROM outbox" >/dev/null

# --- a server that stops answering in okno_wait -------------------------------
start_relay wait --dbname "$db" --poll 1 --verbose
has_backend() { [ -n "$(relay_backend)" ]; }
wait_until 60 has_backend
backend=$(relay_backend)
# in the wait (CALL okno_wait) when it stops
in_wait() { [ "$(q postgres "SELECT query LIKE 'CALL %okno_wait%' FROM pg_stat_activity WHERE pid = $backend")" = t ]; }
wait_until 60 in_wait
kill -STOP "$backend" && stopped+=("$backend")
emit 1
# okno_wait(1 s) plus its 10 s grace plus the cancel's 5 s: about 16 s
wait_until 90 at_least 1 "$work/wait.out"
check "the relay's backend stopped in okno_wait: the relay reconnects and delivers the event" 1 "$(lines "$work/wait.out")"
check "it said it cancelled the wait, then took the connection for lost" 2 \
	"$(($(grep -c 'okno_wait got no answer within 11 s: cancelling it' "$work/wait.err") +
	    $(grep -c 'lost the connection to the server (okno_wait): no answer within 5 s of the cancel' "$work/wait.err")))"
cont_all
stop_relay "$RELAY_PID" 30
check "the relay stops on SIGTERM, exit 0" 0 "$STOP_RC"
q "$db" "DELETE FROM outbox" >/dev/null

# --- a server that stops answering a COMMIT -----------------------------------
# The first command stops the relay's backend (SIGSTOP): its COMMIT is
# never answered.
cat >"$work/stopper" <<EOF
#!/bin/sh
cat >/dev/null
echo "\$OKNO_EVENT_ID" >>"$work/\$1.runs"
if mkdir "$work/\$1.stopped" 2>/dev/null; then
	pid=\$("$PGBIN/psql" -X -q -At -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -c \
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'okno-relay' AND datname = '$db'")
	echo "\$pid" >"$work/\$1.backend"
	kill -STOP \$pid
fi
EOF
chmod +x "$work/stopper"
emit 1
start_relay commit --dbname "$db" --exec "$work/stopper commit" --statement-timeout 2 --poll 0.5
if wait_until 60 test -s "$work/commit.backend"; then
	stopped+=("$(cat "$work/commit.backend")")
	emit 1
	# --statement-timeout 2 plus 5 s: reconnects, delivers the second event
	two_runs() { [ "$(lines "$work/commit.runs")" -ge 2 ]; }
	wait_until 90 two_runs
	check "a COMMIT never answered (--statement-timeout 2): the relay reconnects and delivers the next event" \
		2 "$(lines "$work/commit.runs")"
	check "it said so" 1 "$(grep -c 'COMMIT got no answer within 2 s: cancelling it' "$work/commit.err")"
else
	not_ok "the command stopped the relay's backend" "$(cat "$work/commit.err")"
fi
stop_relay "$RELAY_PID" 30
cont_all
wait_until 30 no_relay_backends "$db"
q "$db" "DELETE FROM outbox" >/dev/null

emit 1
start_relay term --dbname "$db" --exec "$work/stopper term"
if wait_until 60 test -s "$work/term.backend"; then
	stopped+=("$(cat "$work/term.backend")")
	t0=$SECONDS
	stop_relay "$RELAY_PID" 30
	check "SIGTERM ends a relay blocked in a COMMIT never answered, exit 0" 0 "$STOP_RC"
	check "within the cancel's 5 s grace (and a margin)" yes "$([ $((SECONDS - t0)) -le 20 ] && echo yes || echo "no: $((SECONDS - t0)) s")"
else
	not_ok "the command stopped the relay's backend" "$(cat "$work/term.err")"
	stop_relay "$RELAY_PID" 30
fi
cont_all
wait_until 30 no_relay_backends "$db"
q "$db" "DELETE FROM outbox" >/dev/null

# --- a read-only server -------------------------------------------------------
emit 2
q postgres "ALTER DATABASE $db SET default_transaction_read_only = on" >/dev/null
timeout 60 "$RELAY" --dbname "$db" --once >"$work/ro.out" 2>"$work/ro.err"
check "a read-only server: --once exits 3" 3 "$?"
check "after connecting again once, saying so" "2/1" \
	"$(grep -c 'server is read-only (SQLSTATE 25006): connecting again' "$work/ro.err" | head -n 1)/$(grep -c 'still read-only after connecting again' "$work/ro.err")"
check "and mentions target_session_attrs" 1 "$(grep -c 'target_session_attrs=read-write' "$work/ro.err" | awk '{ print ($1 > 0) }')"
start_relay ro --dbname "$db" --poll 0.5
reconnected_twice() { [ "$(grep -c 'reconnecting' "$work/ro.err")" -ge 2 ]; }
wait_until 60 reconnected_twice
q postgres "ALTER DATABASE $db RESET default_transaction_read_only" >/dev/null
wait_until 60 at_least 2 "$work/ro.out"
check "a daemon keeps connecting again, and delivers once the server is writable" "2/0" \
	"$(lines "$work/ro.out")/$(pending)"
stop_relay "$RELAY_PID" 30
check "the relay stops on SIGTERM, exit 0" 0 "$STOP_RC"

# --- keepalives and tcp_user_timeout by default ---------------------------------
if command -v strace >/dev/null; then
	# a listener that accepts and never answers
	python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(5)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    c, _ = s.accept()
    conns.append(c)' >"$work/port" &
	listener=$!
	PIDS+=($listener)
	wait_until 30 test -s "$work/port"
	port=$(head -n 1 "$work/port")
	# (connect_timeout=2: the relay gives up on the silent server by itself)
	for dbname in "host=127.0.0.1 port=$port dbname=x connect_timeout=2" \
		"host=127.0.0.1 port=$port dbname=x connect_timeout=2 keepalives_idle=7 tcp_user_timeout=9000"; do
		timeout 60 strace -f -e trace=setsockopt -o "$work/sockopt" "$RELAY" --dbname "$dbname" --once >/dev/null 2>&1
		opts=$(grep -o 'SO_KEEPALIVE, \[1\]\|TCP_KEEPIDLE, \[[0-9]*\]\|TCP_KEEPINTVL, \[[0-9]*\]\|TCP_KEEPCNT, \[[0-9]*\]\|TCP_USER_TIMEOUT, \[[0-9]*\]' "$work/sockopt" | tr '\n' ' ')
		case $dbname in
		*keepalives_idle*)
			check "keywords in --dbname override them" \
				"SO_KEEPALIVE, [1] TCP_KEEPIDLE, [7] TCP_KEEPINTVL, [10] TCP_KEEPCNT, [3] TCP_USER_TIMEOUT, [9000] " "$opts" ;;
		*)
			check "a TCP connection has keepalives (30 s, 10 s, 3) and tcp_user_timeout (60 s) by default" \
				"SO_KEEPALIVE, [1] TCP_KEEPIDLE, [30] TCP_KEEPINTVL, [10] TCP_KEEPCNT, [3] TCP_USER_TIMEOUT, [60000] " "$opts" ;;
		esac
	done
	t0=$SECONDS
	"$RELAY" --dbname "host=127.0.0.1 port=$port dbname=x connect_timeout=2" --once >/dev/null 2>"$work/silent.err"
	check "a server that accepts and never answers: exit 2 after connect_timeout" "2/yes" \
		"$?/$([ $((SECONDS - t0)) -le 15 ] && echo yes || echo "no: $((SECONDS - t0)) s")"
	check "saying so" 1 "$(grep -c 'no answer from the server within connect_timeout (2 s)' "$work/silent.err")"
	# several hosts: the silent one, then the cluster's socket
	emit 1
	timeout 60 "$RELAY" --dbname "host=127.0.0.1,$PGHOST port=$port,$PGPORT dbname=$db connect_timeout=2" \
		--once >"$work/hosts.out" 2>"$work/hosts.err"
	check "several hosts: the relay moves on from the silent one and delivers, exit 0" "0/1" "$?/$(lines "$work/hosts.out")"
	kill -KILL "$listener"
	{ wait "$listener"; } 2>/dev/null || true
else
	not_ok "strace is installed (tools/run installs it)"
fi
