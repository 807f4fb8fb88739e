# relay/testlib.sh: helpers for test/shell/relay_*.sh (sourced, not run;
# it lives here so that tools/run, which runs every test/shell/*.sh, does
# not take it for a test).
#
# The tests run from the repository root against the throwaway cluster of
# tools/run (PGHOST, PGPORT, PGUSER, PGBIN) and print one "ok - ..." or
# "not ok - ..." line per check.  Each test uses a database of its own,
# bounds every wait, and on exit kills the processes it started and drops
# its database.  KEEP=1 keeps the work directory (the relays' stdout and
# stderr) for a look after a failure.

set -u
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
RELAY=${RELAY:-relay/okno-relay}
unset PGOPTIONS PGAPPNAME
export PGDATABASE=postgres LC_ALL=C

work=$(mktemp -d "${TMPDIR:-/tmp}/okno-relay-test.XXXXXX")
chmod 755 "$work"
DBS=()
PIDS=()

cleanup() {
	local p db
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	{ wait; } 2>/dev/null
	# commands of a killed relay run in process groups of their own
	if [ -f "$work/pgids" ]; then
		while read -r p; do
			kill -KILL -- "-$p" 2>/dev/null
		done <"$work/pgids"
	fi
	for db in "${DBS[@]}"; do
		"$PGBIN/dropdb" --if-exists --force "$db" 2>/dev/null
	done
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

ok() { echo "ok - $1"; }
not_ok() {	# not_ok DESCRIPTION [DETAIL...]
	local d=$1
	shift
	echo "not ok - $d"
	for line in "$@"; do
		echo "#   $line"
	done
}
check() {	# check DESCRIPTION WANT GOT
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "want: $2" "got:  $3"
	fi
}
check_true() {	# check_true DESCRIPTION COMMAND...: ok when COMMAND succeeds
	local d=$1
	shift
	if "$@"; then
		ok "$d"
	else
		not_ok "$d" "failed: $*"
	fi
}

q() {	# q DB SQL: the result, unaligned, tuples only
	"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

new_db() {	# new_db NAME: a fresh database with okno, one actor, one resource
	"$PGBIN/dropdb" --if-exists --force "$1" 2>/dev/null
	"$PGBIN/createdb" "$1" || { not_ok "createdb $1"; exit 1; }
	DBS+=("$1")
	"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$1" >/dev/null 2>"$work/new_db.err" <<-'SQL'
		CREATE EXTENSION okno CASCADE;
		DO $$ BEGIN PERFORM okno_create_tables(); END $$;
		INSERT INTO actors (name) VALUES ('ann');
		INSERT INTO resources (name) VALUES ('room');
	SQL
	if [ $? -ne 0 ]; then
		not_ok "okno installs into $1" "$(cat "$work/new_db.err")"
		exit 1
	fi
}

# book DB FIRST COUNT [SCHEMA]: bookings FIRST .. FIRST+COUNT-1 of actor 1 on
# resource 1, one hour each, keys b<N>; 200 per transaction (each create
# holds its locks until commit).  Each writes one booking_created event.
book() {
	local db=$1 first=$2 count=$3 schema=${4:-public}
	q "$db" "DO \$\$
	DECLARE
		i integer;
		s timestamptz;
	BEGIN
		FOR i IN $first .. $first + $count - 1 LOOP
			s := timestamptz '2026-12-01 00:00:00+00' + i * interval '1 hour';
			PERFORM $schema.okno_create_booking(1, 'b' || i,
				pg_catalog.json_build_object('resource_id', 1,
					'starts_at', pg_catalog.to_char(s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
					'ends_at', pg_catalog.to_char((s + interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))::jsonb);
			IF (i - $first) % 200 = 199 THEN
				COMMIT;
			END IF;
		END LOOP;
	END
	\$\$" >/dev/null || { not_ok "create $count bookings in $db"; exit 1; }
}

lines() {	# lines FILE: number of lines (0 for a missing file)
	if [ -f "$1" ]; then
		wc -l <"$1" | tr -d ' '
	else
		echo 0
	fi
}

wait_until() {	# wait_until SECONDS COMMAND...: true once COMMAND succeeds
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.05
	done
	return 0
}

at_least() {	# at_least N FILE: FILE has N lines or more
	[ "$(lines "$2")" -ge "$1" ]
}

exited() {	# exited PID: the process is gone (or a zombie nobody reaped yet)
	! kill -0 "$1" 2>/dev/null ||
		[ "$(sed -n 's/^.*) \(.\).*$/\1/p' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

# start_relay NAME ARGS...: the relay in the background, stdout in
# $work/NAME.out, stderr in $work/NAME.err; its pid in RELAY_PID
start_relay() {
	local name=$1
	shift
	"$RELAY" "$@" >"$work/$name.out" 2>"$work/$name.err" &
	RELAY_PID=$!
	PIDS+=("$RELAY_PID")
}

# stop_relay PID SECONDS: SIGTERM, then wait up to SECONDS; sets STOP_RC
# (the exit status, or "timeout" after a SIGKILL)
stop_relay() {
	kill -TERM "$1" 2>/dev/null
	if wait_until "$2" exited "$1"; then
		wait "$1"
		STOP_RC=$?
	else
		kill -KILL "$1" 2>/dev/null
		{ wait "$1"; } 2>/dev/null
		STOP_RC=timeout
	fi
}

# relay_backends DB: pids of the relay's sessions (application_name okno-relay)
relay_backends() {
	q postgres "SELECT pid FROM pg_stat_activity WHERE application_name = 'okno-relay' AND datname = '$1' ORDER BY pid"
}
no_relay_backends() { [ -z "$(relay_backends "$1")" ]; }

if [ ! -x "$RELAY" ]; then
	not_ok "$RELAY is built (make)"
	exit 1
fi
if ! command -v python3 >/dev/null; then
	not_ok "python3 is installed (the relay tests parse JSON with it)"
	exit 1
fi
