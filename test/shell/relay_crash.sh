#!/usr/bin/env bash
# relay_crash: a relay killed with SIGKILL in the middle of its work loses
# nothing.  Whatever its recipient got in the delivery transaction that
# never committed is pending again and a new relay hands it out again (the
# duplicates of "at least once"); nothing that committed is handed out
# twice.  Once with --exec (a handler that takes a while, so the kill
# lands inside a batch), once with JSON lines on stdout (--batch 3, many
# events, so the kill lands wherever it lands).
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_crash
new_db "$db"

ids_of() {	# ids_of FILE: the event ids of the JSON lines in FILE, sorted
	[ -f "$1" ] || return 0
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["event_id"])
' "$1" | sort
}

# crash_and_recover NAME BATCH KILL_AFTER RELAY-ARGS...: run a continuous
# relay, SIGKILL it once its recipient has KILL_AFTER events, note which
# events were pending right then, finish with --once, check.  The
# recipient's lines: $work/NAME.1 (the killed relay), $work/NAME.2 (the
# --once relay); "@RUN@" in RELAY-ARGS becomes 1 or 2.  Without --exec the
# relays' stdout is the recipient.
crash_and_recover() {
	local name=$1 batch=$2 kill_after=$3 total pending_n out1 out2
	shift 3
	total=$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")
	out1=$work/$name.out
	out2=$work/$name.once.out
	case " $* " in
	*" --exec "*) ;;
	*) out1=$work/$name.1 out2=$work/$name.2 ;;
	esac

	"$RELAY" --dbname "$db" --batch "$batch" "${@//@RUN@/1}" >"$out1" 2>"$work/$name.err" &
	RELAY_PID=$!
	PIDS+=("$RELAY_PID")
	disown "$RELAY_PID"	# no "Killed" notice from bash
	if ! wait_until 60 at_least "$kill_after" "$work/$name.1"; then
		not_ok "$name: the relay delivers" "$(cat "$work/$name.err")"
		return
	fi
	kill -KILL "$RELAY_PID"
	# committed state right after the kill: the killed relay's open batch
	# is invisible to us, so it counts as pending
	q "$db" "SELECT id FROM outbox WHERE delivered_at IS NULL ORDER BY id" >"$work/$name.pending"
	wait_until 60 exited "$RELAY_PID"
	# a command the killed relay had started may still be writing
	wait_until 60 commands_done
	# its backend rolls back and ends once it sees the socket closed; until
	# then its rows stay locked and a drain would skip them
	wait_until 60 no_relay_backends "$db"
	check "$name: the killed relay's session ends" "" "$(relay_backends "$db")"
	pending_n=$(lines "$work/$name.pending")
	echo "# $name: killed after $(lines "$work/$name.1") of $total events; $pending_n pending"
	if [ "$pending_n" -gt 0 ] && [ "$pending_n" -lt "$total" ]; then
		ok "$name: SIGKILL in the middle (some events delivered, some pending)"
	else
		not_ok "$name: SIGKILL in the middle (some events delivered, some pending)" \
			"$pending_n of $total pending"
	fi

	timeout 120 "$RELAY" --dbname "$db" --batch "$batch" --once "${@//@RUN@/2}" \
		>"$out2" 2>"$work/$name.once.err"
	check "$name: the next relay (--once) exits 0" 0 $?

	ids_of "$work/$name.1" >"$work/$name.ids1"
	ids_of "$work/$name.2" >"$work/$name.ids2"
	sort -m "$work/$name.ids1" "$work/$name.ids2" >"$work/$name.all"
	check "$name: no event is pending any more" 0 \
		"$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")"
	check "$name: every event reached the recipient at least once" "$total" \
		"$(sort -u "$work/$name.all" | wc -l | tr -d ' ')"
	check "$name: the second relay handed out exactly the events pending after the kill" \
		"$(md5sum <"$work/$name.pending")" "$(md5sum <"$work/$name.ids2")"
	uniq -d "$work/$name.all" >"$work/$name.dups"
	echo "# $name: $(lines "$work/$name.dups") duplicates"
	check "$name: every duplicate was pending after the kill (its first delivery had not committed)" \
		"" "$(comm -23 "$work/$name.dups" "$work/$name.pending" | head -n 5)"
	check "$name: no event reached the recipient more than twice" "" \
		"$(uniq -c "$work/$name.all" | awk '$1 > 2' | head -n 5)"
	if [ "$(lines "$work/$name.dups")" -le "$batch" ]; then
		ok "$name: the duplicates are at most one batch ($batch)"
	else
		not_ok "$name: the duplicates are at most one batch ($batch)" "$(lines "$work/$name.dups") duplicates"
	fi
}

# no command of the relay's (the handler below) is running any more
commands_done() { ! pgrep -f "$work/handler" >/dev/null; }

# --exec: each event takes 20 ms; batches of 10; kill after 55 events
book "$db" 1 200
cat >"$work/handler" <<EOF
#!/bin/sh
echo \$\$ >>"$work/pgids"
cat >>"$work/exec.\$1"
sleep 0.02
EOF
chmod +x "$work/handler"
crash_and_recover exec 10 55 --exec "$work/handler @RUN@"

# stdout: 3,000 events in batches of 3; kill after 300 lines (the relay
# writes thousands of lines a second: the kill must land well before the
# end, also on a busy machine)
book "$db" 1001 3000
crash_and_recover stdout 3 300
