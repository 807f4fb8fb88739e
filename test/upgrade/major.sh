#!/usr/bin/env bash
# test/upgrade/major.sh: a user's major upgrade.  A database with okno and
# data of every kind (bookings, keys, delivered, due, delayed and parked
# events, a cancellation, the purge horizon) on the host's PostgreSQL 15 is
# dumped with the target version's pg_dump and restored into a cluster of
# that version (17, 18: TARGETS), where okno is installed.  There every key
# replays its card, the due events are delivered once, the delayed and
# parked ones stay, new bookings go on after the old ids, and okno_verify
# is empty.
#
# Run by tools/test-all, as root (chroot, mounts).  Prints one "ok - ..." or
# "not ok - ..." line per check.
set -u -o pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
PACKAGES=
PGVER=15
. "$top/tools/lib.sh"
TARGETS=${TARGETS:-"17 18"}

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
check() {	# check DESCRIPTION WANT GOT
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1"; echo "#   want: $2"; echo "#   got:  $3"; fi
}

ROOTS=()
finish() {
	local rc=$? r
	for r in "${ROOTS[@]}"; do
		umount -l "$r$SRC_SOCK" 2>/dev/null
		umount_root "$r"
	done
	cluster_stop $rc
}
trap finish EXIT

# --- the source: PostgreSQL 15 -------------------------------------------------
[ -f "$PG_CONFIG" ] && [ -f "$($PG_CONFIG --sharedir)/extension/okno.control" ] || {
	not_ok "okno is installed into the host's PostgreSQL 15 (make test first)"; exit 1; }
cluster_start major 54341 fsync=off || { not_ok "a PostgreSQL 15 cluster starts"; exit 1; }
SRC_SOCK=$PGHOST
"$PGBIN/createdb" okno_src
psql15() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d okno_src "$@"; }
psql15 >/dev/null <<'SQL' || { not_ok "data for the upgrade on 15"; exit 1; }
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
DO $$ BEGIN PERFORM okno_create_tables(); END $$;
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('november room'), ('october room');
CREATE TABLE upgrade_requests (actor int, key text, payload jsonb, card jsonb);
INSERT INTO upgrade_requests (actor, key, payload)
SELECT 1 + i % 2, 'major-' || i,
       jsonb_build_object('resource_id', 1 + i % 2,
           'starts_at', to_char((timestamptz '2027-01-01 00:00+00' + i * interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'),
           'ends_at', to_char((timestamptz '2027-01-01 00:30+00' + i * interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'))
  FROM generate_series(1, 30) AS i;
UPDATE upgrade_requests SET card = okno_create_booking(actor, key, payload);
-- delivered, delayed (a failure), parked, cancelled; the purge horizon
SELECT count(*) FROM okno_drain(10);
SET okno.retry_base = '1h';
SELECT okno_record_failure(event_id, 'recipient down') FROM okno_drain(1);
SET okno.max_attempts = 1;
SELECT okno_record_failure(event_id, 'given up') FROM okno_drain(1);
SELECT okno_cancel_booking(actor, (card ->> 'id')::bigint) FROM upgrade_requests WHERE key = 'major-3';
-- an operation's key (0.7.0), and the tombstone of an expired booking key
CREATE FUNCTION upgrade_echo(r jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT jsonb_build_object('echo', r) $$;
SELECT okno_idempotent('echo', 'shop', 'major-op', '{"n": 1}', 'upgrade_echo(jsonb)');
INSERT INTO okno_key_tombstone VALUES (sha256(convert_to(':major-gone:1', 'UTF8')), now());
SELECT * FROM okno_purge('100 years', '100 years');
SQL
want_due=$(psql15 -c "SELECT due_now FROM okno_outbox_status")
want_state=$(psql15 -c "SELECT pending, delayed, parked FROM okno_outbox_status")
want_rows=$(psql15 -c "SELECT (SELECT count(*) FROM bookings) || ' ' || (SELECT count(*) FROM idempotency) || ' ' || (SELECT count(*) FROM outbox)")
check "okno_verify is empty on 15 before the dump" "" "$(psql15 -c "SELECT * FROM okno_verify()")"

for v in $TARGETS; do
	root=$(tools/pgroot "$v" 2>/dev/null) || { not_ok "a Debian root with PostgreSQL $v"; continue; }
	ROOTS+=("$root")
	mount_root "$root"
	mkdir -p "$root$SRC_SOCK"
	mountpoint -q "$root$SRC_SOCK" || mount --bind "$SRC_SOCK" "$root$SRC_SOCK"
	copy_tree "$root/tmp/okno-major"
	out=$(chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		PGVER="$v" SRC_SOCK="$SRC_SOCK" SRC_PORT=54341 \
		bash /tmp/okno-major/test/upgrade/restore.sh 2>&1)
	printf '%s\n' "$out" | grep -v '^ok \|^not ok ' | sed 's/^/#   /'
	result() { printf '%s\n' "$out" | sed -n "s/^RESULT $1=//p" | tail -n 1; }
	r_server=$(result server) r_rows=$(result rows) r_state=$(result state) r_drained=$(result drained)
	server=${r_server:-?}
	printf '%s\n' "$out" | grep '^ok \|^not ok ' | sed "s/^\(ok\|not ok\) - /\1 - PostgreSQL $v ($server): /"
	check "PostgreSQL $v ($server): every row came over" "$want_rows" "${r_rows:-}"
	check "PostgreSQL $v ($server): the outbox's state came over (pending, delayed, parked)" \
		"$want_state" "${r_state:-}"
	check "PostgreSQL $v ($server): the due events are delivered, once" "$want_due|0" "${r_drained:-}"
	unset r_rows r_state r_drained r_server
done
