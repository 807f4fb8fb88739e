#!/usr/bin/env bash
# test/upgrade/restore.sh: the target side of test/upgrade/major.sh, run in
# the Debian root of PostgreSQL $PGVER.  Dumps the source database from the
# host's 15 (SRC_SOCK, SRC_PORT) with this version's pg_dump, restores it
# into a cluster of this version with okno installed, and checks it; prints
# "ok - ..." lines and "RESULT name=value" lines for major.sh to compare.
set -u -o pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
PACKAGES=
. "$top/tools/lib.sh"

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1"; echo "#   want: $2"; echo "#   got:  $3"; fi; }

if [ ! -f "$($PG_CONFIG --sharedir)/extension/okno.control" ]; then
	build_and_install || { not_ok "okno builds and installs for PostgreSQL $PGVER"; exit 1; }
fi
echo "RESULT server=$("$PGBIN/postgres" --version | awk '{print $3}')"

"$PGBIN/pg_dump" -Fc -h "$SRC_SOCK" -p "$SRC_PORT" -U postgres -d okno_src -f /tmp/okno-major.dump ||
	{ not_ok "pg_dump $PGVER dumps the database of 15"; exit 1; }
ok "pg_dump $PGVER dumps the database of 15"

cluster_start restore 54342 fsync=off || { not_ok "a cluster of $PGVER starts"; exit 1; }
trap 'cluster_stop $?; rm -f /tmp/okno-major.dump' EXIT
"$PGBIN/createdb" okno_dst
"$PGBIN/pg_restore" -d okno_dst /tmp/okno-major.dump 2>/tmp/okno-major.err
# Debian's 15.20 and 17.12 keep a column option pg_attver on every column of
# every table; pg_dump 18.6 (Debian testing, older than those) copies it
# into the dump and the 18.6 server refuses it, for any table of any
# database.  The user's way round, as docs/UPGRADING.md says: restore
# through a script without those lines.
if grep -q 'unrecognized parameter "pg_attver"' /tmp/okno-major.err; then
	echo "# pg_dump $PGVER copies 15's column option pg_attver, which this server refuses:"
	echo "# restored again through pg_restore -f - without those lines (docs/UPGRADING.md: Upgrading PostgreSQL)"
	"$PGBIN/dropdb" okno_dst && "$PGBIN/createdb" okno_dst
	"$PGBIN/pg_restore" -f - /tmp/okno-major.dump |
		sed -E '/^ALTER TABLE ONLY .* ALTER COLUMN .* SET \(pg_attver=[0-9]+\);$/d' |
		"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d okno_dst >/dev/null 2>/tmp/okno-major.err
fi
check "pg_restore reports no error" "" "$(cat /tmp/okno-major.err)"
q() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d okno_dst -c "$1"; }

check "okno is at the current version" "$(sed -n "s/^default_version = '\(.*\)'/\1/p" okno.control)" \
	"$(q "SELECT extversion FROM pg_extension WHERE extname = 'okno'")"
check "every key replays its card" "0" \
	"$(q "SELECT count(*) FROM upgrade_requests r WHERE okno_create_booking(r.actor, r.key, r.payload) IS DISTINCT FROM r.card")"
check "a key with other data is key_reused" "OKB04" \
	"$("$PGBIN/psql" -X -q -At -d okno_dst -c "\\set VERBOSITY sqlstate" \
		-c "SELECT okno_create_booking(2, 'major-1', '{\"resource_id\":1,\"starts_at\":\"2030-01-01T00:00:00Z\",\"ends_at\":\"2030-01-01T01:00:00Z\"}')" 2>&1 |
		sed -n 's/^ERROR:  \(.*\)$/\1/p')"
echo "RESULT rows=$(q "SELECT (SELECT count(*) FROM bookings) || ' ' || (SELECT count(*) FROM idempotency) || ' ' || (SELECT count(*) FROM outbox)")"
echo "RESULT state=$(q "SELECT pending, delayed, parked FROM okno_outbox_status")"
echo "RESULT drained=$(q "SELECT count(*) FROM okno_drain(1000)")|$(q "SELECT count(*) FROM okno_drain(1000)")"
check "the parked event stays parked, with its error" "given up" \
	"$(q "SELECT last_error FROM outbox WHERE parked_at IS NOT NULL")"
check "a new booking goes on after the old ids" "$(( $(q "SELECT max(id) FROM bookings") + 1 ))" \
	"$(q "SELECT okno_create_booking(2, 'after-upgrade', '{\"resource_id\":1,\"starts_at\":\"2031-01-01T00:00:00Z\",\"ends_at\":\"2031-01-01T01:00:00Z\"}') ->> 'id'")"
check "the operation's key replays its response" "{\"echo\": {\"n\": 1}} t" \
	"$(q "SELECT format('%s %s', response, replayed) FROM okno_idempotent_result('echo', 'shop', 'major-op', '{\"n\": 1}', 'upgrade_echo(jsonb)')")"
check "the expired key is answered from its tombstone (key_expired)" "OKB11" \
	"$("$PGBIN/psql" -X -q -At -d okno_dst -c "\\set VERBOSITY sqlstate" \
		-c "SELECT okno_create_booking(1, 'major-gone', '{\"resource_id\":1,\"starts_at\":\"2030-02-01T00:00:00Z\",\"ends_at\":\"2030-02-01T01:00:00Z\"}')" 2>&1 |
		sed -n 's/^ERROR:  \(.*\)$/\1/p')"
check "okno_verify is empty" "" "$(q "SELECT * FROM okno_verify()")"
