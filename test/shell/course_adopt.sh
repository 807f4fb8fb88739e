#!/usr/bin/env bash
# course_adopt: okno in the course's own databases.  The course's migrations
# make the tables, the course's own Python service (test/course/service: its
# code from the lessons, run with pydantic 2, SQLAlchemy 2 and psycopg 3:
# the system's own where it has them (Debian 13 and testing: the roots of
# tools/test-all), else Debian 13's in the root tools/pgroot python names,
# against this cluster's socket) books and drains, then the database owner
# runs CREATE EXTENSION okno, which changes none of the course's tables, and
# SELECT okno_prepare_tables(), which adds what okno needs; the tables stay
# the owner's, and its next migration (ALTER TABLE bookings ADD COLUMN)
# works with okno in use.  Every key the course stored replays through okno
# exactly as the course stored it, its pending events are delivered once,
# okno_verify is empty; the course's service and okno work side by side; a
# plain pg_dump and pg_restore keep every row, the owner's new column
# included; DROP EXTENSION leaves the course's tables as they are.  A
# lesson-10 database (no outbox) gets its outbox from okno_create_tables().
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
	root=$(tools/pgroot python 2>"$work/pgroot.log") || {
		not_ok "a Debian 13 root with pydantic 2 (tools/pgroot python)" "$(tail -n 5 "$work/pgroot.log")"
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

# the course's tables as objects: owner, membership, columns, defaults,
# constraints, indexes, triggers, grants
describe="SELECT md5(string_agg(l, ';' ORDER BY l)) FROM (
  SELECT format('%s %s %s %s %s', c.relname, c.relkind, pg_get_userbyid(c.relowner), c.relacl,
         EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')) AS l
    FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relname !~ '^okno_'
  UNION ALL SELECT format('%s.%s %s %s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname !~ '^okno_' AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT format('%s %s', conrelid::regclass, pg_get_constraintdef(oid)) FROM pg_constraint
   WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text !~ '^okno_'
  UNION ALL SELECT format('trigger %s %s', tgrelid::regclass, tgname) FROM pg_trigger WHERE NOT tgisinternal) AS s"
before=$(q "$db" "$describe")
as_course "$db" -c "CREATE EXTENSION okno CASCADE" >"$work/install14.out" 2>&1
check "CREATE EXTENSION okno, by the database owner, changes none of the course's tables" "$before" "$(q "$db" "$describe")"
check "... and okno does not serve them until they have what it needs, saying what that is" \
	"error: okno's tables in schema public cannot serve it" \
	"$(okno "$db" 1 not-yet '{"resource_id":1,"starts_at":"2026-12-08T07:00:00Z","ends_at":"2026-12-08T08:00:00Z"}')"
as_course "$db" -c "SELECT * FROM okno_prepare_tables()" >"$work/prepare14.out" 2>&1
check "okno_prepare_tables(), by the owner, adds okno's columns (0.7.0: order_key too) and indexes" "10 5" \
	"$(grep -c ': added column ' "$work/prepare14.out") $(grep -c ': created index ' "$work/prepare14.out")"
check "... and the tables are still the course's own, no members of the extension" \
	"actors:course:f bookings:course:f idempotency:course:f outbox:course:f resources:course:f" \
	"$(q "$db" "SELECT string_agg(format('%s:%s:%s', c.relname, pg_get_userbyid(c.relowner), EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')), ' ' ORDER BY c.relname) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname !~ '^okno_'")"

# the course's next migration, by the owner, with okno installed
as_course "$db" -c "ALTER TABLE bookings ADD COLUMN note text" \
	-c "CREATE INDEX bookings_by_actor ON bookings (actor_id)" >/dev/null 2>"$work/migrate15.err"
check "the course's next migration (ALTER TABLE bookings ADD COLUMN, CREATE INDEX) runs as the owner" "" \
	"$(cat "$work/migrate15.err")"

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
check "okno_verify is empty once okno serves the tables" "" "$(as_course "$db" -c "SELECT * FROM okno_verify()")"

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

# a booking with the new column filled, by the course's role
as_course "$db" -c "UPDATE bookings SET note = 'from lesson 15' WHERE id = 1" >/dev/null

# a plain pg_dump and pg_restore keep it all
"$PGBIN/pg_dump" -Fc -d "$db" -f "$work/course14.dump" 2>"$work/dump.err" ||
	not_ok "pg_dump of the course's database" "$(tail -n 3 "$work/dump.err")"
restored=okno_course14_restored
"$PGBIN/dropdb" --if-exists --force "$restored" 2>/dev/null
"$PGBIN/createdb" -O course "$restored" && DBS+=("$restored")
# (as the database owner, whose CREATE EXTENSION makes it okno's owner
# again, with the privileges okno grants)
"$PGBIN/pg_restore" -U course -d "$restored" "$work/course14.dump" 2>"$work/restore.err"
check "pg_restore of the course's database, by its owner, reports no error" "" "$(cat "$work/restore.err")"
for t in actors resources bookings idempotency outbox; do
	check "... $t has every row, every column" "$(q "$db" "SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM $t t")" \
		"$(q "$restored" "SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM $t t")"
done
check "... the owner's new column came back with its values" "from lesson 15" \
	"$(q "$restored" "SELECT note FROM bookings WHERE id = 1")"
check "... and the tables as they were" "$(q "$db" "$describe")" "$(q "$restored" "$describe")"
got=$(okno "$restored" 1 november-room-1 "$B1")
check_true "... a course key replays there as stored" same_json "$got" \
	"$(q "$db" "SELECT response_body FROM idempotency WHERE actor_id = 1 AND request_key = 'november-room-1'")"
check "... new bookings go on after the course's ids" \
	"$(( $(q "$db" "SELECT max(id) FROM bookings") + 1 ))" \
	"$(okno "$restored" 2 after-restore '{"resource_id":1,"starts_at":"2026-12-09T07:00:00Z","ends_at":"2026-12-09T08:00:00Z"}' |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
check "... okno_verify is empty" "" "$(q "$restored" "SELECT * FROM okno_verify()")"

# DROP EXTENSION leaves the course's tables and rows
rows="SELECT md5(concat_ws('|', (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM bookings t), (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM idempotency t), (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM outbox t)))"
before="$(q "$db" "$describe") $(q "$db" "$rows")"
as_course "$db" -c "DROP EXTENSION okno" >"$work/drop.out" 2>&1
check "DROP EXTENSION okno leaves the five tables as they were, every row" "$before" \
	"$(q "$db" "$describe") $(q "$db" "$rows")"
# and the course's service goes on without okno
course "$db" 14 create <<EOF >"$work/after-drop.out" 2>>"$work/course14.err"
$(req 2 after-drop '{"resource_id":1,"starts_at":"2026-12-10T10:00:00+03:00","ends_at":"2026-12-10T11:00:00+03:00"}')
EOF
check "... and the course's service books there without okno" 1 "$(grep -c '"card"' "$work/after-drop.out")"

# --- lesson 10: no outbox yet -------------------------------------------------
db=okno_course10
migrate "$db" 001_actors_resources.sql 002_bookings.sql 003_idempotency.sql
{
	req 1 november-room-1 "$B1"
	req 2 october-room-1 "$B3"
} | course "$db" 10 create >"$work/course10.out" 2>"$work/course10.err"
check "the lesson-10 service booked twice" 2 "$(grep -c '"card"' "$work/course10.out")"
as_course "$db" -c "CREATE EXTENSION okno CASCADE" -c "SELECT * FROM okno_create_tables()" >"$work/install10.out" 2>&1
check "okno_create_tables() makes the outbox, the course's role's" "outbox: created|course" \
	"$(grep -o 'outbox: created$' "$work/install10.out")|$(q "$db" "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass('outbox')")"
got=$(okno "$db" 2 october-room-1 "$B3")
check_true "a lesson-10 key replays through okno as stored" same_json "$got" \
	"$(q "$db" "SELECT response_body FROM idempotency WHERE actor_id = 2 AND request_key = 'october-room-1'")"
okno "$db" 1 with-okno "$B2" >/dev/null
check "only okno's own event is pending" "1" "$(as_course "$db" -c "SELECT count(*) FROM okno_drain(100)")"
check "okno_verify is empty" "" "$(as_course "$db" -c "SELECT * FROM okno_verify()")"

check "the course's service wrote nothing to stderr" "" "$(cat "$work/course14.err" "$work/course10.err")"
