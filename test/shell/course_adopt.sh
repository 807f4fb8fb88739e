#!/usr/bin/env bash
# course_adopt: okno in the course's own databases.  The course's migrations
# make the tables, the course's own Python service (test/course/service: its
# code from the lessons, run with pydantic 2, SQLAlchemy 2 and psycopg 3:
# the system's own where it has them (Debian 13 and testing: the roots of
# tools/test-all), else Debian 13's in the root tools/pgroot 17 builds,
# against this cluster's socket) books and drains, then the database owner
# runs CREATE EXTENSION
# okno.  Every key the course stored replays through okno exactly as the
# course stored it, its pending events are delivered once, okno_verify is
# empty; the course's service and okno work side by side; the adopted
# database survives pg_dump and pg_restore; DROP EXTENSION leaves the
# course's tables.  A lesson-10 database (no outbox) is adopted too.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER)
# as root (chroot, a bind mount of the socket directory); prints one
# "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

# root: where the service runs ("" for this system, whose Python has what
# it needs; Debian 12's pydantic is 1)
if python3 -c 'import sys, pydantic, sqlalchemy, psycopg
sys.exit(0 if pydantic.VERSION.startswith("2.") and sqlalchemy.__version__.startswith("2.") else 1)' 2>/dev/null; then
	root=
else
	if [ "$(id -u)" -ne 0 ]; then
		not_ok "the course's service runs in a Debian 13 root (chroot): run as root"
		exit 0
	fi
	root=$(tools/pgroot 17 2>"$work/pgroot.log") || {
		not_ok "a Debian 13 root with pydantic 2 (tools/pgroot 17)" "$(tail -n 5 "$work/pgroot.log")"
		exit 0
	}
	# the socket directory, at the same path inside the root
	mkdir -p "$root$PGHOST" "$root/tmp"
	mount --bind "$PGHOST" "$root$PGHOST" || { not_ok "bind-mount $PGHOST into $root"; exit 0; }
fi
svc=$(mktemp -d "$root/tmp/okno-course.XXXXXX")
cp test/course/service/*.py "$svc/"
trap '[ -z "$root" ] || umount "$root$PGHOST" 2>/dev/null; rm -rf "$svc"; cleanup; "$PGBIN/psql" -X -q -c "DROP ROLE IF EXISTS course" >/dev/null 2>&1' EXIT

"$PGBIN/psql" -X -q -c "DROP ROLE IF EXISTS course" -c "CREATE ROLE course LOGIN" >/dev/null 2>&1

# course DB LESSON < requests: the course's service as role course, its
# sessions in Moscow time (so its cards carry +03:00); one JSON line out
# per request
course() {
	${root:+chroot "$root"} env -i PATH=/usr/bin:/bin PGTZ=Europe/Moscow COURSE_LESSON="$2" \
		DATABASE_URL="postgresql+psycopg://course@/$1?host=$PGHOST&port=$PGPORT" \
		python3 "${svc#"$root"}/course.py" "${@:3}"
}
as_course() {	# as_course DB SQL...
	local db=$1
	shift
	"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -U course -d "$db" "$@"
}
migrate() {	# migrate DB FILES...
	local db=$1 f
	shift
	"$PGBIN/dropdb" --if-exists --force "$db" 2>/dev/null
	"$PGBIN/createdb" -O course "$db" || { not_ok "createdb $db"; exit 1; }
	DBS+=("$db")
	for f in "$@"; do
		as_course "$db" -f "test/course/migrations/$f" >/dev/null 2>>"$work/migrate.err" ||
			{ not_ok "migration $f in $db" "$(tail -n 3 "$work/migrate.err")"; exit 1; }
	done
	as_course "$db" -c "INSERT INTO actors (name) VALUES ('ann'), ('boris')" \
		-c "INSERT INTO resources (name) VALUES ('november room'), ('october room')" >/dev/null
}
# a request line: actor key body
req() { printf '{"actor": %s, "key": "%s", "body": %s}\n' "$1" "$2" "$(printf '%s' "$3" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')"; }
# okno's answer to the same request, as psql prints a jsonb, or the SQLSTATE
okno() {	# okno DB ACTOR KEY BODY
	as_course "$1" -c "SELECT okno_create_booking($2, '$3', '$4')" 2>&1 | sed -n 's/^ERROR:  \(.*\)$/error: \1/p; /^{/p'
}
same_json() { python3 -c 'import json,sys; sys.exit(0 if json.loads(sys.argv[1]) == json.loads(sys.argv[2]) else 1)' "$1" "$2"; }

# --- lesson 14: the course's service books, then okno adopts ----------------
db=okno_course14
migrate "$db" 001_actors_resources.sql 002_bookings.sql 003_idempotency.sql 005_outbox.sql
B1='{"resource_id": 1, "starts_at": "2026-12-01T10:00:00+03:00", "ends_at": "2026-12-01T11:00:00+03:00"}'
B2='{"resource_id":1,"starts_at":"2026-12-01T08:00:00Z","ends_at":"2026-12-01T09:00:00Z"}'
B3='{"resource_id":2,"starts_at":"2026-12-01T02:00:00.5-05:00","ends_at":"2026-12-01T08:00:00Z"}'
B4='{"resource_id":2,"starts_at":"2026-12-02T10:00:00+05:30","ends_at":"2026-12-02T11:00:00+05:30"}'
{
	req 1 november-room-1 "$B1"
	req 1 november-room-2 "$B2"
	req 2 october-room-1 "$B3"
	req 2 october-room-2 "$B4"
	req 1 november-room-1 "$B1"
	req 1 november-room-1 "$B2"
	req 2 clash-1 "$B1"
} >"$work/requests14"
course "$db" 14 create <"$work/requests14" >"$work/course14.out" 2>"$work/course14.err"
check "the course's service answered all 7 requests" 7 "$(lines "$work/course14.out")"
check "... 4 bookings, a replay, key_reused and slot_busy, as the course promises" \
	"card card card card card key_reused slot_busy" \
	"$(python3 -c 'import json,sys
print(" ".join("card" if "card" in d else d["error"] for d in map(json.loads, open(sys.argv[1]))))' "$work/course14.out")"
course "$db" 14 drain 1 >"$work/drain14.out" 2>>"$work/course14.err"
check "the course's drain_once delivered one event" 1 "$(lines "$work/drain14.out")"
pending=$(as_course "$db" -c "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")
check "3 of the course's events are pending" 3 "$pending"

as_course "$db" -c "CREATE EXTENSION okno CASCADE" >"$work/adopt14.out" 2>&1
check "CREATE EXTENSION okno, by the database owner, adopts the five tables" \
	"actors bookings idempotency outbox resources" \
	"$(as_course "$db" -c "SELECT string_agg(relation, ' ' ORDER BY relation) FROM okno_adoption")"
check "... and says so" 5 "$(grep -c '^WARNING:  okno adopted table' "$work/adopt14.out")"

# every key the course stored replays through okno exactly as stored
n=0
bad=()
while read -r line; do
	key=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["key"])' "$line")
	card=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(json.dumps(d.get("card")))' "$line")
	[ "$card" = null ] && continue
	r=$(grep -F "\"key\": \"$key\"" "$work/requests14" | head -n 1)
	actor=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["actor"])' "$r")
	body=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["body"])' "$r")
	got=$(okno "$db" "$actor" "$key" "$body")
	stored=$(as_course "$db" -c "SELECT response_body FROM idempotency WHERE actor_id = $actor AND request_key = '$key'")
	if same_json "$got" "$stored" && same_json "$got" "$card"; then n=$((n + 1)); else bad+=("$key: okno $got, course $card"); fi
done <"$work/course14.out"
check "okno replays each of the course's 5 answers (4 keys, one replayed) as the course stored it" 5 "$n"
[ ${#bad[@]} -eq 0 ] || not_ok "replays differ" "${bad[@]}"
check "the same key with other data is key_reused through okno as in the course" \
	"error: idempotency key \"november-room-1\" was already used with a different payload" \
	"$(okno "$db" 1 november-room-1 "$B2")"
check "the course's keys keep the course's form (version 0)" "0:4" \
	"$(as_course "$db" -c "SELECT fingerprint_version || ':' || count(*) FROM idempotency GROUP BY fingerprint_version")"
check "okno delivers the course's 3 pending events, once" "3|0" \
	"$(as_course "$db" -c "SELECT count(*) FROM okno_drain(100)")|$(as_course "$db" -c "SELECT count(*) FROM okno_drain(100)")"
check "okno_verify is empty after the adoption" "" "$(as_course "$db" -c "SELECT * FROM okno_verify()")"

# side by side: the course's service goes on writing, okno replays it; each
# replays the other's keys where the forms agree
course "$db" 14 create <<EOF >"$work/beside.out" 2>>"$work/course14.err"
$(req 1 beside-course '{"resource_id":1,"starts_at":"2026-12-03T10:00:00+03:00","ends_at":"2026-12-03T11:00:00+03:00"}')
EOF
check "the course's service books beside okno" 1 "$(grep -c '"card"' "$work/beside.out")"
got=$(okno "$db" 1 beside-course '{"resource_id":1,"starts_at":"2026-12-03T10:00:00+03:00","ends_at":"2026-12-03T11:00:00+03:00"}')
check_true "... and okno replays that key as the course stored it" \
	same_json "$got" "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["card"]))' "$work/beside.out")"
okno "$db" 1 okno-utc '{"resource_id":2,"starts_at":"2026-12-04T07:00:00Z","ends_at":"2026-12-04T08:00:00Z"}' >"$work/okno-utc"
okno "$db" 1 okno-msk '{"resource_id":2,"starts_at":"2026-12-05T10:00:00+03:00","ends_at":"2026-12-05T11:00:00+03:00"}' >"$work/okno-msk"
course "$db" 14 create <<EOF >"$work/beside2.out" 2>>"$work/course14.err"
$(req 1 okno-utc '{"resource_id":2,"starts_at":"2026-12-04T07:00:00Z","ends_at":"2026-12-04T08:00:00Z"}')
$(req 1 okno-msk '{"resource_id":2,"starts_at":"2026-12-05T10:00:00+03:00","ends_at":"2026-12-05T11:00:00+03:00"}')
EOF
check "the course's service replays okno's key written in UTC (the forms agree there)" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$work/okno-utc")" \
	"$(sed -n 1p "$work/beside2.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["card"]["id"])')"
check "... and answers key_reused for okno's key written at +03:00 (they do not)" \
	"key_reused" "$(sed -n 2p "$work/beside2.out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("error"))')"
check "okno_verify is empty with both writing" "" "$(as_course "$db" -c "SELECT * FROM okno_verify()")"

# pg_dump and pg_restore keep it all, as for a fresh install
"$PGBIN/pg_dump" -Fc -d "$db" -f "$work/course14.dump" 2>"$work/dump.err" ||
	not_ok "pg_dump of the adopted database" "$(tail -n 3 "$work/dump.err")"
restored=okno_course14_restored
"$PGBIN/dropdb" --if-exists --force "$restored" 2>/dev/null
"$PGBIN/createdb" -O course "$restored" && DBS+=("$restored")
# (as the database owner, whose CREATE EXTENSION makes it okno's owner
# again, with the privileges okno grants)
"$PGBIN/pg_restore" -U course -d "$restored" "$work/course14.dump" 2>"$work/restore.err"
check "pg_restore of the adopted database, by its owner, reports no error" "" "$(cat "$work/restore.err")"
for t in actors resources bookings idempotency outbox okno_adoption; do
	check "... $t has every row" "$(q "$db" "SELECT count(*) FROM $t")" "$(q "$restored" "SELECT count(*) FROM $t")"
done
got=$(okno "$restored" 1 november-room-1 "$B1")
check_true "... a course key replays there as stored" same_json "$got" \
	"$(q "$db" "SELECT response_body FROM idempotency WHERE actor_id = 1 AND request_key = 'november-room-1'")"
check "... new bookings go on after the course's ids" \
	"$(( $(q "$db" "SELECT max(id) FROM bookings") + 1 ))" \
	"$(okno "$restored" 2 after-restore '{"resource_id":1,"starts_at":"2026-12-09T07:00:00Z","ends_at":"2026-12-09T08:00:00Z"}' |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
check "... okno_verify is empty" "" "$(q "$restored" "SELECT * FROM okno_verify()")"

# DROP EXTENSION leaves the course's tables and rows
before=$(q "$db" "SELECT (SELECT count(*) FROM bookings) || ' ' || (SELECT count(*) FROM idempotency) || ' ' || (SELECT count(*) FROM outbox)")
as_course "$db" -c "DROP EXTENSION okno" >"$work/drop.out" 2>&1
check "DROP EXTENSION okno leaves the five tables with every row" "$before" \
	"$(q "$db" "SELECT (SELECT count(*) FROM bookings) || ' ' || (SELECT count(*) FROM idempotency) || ' ' || (SELECT count(*) FROM outbox)")"
check "... and says so for each" 5 "$(grep -c 'stays: it existed before okno was installed' "$work/drop.out")"

# --- lesson 10: no outbox yet -------------------------------------------------
db=okno_course10
migrate "$db" 001_actors_resources.sql 002_bookings.sql 003_idempotency.sql
{
	req 1 november-room-1 "$B1"
	req 2 october-room-1 "$B3"
} | course "$db" 10 create >"$work/course10.out" 2>"$work/course10.err"
check "the lesson-10 service booked twice" 2 "$(grep -c '"card"' "$work/course10.out")"
as_course "$db" -c "CREATE EXTENSION okno CASCADE" >"$work/adopt10.out" 2>&1
check "okno adopts four tables and makes the outbox" "actors bookings idempotency resources|t" \
	"$(as_course "$db" -c "SELECT string_agg(relation, ' ' ORDER BY relation) FROM okno_adoption")|$(q "$db" "SELECT to_regclass('outbox') IS NOT NULL")"
got=$(okno "$db" 2 october-room-1 "$B3")
check_true "a lesson-10 key replays through okno as stored" same_json "$got" \
	"$(q "$db" "SELECT response_body FROM idempotency WHERE actor_id = 2 AND request_key = 'october-room-1'")"
okno "$db" 1 after-adoption "$B2" >/dev/null
check "only okno's own event is pending" "1" "$(as_course "$db" -c "SELECT count(*) FROM okno_drain(100)")"
check "okno_verify is empty" "" "$(as_course "$db" -c "SELECT * FROM okno_verify()")"

check "the course's service wrote nothing to stderr" "" "$(cat "$work/course14.err" "$work/course10.err")"
