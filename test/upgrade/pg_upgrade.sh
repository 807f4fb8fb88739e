#!/usr/bin/env bash
# test/upgrade/pg_upgrade.sh: a user's pg_upgrade of a database with okno
# from PostgreSQL 15 to 17.  pg_upgrade needs both versions' binaries in one
# filesystem, and 17's need Debian 13's C library, so it all runs in the
# Debian 13 root of tools/pgroot with a private copy of the host's 15 (the
# server, okno and btree_gist as installed on the host) under
# /opt/okno-pg15.*, the host's libraries that Debian 13 lacks beside it
# (LD_LIBRARY_PATH), and okno built and installed there for 17 from a copy
# of the checkout.
#
# On 15 a role that is not a superuser owns a database, installs okno,
# creates the application's tables (its own, with a column, a trigger and
# an index of its own on each) and fills them: bookings under keys,
# delivered, due, delayed, parked and held-back events, cancellations, a
# subscriber that was handed some events and parked one, the purge
# horizon.  Then 17's pg_upgrade (--check, then the upgrade, copying) and
# checks on 17: every row of every table as it was, the tables still the
# role's, every key replaying its card, new bookings after the old ids,
# each event delivered once to each subscriber (none lost, none twice),
# parked ones parked until requeued, and okno_verify() empty.
#
# Run as root (chroot, mounts): bash test/upgrade/pg_upgrade.sh; tools/test-all
# runs it when 17 is among its versions.  Prints one "ok - ..." or "not ok -
# ..." line per check.  Ports 54650 (15) and 54651 (17), sockets only.
set -u -o pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
# shellcheck disable=SC2034  # read by tools/lib.sh
PACKAGES=

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
check() {	# check DESCRIPTION WANT GOT
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1"; echo "#   want: $2"; echo "#   got:  $3"; fi
}
check_lines() {	# check_lines DESCRIPTION WANT GOT: the same, for many lines (a diff)
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1"; diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | head -n 40 | sed 's/^/#   /'; fi
}

OLD_PORT=54650
NEW_PORT=54651
WANT_VERSION=$(sed -n "s/^default_version = '\(.*\)'/\1/p" okno.control)

# --- on the host: the root, the copy of 15, the copy of the checkout ----------
if [ "${1:-}" != inside ]; then
	# shellcheck disable=SC2034  # read by tools/lib.sh
	PGVER=15
	# shellcheck source=tools/lib.sh
	. "$top/tools/lib.sh"
	if [ "$(id -u)" -ne 0 ]; then
		not_ok "test/upgrade/pg_upgrade.sh runs as root (chroot, mounts)"
		exit 1
	fi
	ext=/usr/share/postgresql/15/extension
	lib=/usr/lib/postgresql/15/lib
	host_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ext/okno.control" 2>/dev/null)
	check "the host's PostgreSQL 15 has okno $WANT_VERSION installed (the working tree's version)" \
		"$WANT_VERSION" "$host_version"
	[ -n "$host_version" ] || exit 1

	root=$(tools/pgroot 17) || { not_ok "a Debian 13 root with PostgreSQL 17 (tools/pgroot 17)"; exit 1; }
	PG15=
	SRC=
	# shellcheck disable=SC2317  # run by the trap
	finish() {
		[ -n "$PG15" ] && rm -rf "$PG15"
		[ -n "$SRC" ] && rm -rf "$SRC"
		return 0
	}
	trap finish EXIT
	trap 'exit 130' INT TERM HUP
	if ! PG15=$(mktemp -d "$root/opt/okno-pg15.XXXXXX") || ! SRC=$(mktemp -d "$root/tmp/okno-pgupgrade.XXXXXX"); then
		not_ok "temporary directories in $root"
		exit 1
	fi
	chmod 755 "$PG15" "$SRC"

	# The host's 15 as installed, but for JIT (llvmjit.so needs LLVM 14,
	# which Debian 13 lacks; without the file the server runs without JIT).
	# The layout under $PG15 is the host's: PostgreSQL finds its share and
	# lib directories relative to its binaries.  okno is copied again
	# until the copy is the host's (make install may be rewriting it).
	mkdir -p "$PG15/usr/lib/postgresql" "$PG15/usr/share/postgresql" "$PG15/lib"
	copied=no
	for _ in 1 2 3; do
		rm -rf "$PG15/usr/lib/postgresql/15" "$PG15/usr/share/postgresql/15"
		if ! tar -C /usr/lib/postgresql -cf - --exclude=15/lib/llvmjit.so --exclude=15/lib/llvmjit_types.bc \
			--exclude=15/lib/bitcode 15 | tar -C "$PG15/usr/lib/postgresql" -xf - ||
			! cp -a /usr/share/postgresql/15 "$PG15/usr/share/postgresql/"; then
			break
		fi
		same=yes
		for f in "$lib/okno.so" "$ext"/okno.control "$ext"/okno--*.sql; do
			cmp -s "$f" "$PG15$f" || same=no
		done
		[ "$same" = yes ] && { copied=yes; break; }
	done
	[ "$copied" = yes ] || { not_ok "a copy of the host's PostgreSQL 15 with okno in $PG15"; exit 1; }
	absent=
	for f in usr/share/postgresql/15/extension/okno.control "usr/share/postgresql/15/extension/okno--$WANT_VERSION.sql" \
		usr/lib/postgresql/15/lib/okno.so usr/share/postgresql/15/extension/btree_gist.control \
		usr/lib/postgresql/15/lib/btree_gist.so usr/lib/postgresql/15/lib/plpgsql.so; do
		[ -f "$PG15/$f" ] || absent="$absent /$f"
	done
	ls "$PG15"/usr/share/postgresql/15/extension/btree_gist--*.sql >/dev/null 2>&1 ||
		absent="$absent btree_gist--*.sql"
	check "the copy of the host's 15 has okno.control, okno--$WANT_VERSION.sql, okno.so and btree_gist" "" "${absent# }"

	# the host's libraries that the root lacks, for every program and
	# module of the copy (and for those libraries in turn)
	inroot=${PG15#"$root"}
	elves=()
	for f in "$PG15"/usr/lib/postgresql/15/bin/* "$PG15"/usr/lib/postgresql/15/lib/*.so; do
		elves+=("${f#"$root"}")
	done
	added=
	need=
	for _ in 1 2 3 4 5; do
		chroot "$root" env LD_LIBRARY_PATH="$inroot/lib" ldd "${elves[@]}" >"$PG15/ldd.out" 2>&1
		grep -q 'libc\.so\.6 => /' "$PG15/ldd.out" || { need="(ldd in the root failed)"; break; }
		need=$(sed -n 's/^[[:space:]]*\([^[:space:]]*\) => not found.*/\1/p' "$PG15/ldd.out" | sort -u)
		[ -n "$need" ] || break
		for l in $need; do
			f=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ {print $NF; exit}')
			[ -n "$f" ] && cp -L "$f" "$PG15/lib/$l" && added="$added $l" && elves+=("$inroot/lib/$l")
		done
	done
	rm -f "$PG15/ldd.out"
	check "the libraries the copy needs are all in the root or copied from the host${added:+ (copied:$added)}" "" "$need"
	[ -z "$need" ] || exit 1

	copy_tree "$SRC"
	root_run "$root" OKNO_PG15="$inroot" bash "${SRC#"$root"}/test/upgrade/pg_upgrade.sh" inside
	exit $?
fi

# --- in the Debian 13 root --------------------------------------------------------
# shellcheck disable=SC2034  # read by tools/lib.sh
PGVER=17
# shellcheck source=tools/lib.sh
. "$top/tools/lib.sh"
OLD=$OKNO_PG15/usr/lib/postgresql/15/bin
NEW=$PGBIN
export LD_LIBRARY_PATH=$OKNO_PG15/lib PGTZ=UTC PGDATESTYLE=ISO
unset PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGSERVICE PGOPTIONS
TMP=
FINISHED=no
# shellcheck disable=SC2317  # run by the trap
finish() {
	local rc=$? d
	[ "$FINISHED" = yes ] || not_ok "the test ran to its end"
	if [ -n "$TMP" ]; then
		for d in 15:"$OLD" 17:"$NEW"; do
			if [ -f "$TMP/${d%%:*}/postmaster.pid" ]; then
				as_pg "${d#*:}/pg_ctl" -D "$TMP/${d%%:*}" -m fast -w -t 60 stop >/dev/null 2>&1 ||
					as_pg "${d#*:}/pg_ctl" -D "$TMP/${d%%:*}" -m immediate -w -t 60 stop >/dev/null 2>&1
			fi
		done
		if [ "$FINISHED" != yes ] || [ "$rc" -ne 0 ]; then
			for d in "$TMP"/*.log; do
				[ -f "$d" ] && { echo "# --- last lines of $(basename "$d")"; tail -n 20 "$d" | sed 's/^/#   /'; }
			done
		fi
		rm -rf "$TMP"
	fi
}
trap finish EXIT
trap 'exit 130' INT TERM HUP

TMP=$(mktemp -d /tmp/okno-pgupgrade-clusters.XXXXXX) || { not_ok "a temporary directory in the root"; exit 1; }
chown postgres: "$TMP"
chmod 700 "$TMP"

# built from this copy even when test-all's suites installed it a moment ago
if build_and_install 2>"$TMP/build.out"; then
	ok "okno builds and installs for PostgreSQL 17"
else
	not_ok "okno builds and installs for PostgreSQL 17"
	tail -n 30 "$TMP/build.out" | sed 's/^/#   /'
	exit 1
fi

# initdb BINDIR VERSION; start BINDIR VERSION PORT; stop BINDIR VERSION
initdb() {
	as_pg "$1/initdb" -D "$TMP/$2" -U postgres -A trust -E UTF8 --locale=C --no-sync \
		>"$TMP/initdb-$2.log" 2>&1
}
start() {
	as_pg "$1/pg_ctl" -D "$TMP/$2" -l "$TMP/server-$2.log" -w -t 60 \
		-o "-c listen_addresses='' -c unix_socket_directories='$TMP' -c port=$3 -c fsync=off" start >/dev/null
}
stop() { as_pg "$1/pg_ctl" -D "$TMP/$2" -m fast -w -t 60 stop >/dev/null; }

# sql BINDIR PORT ROLE [psql options]: psql on database shop as ROLE, values only
sql() {
	local bin=$1 port=$2 role=$3
	shift 3
	"$bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$TMP" -p "$port" -U "$role" -d shop "$@"
}
q15() { sql "$OLD" "$OLD_PORT" postgres -c "$1"; }
app15() { sql "$OLD" "$OLD_PORT" okno_app "$@"; }
q17() { sql "$NEW" "$NEW_PORT" postgres -c "$1"; }
app17() { sql "$NEW" "$NEW_PORT" okno_app "$@"; }

# every row of the application's five tables, of okno's four and of the
# test's two, as "table md5-of-the-row" lines in order; the sequences'
# positions
TABLES="actors resources bookings idempotency outbox okno_purge_horizon okno_discarded okno_subscriber okno_delivery okno_key okno_key_tombstone pgu_requests pgu_events"
rows() {	# rows q15|q17
	local t
	for t in $TABLES; do
		"$1" "SELECT '$t ' || md5(r::text) FROM $t AS r ORDER BY 1" || echo "$t (failed)"
	done
	"$1" "SELECT 'sequence ' || sequencename || ' ' || coalesce(last_value::text, 'not used')
	        FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1"
}
label() { echo "kind || ' ' || (payload ->> 'booking_id')"; }
# drain_all app15|app17 [SUBSCRIBER]: what repeated drains hand out until
# one hands out nothing (at most ten), one event a line
drain_all() {
	local psql=$1 sub=${2:+", '$2'"} out i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		out=$("$psql" -c "SELECT $(label) FROM okno_drain(100$sub) ORDER BY event_id") || { echo "(drain failed)"; return; }
		[ -n "$out" ] || return 0
		printf '%s\n' "$out"
	done
	echo "(still handing out after ten drains)"
}
sorted() { LC_ALL=C sort | paste -sd ';'; }
# items LIST: how many; plus LIST ITEM: LIST with ITEM (LIST: a;b;c)
items() { if [ -n "$1" ]; then printf '%s\n' "$1" | tr ';' '\n' | wc -l; else echo 0; fi; }
plus() { { [ -z "$1" ] || printf '%s\n' "$1" | tr ';' '\n'; echo "$2"; } | sorted; }
# every table's, view's, sequence's and function's owner and privileges
grants() {	# grants q15|q17
	"$1" "SELECT relname || ' ' || pg_get_userbyid(relowner) || ' ' || coalesce(relacl::text, 'default')
	        FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'v', 'S')
	      UNION ALL
	      SELECT p.oid::regprocedure || ' ' || pg_get_userbyid(proowner) || ' ' || coalesce(proacl::text, 'default')
	        FROM pg_proc p WHERE pronamespace = 'public'::regnamespace ORDER BY 1"
}

# --- 15: the user's database ------------------------------------------------------------
server15=$("$OLD/postgres" --version | awk '{print $3}')
if initdb "$OLD" 15 && start "$OLD" 15 "$OLD_PORT"; then
	ok "the host's PostgreSQL $server15 (the copy) initdb's and starts in the root"
else
	not_ok "the host's PostgreSQL $server15 (the copy) initdb's and starts in the root"
	exit 1
fi
"$OLD/psql" -X -q -v ON_ERROR_STOP=1 -h "$TMP" -p "$OLD_PORT" -U postgres -d postgres \
	-c "CREATE ROLE okno_app LOGIN" -c "CREATE DATABASE shop OWNER okno_app" >/dev/null ||
	{ not_ok "a role okno_app that owns a database shop on 15"; exit 1; }

{
	cat <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
SELECT count(*) FROM okno_create_tables();
-- the application's own column, trigger and index on each of the five
CREATE FUNCTION app_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.app_tag := NEW.app_tag || '+' || TG_TABLE_NAME;
    RETURN NEW;
END $$;
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'] LOOP
        EXECUTE format('ALTER TABLE %I ADD COLUMN app_tag text NOT NULL DEFAULT %L', t, 'app');
        EXECUTE format('CREATE TRIGGER app_stamp BEFORE INSERT ON %I FOR EACH ROW EXECUTE FUNCTION app_stamp()', t);
        EXECUTE format('CREATE INDEX %I ON %I (app_tag)', t || '_app_tag', t);
    END LOOP;
END $$;
SELECT okno_subscribe('journal');
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('red room'), ('blue room');
-- the requests and the cards they got; what happened to which event
CREATE TABLE pgu_requests (actor int, key text, payload jsonb, card jsonb);
CREATE TABLE pgu_events (step text, event_id uuid, kind text, booking bigint);
INSERT INTO pgu_requests (actor, key, payload)
SELECT 1 + i % 2, 'pgu-' || i,
       jsonb_build_object('resource_id', 1 + i % 2,
           'starts_at', to_char(timestamp '2027-02-01 00:00' + i * interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'),
           'ends_at', to_char(timestamp '2027-02-01 00:30' + i * interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'))
  FROM generate_series(1, 20) AS i;
SQL
	# one booking a transaction, as an application's requests come
	for i in $(seq 1 20); do
		echo "UPDATE pgu_requests SET card = okno_create_booking(actor, key, payload) WHERE key = 'pgu-$i';"
	done
	cat <<'SQL'
-- the default subscriber: twelve delivered, one delayed by an hour, one parked
INSERT INTO pgu_events SELECT 'delivered', event_id, kind, (payload ->> 'booking_id')::bigint FROM okno_drain(12);
SET okno.retry_base = '1h';
SELECT event_id AS e FROM okno_drain(1) \gset
INSERT INTO pgu_events SELECT 'delayed', id, kind, (payload ->> 'booking_id')::bigint
  FROM okno_record_failure(:'e', 'recipient down');
SET okno.max_attempts = 1;
SELECT event_id AS e FROM okno_drain(1) \gset
INSERT INTO pgu_events SELECT 'parked', id, kind, (payload ->> 'booking_id')::bigint
  FROM okno_record_failure(:'e', 'given up');
RESET okno.max_attempts;
RESET okno.retry_base;
-- journal: handed eight, parks the third
INSERT INTO pgu_events SELECT 'journal handed', event_id, kind, (payload ->> 'booking_id')::bigint FROM okno_drain(8, 'journal');
SELECT event_id AS e FROM pgu_events WHERE step = 'journal handed' ORDER BY event_id OFFSET 2 LIMIT 1 \gset
SET okno.max_attempts = 1;
INSERT INTO pgu_events SELECT 'journal parked', d.event_id, e.kind, e.booking
  FROM okno_record_failure(:'e', 'journal refused', 'journal') AS d, pgu_events AS e
 WHERE e.step = 'journal handed' AND e.event_id = d.event_id;
RESET okno.max_attempts;
-- two cancellations: of journal's parked booking (delivered by default:
-- due there, held back for journal) and of the booking parked by default
-- (held back there; journal has been handed neither of its events)
SELECT okno_cancel_booking(b.actor_id, b.id) IS NOT NULL FROM bookings b
 WHERE b.id = (SELECT booking FROM pgu_events WHERE step = 'journal parked');
SELECT okno_cancel_booking(b.actor_id, b.id) IS NOT NULL FROM bookings b
 WHERE b.id = (SELECT booking FROM pgu_events WHERE step = 'parked');
INSERT INTO pgu_events SELECT 'cancelled, held back for journal', id, kind, (payload ->> 'booking_id')::bigint
  FROM outbox WHERE kind = 'booking_cancelled' AND (payload ->> 'booking_id')::bigint = (SELECT booking FROM pgu_events WHERE step = 'journal parked');
INSERT INTO pgu_events SELECT 'cancelled, held back', id, kind, (payload ->> 'booking_id')::bigint
  FROM outbox WHERE kind = 'booking_cancelled' AND (payload ->> 'booking_id')::bigint = (SELECT booking FROM pgu_events WHERE step = 'parked');
-- an operation's key (0.7.0), and the tombstone of an expired booking key
CREATE FUNCTION pgu_echo(r jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT jsonb_build_object('echo', r) $$;
SELECT okno_idempotent('echo', 'shop', 'pgu-op', '{"n": 1}', 'pgu_echo(jsonb)');
INSERT INTO okno_key_tombstone VALUES (sha256(convert_to(':pgu-gone:1', 'UTF8')), now());
-- deletes nothing, records the horizon
SELECT * FROM okno_purge('100 years', '100 years');
SQL
} | app15 -f - >"$TMP/fill.out" 2>&1 || { not_ok "the data on 15"; sed 's/^/#   /' "$TMP/fill.out"; exit 1; }

check "on 15: 20 bookings, 20 keys, 22 events" "20 20 22" \
	"$(q15 "SELECT (SELECT count(*) FROM bookings) || ' ' || (SELECT count(*) FROM idempotency) || ' ' || (SELECT count(*) FROM outbox)")"
check "on 15: the application's trigger stamped every row (okno's inserts included)" "2 2 20 20 22" \
	"$(q15 "SELECT (SELECT count(*) FROM actors WHERE app_tag = 'app+actors') || ' ' || (SELECT count(*) FROM resources WHERE app_tag = 'app+resources')
	        || ' ' || (SELECT count(*) FROM bookings WHERE app_tag = 'app+bookings') || ' ' || (SELECT count(*) FROM idempotency WHERE app_tag = 'app+idempotency')
	        || ' ' || (SELECT count(*) FROM outbox WHERE app_tag = 'app+outbox')")"
check "on 15: journal's parked booking was delivered by default (so its cancellation is due there)" "1" \
	"$(q15 "SELECT count(*) FROM pgu_events d, pgu_events j WHERE d.step = 'delivered' AND j.step = 'journal parked' AND d.event_id = j.event_id")"
# what each subscriber is due to get: every event it was not handed, but
# those parked and those held back behind a parked one (and the delayed one)
want_due=$(q15 "SELECT $(label) FROM outbox WHERE id NOT IN
	(SELECT event_id FROM pgu_events WHERE step IN ('delivered', 'delayed', 'parked', 'cancelled, held back'))" | sorted)
want_journal=$(q15 "SELECT $(label) FROM outbox WHERE id NOT IN
	(SELECT event_id FROM pgu_events WHERE step IN ('journal handed', 'cancelled, held back for journal'))" | sorted)
want_parked=$(q15 "SELECT 'booking_created ' || booking || ';booking_cancelled ' || booking FROM pgu_events WHERE step = 'parked'")
want_journal_parked=$(q15 "SELECT event_id || ' journal refused' FROM pgu_events WHERE step = 'journal parked'")
check "on 15: the outbox's counts (pending, due, delayed, parked, held back) are those of the data" \
	"$(( $(items "$want_due") + 2 )) $(items "$want_due") 1 1 1" \
	"$(q15 "SELECT pending || ' ' || due_now || ' ' || delayed || ' ' || parked || ' ' || held_back FROM okno_outbox_status")"
check "on 15: okno_verify() is empty" "" "$(q15 "SELECT * FROM okno_verify()")"

rows q15 >"$TMP/rows-15"
grants15=$(grants q15)
status15=$(q15 "SELECT pending, due_now, delayed, parked, held_back FROM okno_outbox_status")
subs15=$(q15 "SELECT subscriber, pending, due_now, delayed, parked, held_back, not_copied FROM okno_subscribers ORDER BY subscriber")
ext15=$(q15 "SELECT string_agg(extname || ' ' || extversion || ' ' || pg_get_userbyid(extowner), ', ' ORDER BY extname) FROM pg_extension WHERE extname <> 'plpgsql'")
next_id=$(q15 "SELECT max(id) + 1 FROM bookings")
echo "# on 15: outbox $status15; subscribers $(printf '%s' "$subs15" | paste -sd ';'); $ext15"
stop "$OLD" 15 || { not_ok "the 15 cluster stops"; exit 1; }

# --- pg_upgrade --------------------------------------------------------------------
initdb "$NEW" 17 || { not_ok "initdb of 17"; exit 1; }
pg_upgrade() {	# pg_upgrade LOG [--check]
	local log=$1
	shift
	(cd "$TMP" && as_pg env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" timeout 300 "$NEW/pg_upgrade" "$@" \
		-b "$OLD" -B "$NEW" -d "$TMP/15" -D "$TMP/17" -p "$OLD_PORT" -P "$NEW_PORT" \
		-s "$TMP" -U postgres --copy) >"$TMP/$log" 2>&1
}
show_upgrade_logs() {
	sed 's/^/#   /' "$TMP/$1" | tail -n 30
	find "$TMP/17/pg_upgrade_output.d" -name '*.log' -newer "$TMP/initdb-17.log" 2>/dev/null |
		while read -r f; do echo "#   --- $f"; tail -n 15 "$f" | sed 's/^/#   /'; done
}
pg_upgrade pg_upgrade-check.out --check
rc=$?
check "pg_upgrade --check exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || { show_upgrade_logs pg_upgrade-check.out; exit 1; }
check "pg_upgrade --check finds the clusters compatible" 1 "$(grep -c 'Clusters are compatible' "$TMP/pg_upgrade-check.out")"
pg_upgrade pg_upgrade.out
rc=$?
check "pg_upgrade (copy) exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || { show_upgrade_logs pg_upgrade.out; exit 1; }
grep -q 'Upgrade Complete' "$TMP/pg_upgrade.out" || show_upgrade_logs pg_upgrade.out
start "$NEW" 17 "$NEW_PORT" || { not_ok "the upgraded cluster starts on 17"; exit 1; }
server17=$(q17 "SHOW server_version" | awk '{print $1}')
ok "the upgraded cluster starts on PostgreSQL $server17"
# what pg_upgrade tells the user to run next
if [ -f "$TMP/update_extensions.sql" ]; then
	echo "# pg_upgrade wrote update_extensions.sql: $(grep -v 'connect' "$TMP/update_extensions.sql" | paste -sd ' ')"
	"$NEW/psql" -X -q -v ON_ERROR_STOP=1 -h "$TMP" -p "$NEW_PORT" -U postgres -d postgres \
		-f "$TMP/update_extensions.sql" >/dev/null
	check "update_extensions.sql runs" 0 $?
fi
"$NEW/vacuumdb" -h "$TMP" -p "$NEW_PORT" -U postgres --all --analyze-in-stages -q >/dev/null 2>&1
check "vacuumdb --all --analyze-in-stages (as pg_upgrade advises) exits 0" 0 $?

# --- 17: checks --------------------------------------------------------------------
check "okno is at the working tree's version $WANT_VERSION" "$WANT_VERSION" \
	"$(q17 "SELECT extversion FROM pg_extension WHERE extname = 'okno'")"
# pg_upgrade restores every database as its superuser, and PostgreSQL has
# no ALTER EXTENSION ... OWNER TO: a trusted extension that a role created
# belongs to the superuser afterwards (btree_gist as much as okno)
check "the extensions and their versions are as on 15; they belong to postgres now (on 15: $ext15)" \
	"$(printf '%s' "$ext15" | sed 's/ okno_app\(,\|$\)/ postgres\1/g')" \
	"$(q17 "SELECT string_agg(extname || ' ' || extversion || ' ' || pg_get_userbyid(extowner), ', ' ORDER BY extname) FROM pg_extension WHERE extname <> 'plpgsql'")"
# (17's owners have MAINTAIN, new in 17, besides what they had on 15)
check_lines "every table, view, sequence and function keeps its owner and privileges (okno_app's on okno's objects too)" \
	"$grants15" "$(grants q17 | sed 's/=arwdDxtm\//=arwdDxt\//g')"
rows q17 >"$TMP/rows-17"
for t in $TABLES sequence; do
	n=$(grep -c "^$t " "$TMP/rows-15")
	check "every row of $t is as on 15 (rows: $n)" \
		"$n $(grep "^$t " "$TMP/rows-15" | md5sum | cut -c1-32)" \
		"$(grep -c "^$t " "$TMP/rows-17") $(grep "^$t " "$TMP/rows-17" | md5sum | cut -c1-32)"
done
diff "$TMP/rows-15" "$TMP/rows-17" | head -n 20 | sed 's/^/#   /'
check "the outbox's counts are as on 15 (pending, due, delayed, parked, held back)" "$status15" \
	"$(q17 "SELECT pending, due_now, delayed, parked, held_back FROM okno_outbox_status")"
check "each subscriber's counts are as on 15 (pending, due, delayed, parked, held back, not copied)" "$subs15" \
	"$(q17 "SELECT subscriber, pending, due_now, delayed, parked, held_back, not_copied FROM okno_subscribers ORDER BY subscriber")"
check "the five tables still belong to okno_app" "actors bookings idempotency outbox resources" \
	"$(q17 "SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class
	         WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND relowner = 'okno_app'::regrole
	           AND relname IN ('actors', 'resources', 'bookings', 'idempotency', 'outbox')")"
check "the five tables are not members of the extension; okno's six tables and its sequence are" \
	"okno_delivery okno_discarded okno_drain_hint okno_key okno_key_tombstone okno_purge_horizon okno_subscriber" \
	"$(q17 "SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
	         WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e' AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno')
	           AND c.relkind IN ('r', 'S')")"
check "the application's column (with its default), trigger and index are on each of the five tables" "5 5 5" \
	"$(q17 "SELECT (SELECT count(*) FROM pg_attribute a JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	                  WHERE a.attname = 'app_tag' AND pg_get_expr(d.adbin, d.adrelid) = '''app''::text'
	                    AND a.attrelid::regclass::text IN ('actors', 'resources', 'bookings', 'idempotency', 'outbox'))
	         || ' ' || (SELECT count(*) FROM pg_trigger WHERE tgname = 'app_stamp' AND tgenabled = 'O')
	         || ' ' || (SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	                     WHERE c.relname LIKE '%\_app\_tag' AND i.indisvalid AND i.indisready)")"
check "every index is valid" "0" "$(q17 "SELECT count(*) FROM pg_index WHERE NOT indisvalid OR NOT indisready")"
check "okno_verify() is empty after the upgrade" "" "$(q17 "SELECT * FROM okno_verify()")"

check "every key replays the card it got on 15 (20 keys)" "20 0" \
	"$(app17 -c "SELECT count(*) || ' ' || count(*) FILTER (WHERE okno_create_booking(actor, key, payload) IS DISTINCT FROM card) FROM pgu_requests")"
check "the operation's key replays its response without running its handler again" "{\"echo\": {\"n\": 1}} t" \
	"$(app17 -c "SELECT format('%s %s', response, replayed) FROM okno_idempotent_result('echo', 'shop', 'pgu-op', '{\"n\": 1}', 'pgu_echo(jsonb)')")"
check "the expired key is answered from its tombstone (key_expired)" 1 \
	"$(app17 -c "SELECT okno_create_booking(1, 'pgu-gone', '{\"resource_id\":1,\"starts_at\":\"2030-02-01T00:00:00Z\",\"ends_at\":\"2030-02-01T01:00:00Z\"}')" 2>&1 |
		grep -c 'has expired')"
check "a key with other data is refused (key_reused)" 1 \
	"$(app17 -c "SELECT okno_create_booking(1, 'pgu-2', '{\"resource_id\":1,\"starts_at\":\"2030-01-01T00:00:00Z\",\"ends_at\":\"2030-01-01T01:00:00Z\"}')" 2>&1 |
		grep -c 'already used with a different payload')"
check "a new booking gets the next id" "$next_id confirmed" \
	"$(app17 -c "SELECT (c ->> 'id') || ' ' || (c ->> 'status') FROM okno_create_booking(1, 'pgu-after', '{\"resource_id\":1,\"starts_at\":\"2027-03-01T10:00:00Z\",\"ends_at\":\"2027-03-01T11:00:00Z\"}') AS c")"
check "the application's trigger stamps what okno writes on 17" "app+bookings app+idempotency app+outbox" \
	"$(q17 "SELECT (SELECT app_tag FROM bookings WHERE id = $next_id) || ' ' || (SELECT app_tag FROM idempotency WHERE request_key = 'pgu-after')
	         || ' ' || (SELECT app_tag FROM outbox WHERE payload ->> 'booking_id' = '$next_id')")"
check "an upgraded booking still blocks its slot (slot_busy)" 1 \
	"$(app17 -c "SELECT okno_create_booking(2, 'pgu-overlap', (SELECT payload FROM pgu_requests WHERE key = 'pgu-1'))" 2>&1 |
		grep -c 'already booked')"

want_due=$(plus "$want_due" "booking_created $next_id")
check "the due events are delivered, each once; not the delayed, parked or held-back ones" \
	"$want_due" "$(drain_all app17 | sorted)"
check "then the outbox has the delayed, the parked and the held-back event (pending, due, delayed, parked, held back)" \
	"2|0|1|1|1" "$(q17 "SELECT pending || '|' || due_now || '|' || delayed || '|' || parked || '|' || held_back FROM okno_outbox_status")"
check "okno_requeue takes the parked event back" "t" \
	"$(app17 -c "SELECT okno_requeue(event_id) FROM pgu_events WHERE step = 'parked'")"
check "then it is delivered, and the cancellation held back behind it after it" \
	"$want_parked" "$(drain_all app17 | paste -sd ';')"
check "then only the delayed event is pending" "1|0|1|0|0" \
	"$(q17 "SELECT pending || '|' || due_now || '|' || delayed || '|' || parked || '|' || held_back FROM okno_outbox_status")"

want_journal=$(plus "$want_journal" "booking_created $next_id")
# pg_upgrade keeps the transaction ids but gives the cluster a new system
# identifier: journal's first drain on 17 copies again what may be missing
check "journal's copy position is still the 15 cluster's (another system identifier)" "t" \
	"$(q17 "SELECT copied_system <> (SELECT system_identifier FROM pg_control_system()) FROM okno_subscriber WHERE name = 'journal'")"
check "journal gets exactly the events it had not been handed on 15, each once (but the one held back behind its parked event)" \
	"$want_journal" "$(drain_all app17 journal | sorted)"
check "journal's copy position is the 17 cluster's after its drains" "t" \
	"$(q17 "SELECT copied_system = (SELECT system_identifier FROM pg_control_system()) FROM okno_subscriber WHERE name = 'journal'")"
check "journal's parked event is still parked, with its error" "$want_journal_parked" \
	"$(q17 "SELECT event_id || ' ' || last_error FROM okno_delivery WHERE subscriber = 'journal' AND parked_at IS NOT NULL")"
check "journal then has its parked event and the cancellation behind it (pending, parked, held back)" "1|1|1" \
	"$(q17 "SELECT pending || '|' || parked || '|' || held_back FROM okno_subscribers WHERE subscriber = 'journal'")"
check "okno_verify() is empty at the end" "" "$(q17 "SELECT * FROM okno_verify()")"

stop "$NEW" 17 || not_ok "the 17 cluster stops"
FINISHED=yes
