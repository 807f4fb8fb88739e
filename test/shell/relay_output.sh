#!/usr/bin/env bash
# relay_output: standard output as the recipient, under the faults a
# machine meets.  On a regular file the batch's lines are synced
# (fdatasync) before its COMMIT (strace), and a sync that fails is a failed
# write (exit 4, the batch rolled back: an LD_PRELOAD shim makes fdatasync
# fail); a pipe is not synced.  A full disk (a small tmpfs) and
# RLIMIT_FSIZE mid-line end the relay with exit 4 (not SIGXFSZ), and the
# next run starts on a new line, so every delivered event is on a line
# that parses.  Two relays writing lines longer than PIPE_BUF to one pipe
# never interleave them.  A relay blocked writing to a pipe nobody reads
# stops on SIGTERM, handing the unwritten events back.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.  The tmpfs needs
# root; strace and a C compiler are in tools/run's packages.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_output
new_db "$db"

# emit DB N BYTES: N events of kind "big" whose payload holds BYTES of text
emit() {
	q "$1" "SELECT count(okno_emit('big', jsonb_build_object('n', i, 's', repeat('x', $3))))
	          FROM generate_series(1, $2) AS i" >/dev/null
}
pending() { q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL"; }
# report FILE: "delivered events on a line that parses / delivered events /
# lines that do not parse"
report() {
	python3 - "$1" "$(q "$db" "SELECT string_agg(id::text, ',') FROM outbox WHERE delivered_at IS NOT NULL")" <<'PY'
import json, sys
delivered = set(filter(None, sys.argv[2].split(",")))
seen, bad = set(), 0
for line in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    try:
        seen.add(json.loads(line)["event_id"])
    except Exception:
        bad += 1
print("%d/%d/%d" % (len(delivered & seen), len(delivered), bad))
PY
}
clear_outbox() { q "$db" "DELETE FROM outbox" >/dev/null; }

# --- the sync before the commit --------------------------------------------
if command -v strace >/dev/null; then
	emit "$db" 30 10
	strace -f -s 64 -e trace=fdatasync,fsync,sendto -o "$work/trace" \
		"$RELAY" --dbname "$db" --once --batch 10 >>"$work/synced.jsonl" 2>"$work/synced.err"
	check "on a file: --once delivers 30 events, exit 0" "0/30" "$?/$(lines "$work/synced.jsonl")"
	# each COMMIT the relay sends comes after a fdatasync of fd 1 that
	# follows the batch's last line
	verdict=$(python3 - "$work/trace" <<'PY'
import re, sys
synced, commits, unsynced = False, 0, 0
for line in open(sys.argv[1]):
    if re.search(r"fdatasync\(1\)\s*=\s*0", line):
        synced = True
    elif "sendto(" in line and "COMMIT" in line:
        commits += 1
        if not synced:
            unsynced += 1
        synced = False
print("%d commits, %d not preceded by a sync" % (commits, unsynced))
PY
	)
	check "every delivery transaction with lines commits after fdatasync of the file" \
		"4 commits, 1 not preceded by a sync" "$verdict"
	emit "$db" 10 10
	strace -f -e trace=fdatasync,fsync -o "$work/trace_pipe" \
		"$RELAY" --dbname "$db" --once 2>"$work/pipe.err" | cat >"$work/pipe.jsonl"
	check "on a pipe: delivered, and nothing synced (durability is the reader's)" "10/0" \
		"$(lines "$work/pipe.jsonl")/$(grep -c 'fdatasync\|fsync' "$work/trace_pipe")"
else
	not_ok "strace is installed (tools/run installs it)"
fi

# --- a sync that fails is a write that failed ------------------------------
cat >"$work/nosync.c" <<'C'
#include <errno.h>
int fdatasync(int fd) { (void) fd; errno = EIO; return -1; }
int fsync(int fd) { (void) fd; errno = EIO; return -1; }
C
if cc -shared -fPIC -o "$work/nosync.so" "$work/nosync.c" 2>"$work/cc.err"; then
	emit "$db" 5 10
	LD_PRELOAD=$work/nosync.so "$RELAY" --dbname "$db" --once >>"$work/nosync.jsonl" 2>"$work/nosync.err"
	check "a sync that fails ends the relay with exit 4" 4 "$?"
	check "and says why" 1 "$(grep -c 'could not sync standard output to disk: Input/output error' "$work/nosync.err")"
	check "and the batch is rolled back: the 5 events are pending" 5 "$(pending)"
	"$RELAY" --dbname "$db" --once >>"$work/nosync.jsonl" 2>>"$work/nosync.err"
	check "the next run delivers them" "0/0" "$?/$(pending)"
else
	not_ok "the fdatasync shim builds" "$(cat "$work/cc.err")"
fi
clear_outbox

# --- a full disk, and RLIMIT_FSIZE, in the middle of a line -----------------
if [ "$(id -u)" -eq 0 ]; then
	mkdir -p "$work/full"
	if mount -t tmpfs -o size=64k tmpfs "$work/full"; then
		emit "$db" 40 3000
		"$RELAY" --dbname "$db" --once --batch 5 >>"$work/full/events.jsonl" 2>"$work/full.err"
		check "a full disk ends the relay with exit 4" 4 "$?"
		check "and says why" 1 "$(grep -c 'No space left on device' "$work/full.err")"
		delivered_before=$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL")
		mount -o remount,size=8m "$work/full"
		"$RELAY" --dbname "$db" --once --batch 5 >>"$work/full/events.jsonl" 2>>"$work/full.err"
		check "with room again the next run delivers the rest, exit 0" "0/0" "$?/$(pending)"
		check "it started on a new line" 1 "$(grep -c 'does not end with a newline' "$work/full.err")"
		r=$(report "$work/full/events.jsonl")
		check "every delivered event is on a line that parses (before the fault: $delivered_before)" \
			"40/40" "${r%/*}"
		check "at most the one line cut short does not parse" yes "$([ "${r##*/}" -le 1 ] && echo yes || echo "no: ${r##*/}")"
		umount "$work/full"
	else
		not_ok "a tmpfs can be mounted"
	fi
else
	echo "ok - a full disk # skip: needs root (a tmpfs)"
fi
clear_outbox
emit "$db" 20 3000
(ulimit -f 32 && exec "$RELAY" --dbname "$db" --once --batch 5 >>"$work/fsize.jsonl" 2>"$work/fsize.err")
check "RLIMIT_FSIZE ends the relay with exit 4, not SIGXFSZ" 4 "$?"
check "and says why" 1 "$(grep -c 'File too large' "$work/fsize.err")"
"$RELAY" --dbname "$db" --once --batch 5 >>"$work/fsize.jsonl" 2>>"$work/fsize.err"
check "without the limit the next run delivers the rest, exit 0" "0/0" "$?/$(pending)"
r=$(report "$work/fsize.jsonl")
check "every delivered event is on a line that parses" "20/20" "${r%/*}"

# --- two relays, one pipe, lines longer than PIPE_BUF -------------------------
clear_outbox
emit "$db" 400 6000
{
	"$RELAY" --dbname "$db" --once --batch 10 2>"$work/two1.err" &
	"$RELAY" --dbname "$db" --once --batch 10 2>"$work/two2.err" &
	wait
} | cat >"$work/two.jsonl"
r=$(report "$work/two.jsonl")
check "two relays on one pipe: every event on a line of its own that parses, no line cut" "400/400/0" "$r"

# --- a reader that stops reading, and SIGTERM -------------------------------
clear_outbox
emit "$db" 200 1000
mkfifo "$work/fifo"
# (sleep opens the fifo for reading and never reads)
sleep 600 <"$work/fifo" &
reader=$!
PIDS+=("$reader")
"$RELAY" --dbname "$db" --batch 200 >"$work/fifo" 2>"$work/blocked.err" &
relay=$!
PIDS+=("$relay")
# the batch is drained and its lines fill the pipe: the relay waits for room
in_write() {
	[ "$(q "$db" "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db'
	               AND application_name = 'okno-relay' AND state = 'idle in transaction'")" -ge 1 ]
}
check_true "the relay is blocked writing to the pipe" wait_until 60 in_write
stop_relay "$relay" 20
check "SIGTERM ends it, exit 0" 0 "$STOP_RC"
check "and it said it handed the rest back" 1 "$(grep -c 'stopped while standard output took no more' "$work/blocked.err")"
kill "$reader" 2>/dev/null
check "the events it could not write are pending again" yes \
	"$([ "$(pending)" -ge 100 ] && echo yes || echo "no: $(pending) pending")"
"$RELAY" --dbname "$db" --once >/dev/null 2>"$work/after.err"
check "and the next run delivers them" "0/0" "$?/$(pending)"
