#!/usr/bin/env bash
# relay_process: the relay as a process among others.  As PID 1 of a PID
# namespace (a container without an init) it reaps the orphans its
# commands leave, so no zombies pile up.  A command, and whatever it
# started in its process group, dies with a relay killed by SIGKILL
# instead of running on.  A command's
# environment has none of libpq's PG* variables (PGPASSWORD ...), its
# OKNO_EVENT_ID, and its OKNO_EVENT_KIND only for a kind that follows
# okno_emit's rule (the JSON line on its stdin carries any kind).  A
# password in --dbname, key=value or URI, is not in /proc/PID/cmdline nor
# in the relay's messages.  A forged UUID v7 event id (far in the future or
# the past) does not reach the delivery lag histogram.  --help takes no
# value; seconds are plain decimals within bounds (--poll, --exec-timeout,
# --statement-timeout).  A trigger on outbox that relies on the database's
# search_path works under the relay's drain.  A cancelled statement at
# start (57014) is retried, 5 attempts in all.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.  The PID 1 part
# needs unshare --pid (util-linux, root), the start-up part a C compiler
# (an LD_PRELOAD shim, as in relay_output); each is skipped without.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_relay_process
new_db "$db"

pending() { q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL"; }
none_pending() { [ "$(pending)" -eq 0 ]; }
clear_outbox() { q "$db" "DELETE FROM outbox" >/dev/null; }
emit() {	# emit N: N events of kind "tick"
	q "$db" "SELECT count(okno_emit('tick', jsonb_build_object('n', i))) FROM generate_series(1, $1) AS i" >/dev/null
}
# children PPID [STATE]: the pids of the processes whose parent is PPID
# (only those in STATE, or only those not in it with STATE "!Z")
children() {
	local f s pid state ppid rest
	for f in /proc/[0-9]*/stat; do
		{ read -r s <"$f"; } 2>/dev/null || continue
		pid=${s%% *}
		rest=${s##*) }
		read -r state ppid _ <<<"$rest"
		[ "$ppid" = "$1" ] || continue
		case "${2:-}" in
		"") ;;
		!*) [ "$state" != "${2#!}" ] || continue ;;
		*) [ "$state" = "$2" ] || continue ;;
		esac
		echo "$pid"
	done
}
count() { "$@" | wc -l | tr -d ' '; }
metric() {	# metric FILE NAME: the value of the series NAME in FILE
	sed -n "s/^$2{[^}]*} //p" "$1" 2>/dev/null
}
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 < b + 0) }'; }

# --- PID 1 of a PID namespace: orphans are reaped -----------------------------
# every command leaves two orphans (a background child, and a grandchild
# of a subshell); as PID 1 they become the relay's, and only it can reap
# them: the old relay waited for its command alone, one zombie per orphan
if ! unshare --pid --fork --kill-child true 2>"$work/unshare.err"; then
	echo "ok - PID 1 reaps orphans # skip: unshare --pid fails here: $(head -n 1 "$work/unshare.err")"
else
	emit 30
	unshare --pid --fork --kill-child "$RELAY" --dbname "$db" --exec-timeout 30 \
		--exec 'cat >/dev/null; sleep 0.2 & (sleep 0.1 &); exit 0' \
		>"$work/pid1.out" 2>"$work/pid1.err" &
	ush=$!
	PIDS+=("$ush")
	has_child() { [ -n "$(children "$ush")" ]; }
	wait_until 30 has_child
	pid1=$(children "$ush" | head -n 1)
	if [ -z "$pid1" ] ||
		[ "$(sed -n 's/^NSpid:.*[[:space:]]//p' "/proc/$pid1/status" 2>/dev/null)" != 1 ]; then
		not_ok "the relay runs as PID 1 of a PID namespace" "pid: ${pid1:-none}" "$(cat "$work/pid1.err")"
	else
		PIDS+=("$pid1")
		check_true "as PID 1 the relay delivers 30 events whose commands leave orphans" \
			wait_until 90 none_pending
		# all the orphans ended (no living child but a command in hand) and none
		# is left a zombie
		reaped() { [ "$(count children "$pid1" '!Z')" -eq 0 ] && [ "$(count children "$pid1" Z)" -eq 0 ]; }
		if wait_until 15 reaped; then
			ok "... and reaps them: no zombie left"
		else
			not_ok "... and reaps them: no zombie left" \
				"living children: $(count children "$pid1" '!Z'), zombies: $(count children "$pid1" Z)"
		fi
		kill -TERM "$pid1"
		if wait_until 20 exited "$ush"; then
			wait "$ush"
			rc=$?
		else
			rc=timeout
		fi
		check "as PID 1 it stops on SIGTERM with 0" 0 "$rc"
	fi
fi
clear_outbox

# --- kill -9 of the relay: its command dies too -------------------------------
# the command notes its process group (for the cleanup), then starts a
# sleep in the background and one in the foreground: neither is the
# relay's child (sh forks them), and both must die with the relay
emit 1
start_relay kill9 --dbname "$db" --exec-timeout 600 \
	--exec "cut -d' ' -f5 /proc/\$\$/stat >>'$work/pgids'; sleep 300 & cut -d' ' -f5 /proc/\$\$/stat >'$work/hang.pgid.tmp'; mv '$work/hang.pgid.tmp' '$work/hang.pgid'; sleep 300"
relay=$RELAY_PID
# in_group PGID: the live (not zombie) processes of process group PGID
in_group() {
	local f s rest n=0
	for f in /proc/[0-9]*/stat; do
		{ read -r s <"$f"; } 2>/dev/null || continue
		rest=${s##*) }
		set -- $rest
		[ "$3" = "$PGID_WANTED" ] && [ "$1" != Z ] && n=$((n + 1))
	done
	echo "$n"
}
group_gone() { [ "$(in_group)" -eq 0 ]; }
group_of_three() { [ "$(in_group)" -ge 3 ]; }
if ! wait_until 30 test -s "$work/hang.pgid"; then
	not_ok "the command runs" "$(cat "$work/kill9.err")"
else
	PGID_WANTED=$(cat "$work/hang.pgid")
	check_true "the command runs: sh and its two sleeps, in a process group of their own (--exec-timeout 600)" \
		wait_until 10 group_of_three
	kill -KILL "$relay"
	{ wait "$relay"; } 2>/dev/null
	check_true "after kill -9 of the relay every process of the command's group dies too" wait_until 10 group_gone
fi
# (the killed relay's session ends, and its transaction with it)
wait_until 30 no_relay_backends "$db"
clear_outbox

# --- the command's environment ------------------------------------------------
# the relay's PG* variables are its connection's, not the command's; the
# kind reaches the environment only when okno_emit would have taken it (a
# plain INSERT may write a newline, "$(...)", upper case)
cat >"$work/envdump" <<EOF
#!/bin/sh
env >"$work/env.\$OKNO_EVENT_ID"
cat >"$work/line.\$OKNO_EVENT_ID"
EOF
chmod +x "$work/envdump"
long_kind=a$(printf 'b%.0s' $(seq 39))	# 40 characters: okno_emit's longest
good=$(q "$db" "SELECT okno_emit('good.kind-1_x', '{}')")
good40=$(q "$db" "SELECT okno_emit('$long_kind', '{}')")
bad_kinds=("bad
kind\$(touch x)" "Upper" "9lives" "sp ace")
bad=()
for k in "${bad_kinds[@]}"; do
	bad+=("$(q "$db" "INSERT INTO outbox (id, kind, payload) VALUES (gen_random_uuid(), \$k\$$k\$k\$, '{}') RETURNING id")")
done
PGPASSWORD=sekret789 PGDATABASE=$db PGOPTIONS='-c work_mem=8MB' PGAPPNAME=someone \
	PGCONNECT_TIMEOUT=20 PGTZ=UTC FOO=bar OKNO_EVENT_KIND=inherited \
	"$RELAY" --once --exec "$work/envdump" >"$work/env.out" 2>"$work/env.err"
check "--once with PG* variables set delivers the 6 events, exit 0" "0/0" "$?/$(pending)"
all=("$good" "$good40" "${bad[@]}")
envs() { (cd "$work" && cat $(printf 'env.%s ' "${all[@]}")) 2>/dev/null; }
check "no PG* variable reaches the command (PGHOST, PGPORT, PGUSER, PGDATABASE, PGOPTIONS ...)" "" \
	"$(envs | sed -n 's/^\(PG[A-Za-z0-9_]*\)=.*/\1/p' | sort -u | tr '\n' ' ')"
check "PGPASSWORD in particular: in no command's environment" 0 "$(envs | grep -c sekret789)"
check "another variable (FOO=bar) does reach every command" 6 "$(envs | grep -c '^FOO=bar$')"
ids_ok=0
for id in "${all[@]}"; do
	grep -qx "OKNO_EVENT_ID=$id" "$work/env.$id" 2>/dev/null && ids_ok=$((ids_ok + 1))
done
check "OKNO_EVENT_ID is each command's event id" 6 "$ids_ok"
check "OKNO_EVENT_KIND is the kind when it follows okno_emit's rule (40 characters at most)" \
	"OKNO_EVENT_KIND=good.kind-1_x|OKNO_EVENT_KIND=$long_kind" \
	"$(grep '^OKNO_EVENT_KIND=' "$work/env.$good")|$(grep '^OKNO_EVENT_KIND=' "$work/env.$good40")"
unset_n=0
for id in "${bad[@]}"; do
	[ -f "$work/env.$id" ] && ! grep -q '^OKNO_EVENT_KIND=' "$work/env.$id" && unset_n=$((unset_n + 1))
done
check "OKNO_EVENT_KIND is unset (not even the relay's own) for a kind that breaks it: a newline and \$(...), upper case, a digit first, a blank" \
	4 "$unset_n"
verbatim=$(python3 - "$work" "${bad[0]}" <<'PY'
import json, sys
print(json.loads(open(sys.argv[1] + "/line." + sys.argv[2]).read())["kind"] == "bad\nkind$(touch x)")
PY
)
check "... while the JSON line on its stdin carries that kind verbatim" True "$verbatim"
clear_outbox

# --- a password in --dbname ---------------------------------------------------
# (trust authentication takes any password)
cmdline() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null; }
# (connected: its options long parsed)
connected() { grep -q 'connected to database' "$work/$1.err"; }
start_relay pw1 --dbname "host=$PGHOST port=$PGPORT dbname=$db user=$PGUSER password=sekret123" --poll 5 --verbose
relay=$RELAY_PID
if wait_until 30 connected pw1; then
	line=$(cmdline "$relay")
	check "key=value: /proc/PID/cmdline does not show the password (the rest it does)" "no/yes" \
		"$(case "$line" in *sekret123*) echo yes ;; *) echo no ;; esac)/$(case "$line" in *"dbname=$db"*) echo yes ;; *) echo no ;; esac)"
else
	not_ok "the relay connects with a key=value --dbname and a password" "$(cat "$work/pw1.err")"
fi
stop_relay "$relay" 20
start_relay pw2 --dbname "postgresql://$PGUSER:sekret456@/$db?host=$PGHOST&port=$PGPORT" --poll 5 --verbose
relay=$RELAY_PID
if wait_until 30 connected pw2; then
	line=$(cmdline "$relay")
	check "URI: /proc/PID/cmdline does not show the password (the rest it does)" "no/yes" \
		"$(case "$line" in *sekret456*) echo yes ;; *) echo no ;; esac)/$(case "$line" in *"@/$db?host="*) echo yes ;; *) echo no ;; esac)"
else
	not_ok "the relay connects with a URI --dbname and a password" "$(cat "$work/pw2.err")"
fi
stop_relay "$relay" 20
# blanks around "=", a quoted password with a blank in it
start_relay pw5 --dbname "host=$PGHOST port=$PGPORT dbname=$db user=$PGUSER password = 'sek ret123'" --poll 5 --verbose
relay=$RELAY_PID
if wait_until 30 connected pw5; then
	line=$(cmdline "$relay")
	check "password = 'sek ret123': /proc/PID/cmdline shows no part of it" "no" \
		"$(case "$line" in *sek*|*ret123*) echo yes ;; *) echo no ;; esac)"
else
	not_ok "the relay connects with password = '...' in --dbname" "$(cat "$work/pw5.err")"
fi
stop_relay "$relay" 20
# libpq's messages about a URI it cannot parse quote the URI, or the token
"$RELAY" --once --dbname "postgresql://$PGUSER:sekret456@[]/$db" >/dev/null 2>"$work/pw3.err"
rc=$?
check "a URI libpq refuses (quoted in its message): exit 2, the message there, the password not" \
	"2/1/0" "$rc/$(grep -c 'IPv6 host address may not be empty in URI' "$work/pw3.err")/$(grep -c sekret456 "$work/pw3.err")"
"$RELAY" --once --dbname "postgresql://$PGUSER:sek%zzret@/$db?host=$PGHOST&port=$PGPORT" >/dev/null 2>"$work/pw4.err"
rc=$?
check "a password libpq cannot decode (quoted in its message): exit 2, the message there, the password not" \
	"2/1/0" "$rc/$(grep -c 'invalid percent-encoded token' "$work/pw4.err")/$(grep -c 'sek%zzret' "$work/pw4.err")"

# --- forged UUID v7 event ids and the lag histogram ---------------------------
# v7 <ms since 1970, SQL>: an event with a version 7 id of that time
v7() {
	q "$db" "INSERT INTO outbox (id, kind, payload) VALUES
		((pg_catalog.lpad(pg_catalog.to_hex(($1)::bigint), 12, '0') || '7' ||
		  pg_catalog.substr(pg_catalog.md5(pg_catalog.random()::text), 1, 3) || '8' ||
		  pg_catalog.substr(pg_catalog.md5(pg_catalog.random()::text), 1, 15))::uuid,
		 'forged', '{}') RETURNING id"
}
now_ms="pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)"
# lag FILE: "delivered count sum"
lag() {
	echo "$(metric "$1" okno_relay_events_delivered_total) $(metric "$1" okno_relay_delivery_lag_seconds_count) $(metric "$1" okno_relay_delivery_lag_seconds_sum)"
}
for forged in "2200:7258118400000" "1980:315532800000"; do
	year=${forged%%:*}
	emit 2
	id=$(v7 "${forged#*:}")
	"$RELAY" --once --dbname "$db" --metrics-file "$work/lag$year.prom" >"$work/lag$year.out" 2>"$work/lag$year.err"
	rc=$?
	read -r delivered n sum <<<"$(lag "$work/lag$year.prom")"
	check "an event with an id of the year $year and 2 others: delivered (exit 0, 3 lines, 3 in the file)" \
		"0/3/3" "$rc/$(lines "$work/lag$year.out")/$delivered"
	check "... the forged id is not observed: lag count 2" 2 "$n"
	if lt "$sum" 3600; then
		ok "... and the lag sum stays small ($sum s)"
	else
		not_ok "... and the lag sum stays small" "sum: $sum"
	fi
	clear_outbox
done
# within a minute ahead the clocks are apart, not forged: a lag of 0
id=$(v7 "$now_ms + 30000")
"$RELAY" --once --dbname "$db" --metrics-file "$work/lagsoon.prom" >/dev/null 2>"$work/lagsoon.err"
check "an id 30 s ahead: observed as a lag of 0 (count 1, in the first bucket)" "1/1" \
	"$(metric "$work/lagsoon.prom" okno_relay_delivery_lag_seconds_count)/$(sed -n 's/^okno_relay_delivery_lag_seconds_bucket{.*le="0.001"} //p' "$work/lagsoon.prom")"
clear_outbox

# --- the command line ---------------------------------------------------------
"$RELAY" --help=x >"$work/opt.out" 2>"$work/opt.err"
rc=$?
check "--help=x: exit 1, a message about --help=x (not \"unknown option -h\")" "1/1/0" \
	"$rc/$(grep -c -- '--help=x' "$work/opt.err")/$(grep -c 'unknown option -h' "$work/opt.err")"
for arg in "--poll=0x10" "--exec-timeout=1e-9" "--statement-timeout=0x10" "--statement-timeout=1e3" \
	"--poll=0" "--poll=-1" "--poll=nan" "--poll=" "--statement-timeout=0"; do
	opt=${arg%%=*}
	value=${arg#*=}
	"$RELAY" --once --dbname "$db" "$opt" "$value" >"$work/opt.out" 2>"$work/opt.err"
	rc=$?
	check "$opt '$value' is refused: exit 1, naming the option" "1/1" \
		"$rc/$(grep -c -- "invalid value \"$value\" for $opt: " "$work/opt.err")"
done
for arg in "--poll=0.5" "--poll=30" "--statement-timeout=2.5"; do
	"$RELAY" --once --dbname "$db" "${arg%%=*}" "${arg#*=}" >"$work/opt.out" 2>"$work/opt.err"
	check "${arg%%=*} ${arg#*=} is taken (--once, nothing due: exit 0)" 0 "$?"
done

# --- a trigger on outbox that relies on the search_path -----------------------
# the drain UPDATEs outbox rows: the owner's trigger on it runs in the
# relay's session as in any other, with the search_path the database's
# settings give (app, public), where it finds note() and seen unqualified
q "$db" "CREATE SCHEMA app;
	CREATE TABLE app.seen (id uuid);
	CREATE FUNCTION app.note(uuid) RETURNS void LANGUAGE plpgsql
		AS \$\$ BEGIN INSERT INTO seen VALUES (\$1); END \$\$;
	CREATE FUNCTION app.stamp() RETURNS trigger LANGUAGE plpgsql AS \$\$
	BEGIN
		IF NEW.delivered_at IS NOT NULL AND OLD.delivered_at IS NULL THEN
			PERFORM note(NEW.id);
		END IF;
		RETURN NEW;
	END \$\$;
	CREATE TRIGGER stamp BEFORE UPDATE ON public.outbox FOR EACH ROW EXECUTE FUNCTION app.stamp();
	ALTER DATABASE $db SET search_path = app, public" >/dev/null
emit 3
"$RELAY" --once --dbname "$db" >"$work/trigger.out" 2>"$work/trigger.err"
rc=$?
check "with a trigger on outbox that needs search_path = app, public: --once delivers, exit 0" \
	"0/3/0" "$rc/$(lines "$work/trigger.out")/$(pending)"
check "... and the trigger ran for each event" 3 "$(q "$db" "SELECT count(*) FROM app.seen")"
q "$db" "ALTER DATABASE $db RESET search_path; DROP TRIGGER stamp ON public.outbox" >/dev/null
clear_outbox

# --- a cancelled statement at start (57014): retried --------------------------
# While another session holds pg_extension (of this database only) in
# ACCESS EXCLUSIVE mode, the relay's first statement (the lookup of okno's
# schema) waits until a statement_timeout or the relay's own
# --statement-timeout cancels it, at every attempt.  The lock is taken
# only once the relay has connected: a backend that starts when the
# database's relcache init file must be rebuilt (autovacuum's or a DDL's
# change to a catalog removes it) opens every catalog with a syscache,
# pg_extension too, and would wait for the lock in its start-up, before
# the relay could send anything.  So an LD_PRELOAD shim holds the relay's
# first statement (libpq's PQsendQuery, PQexec ...) until
# $OKNO_TEST_PAUSE/go exists, having created $OKNO_TEST_PAUSE/paused.
cat >"$work/pause.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;

static void
pause_once(void)
{
	static int	done = 0;
	const char *dir = getenv("OKNO_TEST_PAUSE");
	char		path[4096];
	int			i;
	int			fd;

	if (done || dir == NULL)
		return;
	done = 1;
	snprintf(path, sizeof(path), "%s/paused", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT, 0644)) >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/go", dir);
	for (i = 0; i < 6000 && access(path, F_OK) != 0; i++)
		usleep(10000);
}

int
PQsendQuery(PGconn *c, const char *q)
{
	int			(*real) (PGconn *, const char *) = (int (*) (PGconn *, const char *)) dlsym(RTLD_NEXT, "PQsendQuery");

	pause_once();
	return real(c, q);
}

int
PQsendQueryParams(PGconn *c, const char *q, int n, const Oid *t, const char *const *v,
				  const int *l, const int *f, int rf)
{
	int			(*real) (PGconn *, const char *, int, const Oid *, const char *const *,
						 const int *, const int *, int) =
		(int (*) (PGconn *, const char *, int, const Oid *, const char *const *,
				  const int *, const int *, int)) dlsym(RTLD_NEXT, "PQsendQueryParams");

	pause_once();
	return real(c, q, n, t, v, l, f, rf);
}

PGresult *
PQexec(PGconn *c, const char *q)
{
	PGresult   *(*real) (PGconn *, const char *) = (PGresult * (*) (PGconn *, const char *)) dlsym(RTLD_NEXT, "PQexec");

	pause_once();
	return real(c, q);
}

PGresult *
PQexecParams(PGconn *c, const char *q, int n, const Oid *t, const char *const *v,
			 const int *l, const int *f, int rf)
{
	PGresult   *(*real) (PGconn *, const char *, int, const Oid *, const char *const *,
						 const int *, const int *, int) =
		(PGresult * (*) (PGconn *, const char *, int, const Oid *, const char *const *,
						 const int *, const int *, int)) dlsym(RTLD_NEXT, "PQexecParams");

	pause_once();
	return real(c, q, n, t, v, l, f, rf);
}
C
locked() {
	[ "$(q postgres "SELECT count(*) FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_database d ON d.oid = l.database
	                  WHERE d.datname = '$db' AND l.relation = 'pg_catalog.pg_extension'::regclass
	                    AND l.mode = 'AccessExclusiveLock' AND l.granted")" -eq 1 ]
}
lock_extension() {
	PGAPPNAME=okno_test_locker "$PGBIN/psql" -X -q -d "$db" \
		-c "BEGIN; LOCK TABLE pg_catalog.pg_extension IN ACCESS EXCLUSIVE MODE; SELECT pg_catalog.pg_sleep(300)" \
		>/dev/null 2>&1 &
	LOCKER=$!
	PIDS+=("$LOCKER")
	wait_until 30 locked || { not_ok "another session locks pg_extension"; exit 1; }
}
unlock_extension() {
	q postgres "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity
	            WHERE application_name = 'okno_test_locker' AND datname = '$db'" >/dev/null
	wait_until 30 exited "$LOCKER"
	{ wait "$LOCKER"; } 2>/dev/null
}
# paused_relay NAME ARGS...: the relay, held before its first statement
# (its pid in RELAY_PID); ready NAME PID: held, or ended already
paused_relay() {
	local name=$1
	shift
	mkdir -p "$work/$name.pause"
	OKNO_TEST_PAUSE=$work/$name.pause LD_PRELOAD=$work/pause.so start_relay "$name" "$@"
}
ready() { [ -e "$work/$1.pause/paused" ] || exited "$2"; }
go() { : >"$work/$1.pause/go"; }
finish() {	# finish PID: FINISH_RC, its exit status once it ends (60 s at most), or "timeout"
	if wait_until 60 exited "$1"; then
		wait "$1"
		FINISH_RC=$?
	else
		FINISH_RC=timeout
	fi
}
if ! cc -shared -fPIC -o "$work/pause.so" "$work/pause.c" -ldl 2>"$work/cc.err"; then
	echo "ok - a statement cancelled at start # skip: the LD_PRELOAD shim does not build: $(head -n 1 "$work/cc.err")"
	exit 0
fi
emit 1
PGOPTIONS='-c statement_timeout=300' paused_relay start1 --once --dbname "$db"
r1=$RELAY_PID
paused_relay start2 --once --dbname "$db" --statement-timeout 0.3
r2=$RELAY_PID
wait_until 30 ready start1 "$r1"
wait_until 30 ready start2 "$r2"
lock_extension
go start1
go start2
finish "$r1"
rc1=$FINISH_RC
finish "$r2"
rc2=$FINISH_RC
check "cancelled by statement_timeout at every attempt: 5 attempts, then gave up, exit 3" "3/5/1" \
	"$rc1/$(grep -c "looking up okno's schema failed, will retry: .*(SQLSTATE 57014)" "$work/start1.err")/$(grep -c '^okno-relay: cannot set up the session: gave up after 5 attempts$' "$work/start1.err")"
check "cancelled by --statement-timeout 0.3 at every attempt: the same" "3/5/5/1" \
	"$rc2/$(grep -c "looking up okno's schema got no answer within 0.3 s: cancelling it" "$work/start2.err")/$(grep -c "will retry: .*(SQLSTATE 57014)" "$work/start2.err")/$(grep -c 'gave up after 5 attempts' "$work/start2.err")"
unlock_extension
# the lock goes once the first attempt is cancelled: a later attempt works
# (statement_timeout 1 s: the 4 attempts left span 5 s)
PGOPTIONS='-c statement_timeout=1000' paused_relay start3 --once --dbname "$db"
r3=$RELAY_PID
wait_until 30 ready start3 "$r3"
lock_extension
go start3
retried() { grep -q 'will retry' "$work/start3.err"; }
wait_until 30 retried
unlock_extension
finish "$r3"
rc3=$FINISH_RC
check "the lock released after the first cancel: a later attempt works, the event delivered, exit 0" \
	"0/1/0" "$rc3/$(lines "$work/start3.out")/$(pending)"
