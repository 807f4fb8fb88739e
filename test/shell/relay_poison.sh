#!/usr/bin/env bash
# relay_poison: events the relay cannot read do not stop the others.
#
# In a database of every encoding PostgreSQL allows for one, an event whose
# payload (or kind) has no UTF-8 form is found for that encoding when there
# is one (a byte, or an EUC pair, that the encoding has and Unicode has
# not; any byte above 0x7f in SQL_ASCII), written between good events, and
# the relay delivers the good ones and parks the poisoned one at once,
# saying why (before, every drain failed with 22P05 or 22021 and every
# event behind it waited for ever).  In WIN1252 and SQL_ASCII the same with
# --exec, with a subscriber, and with a poisoned kind written by a plain
# INSERT.  MULE_INTERNAL, which has no conversion to UTF-8 at all, is
# refused at connection with a clear message.  Under a memory limit
# (ulimit -v) a batch too big for the relay's memory is delivered one event
# at a time, and an event too big alone is charged a failed attempt.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

# encoded_db NAME ENCODING: a database of that encoding with okno
encoded_db() {
	"$PGBIN/dropdb" --if-exists --force "$1" 2>/dev/null
	"$PGBIN/createdb" -T template0 -E "$2" --locale=C "$1" 2>"$work/createdb.err" || return 1
	DBS+=("$1")
	"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$1" >/dev/null 2>"$work/new_db.err" <<-'SQL'
		CREATE EXTENSION okno CASCADE;
		DO $$ BEGIN PERFORM okno_create_tables(); END $$;
	SQL
}

# poison DB: the hex of the first byte sequence valid in the database's
# encoding that has no UTF-8 form ("" when every character has one)
poison() {
	q "$1" "CREATE TEMP TABLE found (b bytea);
	DO \$\$
	DECLARE
		enc name := pg_catalog.getdatabaseencoding();
		multi boolean := pg_catalog.pg_encoding_max_length(pg_catalog.pg_char_to_encoding(enc)) > 1;
		b bytea;
		t text;
	BEGIN
		IF enc = 'SQL_ASCII' THEN
			INSERT INTO found VALUES ('\\x81');
			RETURN;
		END IF;
		FOR i IN 128 .. 255 LOOP
			FOR j IN CASE WHEN multi THEN 161 ELSE 0 END .. CASE WHEN multi THEN 254 ELSE 0 END LOOP
				b := CASE WHEN multi THEN pg_catalog.set_byte(pg_catalog.set_byte('\\x0000'::bytea, 0, i), 1, j)
						  ELSE pg_catalog.set_byte('\\x00'::bytea, 0, i) END;
				BEGIN
					t := pg_catalog.convert_from(b, enc);
					PERFORM pg_catalog.convert_to(t, 'UTF8');
				EXCEPTION
					WHEN untranslatable_character THEN
						INSERT INTO found VALUES (b);
						RETURN;
					WHEN OTHERS THEN
						NULL;		-- not a character of the encoding
				END;
			END LOOP;
		END LOOP;
	END
	\$\$;
	SELECT pg_catalog.encode(b, 'hex') FROM found"
}

# emit_around DB HEX: good events 1 and 2, the poisoned one (a payload with
# the bytes HEX), good event 3; prints the poisoned event's id
emit_around() {
	q "$1" "SELECT okno_emit('good', '{\"n\": 1}'), okno_emit('good', '{\"n\": 2}')" >/dev/null
	q "$1" "SELECT okno_emit('bad', jsonb_build_object('s',
		'a' || convert_from(decode('$2', 'hex'), getdatabaseencoding()) || 'b'))"
	q "$1" "SELECT okno_emit('good', '{\"n\": 3}')" >/dev/null
}

# good_lines FILE: the good events' numbers on lines that parse, in order
good_lines() {
	python3 - "$1" <<'PY'
import json, sys
ns = []
for line in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    try:
        e = json.loads(line)
        ns.append(str(e["payload"]["n"]))
    except Exception:
        ns.append("?")
print(",".join(ns))
PY
}

# the poisoned event's state: attempts/parked/why
event_state() {
	q "$1" "SELECT attempts || '/' || (parked_at IS NOT NULL) || '/' ||
	            (last_error LIKE 'its kind or payload has no UTF-8 form: %')
	          FROM outbox WHERE id = '$2'"
}

# --- every encoding a database may have -----------------------------------
# (every encoding PostgreSQL knows; those only a client may use are refused
# by createdb, below)
encodings=$(q postgres "SELECT string_agg(pg_catalog.pg_encoding_to_char(e), ' ' ORDER BY e)
	FROM generate_series(0, 63) AS e WHERE pg_catalog.pg_encoding_to_char(e) <> ''")
poisoned=""
clean=""
client_only=""
for enc in $encodings; do
	db=okno_poison_$(echo "$enc" | tr 'A-Z' 'a-z')
	if [ "$enc" = UTF8 ]; then
		continue
	fi
	if ! encoded_db "$db" "$enc"; then
		if grep -q 'is not a valid server encoding\|not a valid encoding' "$work/createdb.err"; then
			client_only="$client_only $enc"
			continue
		fi
		not_ok "a database of encoding $enc with okno" "$(cat "$work/createdb.err" "$work/new_db.err" 2>/dev/null)"
		continue
	fi
	if [ "$enc" = MULE_INTERNAL ]; then
		q "$db" "SELECT okno_emit('good', '{\"n\": 1}')" >/dev/null
		timeout 60 "$RELAY" --dbname "$db" --once >"$work/$db.out" 2>"$work/$db.err"
		check "MULE_INTERNAL (no conversion to UTF-8): the relay refuses at connection, exit 2" 2 "$?"
		check "and says why" 1 "$(grep -c 'UTF8' "$work/$db.err")"
		"$PGBIN/dropdb" --force "$db"
		continue
	fi
	hex=$(poison "$db")
	if [ -z "$hex" ]; then
		# every character of the encoding has a UTF-8 form: nothing to refuse
		q "$db" "SELECT okno_emit('good', jsonb_build_object('n', 1, 's', convert_from('\\xe9'::bytea, getdatabaseencoding())))" >/dev/null 2>&1 ||
			q "$db" "SELECT okno_emit('good', '{\"n\": 1}')" >/dev/null
		timeout 60 "$RELAY" --dbname "$db" --once >"$work/$db.out" 2>"$work/$db.err"
		rc=$?
		clean="$clean $enc"
		check "$enc (every character has a UTF-8 form): delivered, exit 0" "0/1" "$rc/$(good_lines "$work/$db.out")"
	else
		id=$(emit_around "$db" "$hex")
		timeout 60 "$RELAY" --dbname "$db" --once >"$work/$db.out" 2>"$work/$db.err"
		rc=$?
		poisoned="$poisoned $enc"
		check "$enc (0x$hex has no UTF-8 form): the relay delivers the others in order, exit 0" \
			"0/1,2,3" "$rc/$(good_lines "$work/$db.out")"
		check "$enc: and parks the poisoned event at once, saying why" "1/true/true" "$(event_state "$db" "$id")"
	fi
	[ "$enc" = WIN1252 ] || [ "$enc" = SQL_ASCII ] || "$PGBIN/dropdb" --force "$db"
done
echo "# encodings only a client may use:$client_only"
check "every encoding but those a client alone may use makes a database (34 besides UTF8)" 34 \
	"$(echo $poisoned $clean MULE_INTERNAL | wc -w)"
echo "# encodings with a character that has no UTF-8 form:$poisoned"
echo "# encodings whose every character has one:$clean"
check "WIN1252 and SQL_ASCII are among those with one" yes \
	"$(case "$poisoned " in *" SQL_ASCII "*" WIN1252 "*) echo yes ;; *) echo "no:$poisoned" ;; esac)"

# --- WIN1252 and SQL_ASCII: --exec, a subscriber, a poisoned kind ------------
cat >"$work/record" <<'SH'
#!/bin/sh
# record FILE: append the event's JSON line (stdin) to FILE
cat >>"$1"
SH
chmod +x "$work/record"
for enc in WIN1252 SQL_ASCII; do
	db=okno_poison_$(echo "$enc" | tr 'A-Z' 'a-z')
	hex=$(poison "$db")
	q "$db" "DELETE FROM outbox" >/dev/null
	q "$db" "SELECT okno_subscribe('journal')" >/dev/null
	id=$(emit_around "$db" "$hex")
	timeout 60 "$RELAY" --dbname "$db" --once --exec "$work/record $work/$db.exec" >/dev/null 2>"$work/$db.exec.err"
	check "$enc --exec: the others delivered in order, exit 0" "0/1,2,3" "$?/$(good_lines "$work/$db.exec")"
	check "$enc --exec: the poisoned event parked at once" "1/true/true" "$(event_state "$db" "$id")"

	timeout 60 "$RELAY" --dbname "$db" --once --subscriber journal >"$work/$db.sub" 2>"$work/$db.sub.err"
	check "$enc --subscriber: the others delivered in order, exit 0" "0/1,2,3" "$?/$(good_lines "$work/$db.sub")"
	check "$enc --subscriber: the poisoned event parked for the subscriber" "1/1/true" \
		"$(q "$db" "SELECT attempts || '/' || (SELECT parked FROM okno_subscribers WHERE subscriber = 'journal')
		          || '/' || (last_error LIKE 'its kind or payload has no UTF-8 form: %')
		          FROM okno_delivery WHERE event_id = '$id'")"

	# a kind with no UTF-8 form, written by a plain INSERT; a daemon
	# delivers what comes after it
	q "$db" "INSERT INTO outbox (id, kind, payload)
	         VALUES (gen_random_uuid(), convert_from(decode('$hex', 'hex'), getdatabaseencoding()), '{\"n\": 4}')" >/dev/null
	start_relay "$db.daemon" --dbname "$db" --poll 0.2
	q "$db" "SELECT okno_emit('good', '{\"n\": 5}')" >/dev/null
	at_five() { [ "$(good_lines "$work/$db.daemon.out")" = 5 ]; }
	wait_until 60 at_five
	check "$enc: a daemon parks an event whose kind has no UTF-8 form, and delivers the next" 5 \
		"$(good_lines "$work/$db.daemon.out")"
	check "$enc: the kind's event is parked" "1" \
		"$(q "$db" "SELECT count(*) FROM outbox WHERE payload = '{\"n\": 4}' AND parked_at IS NOT NULL")"
	stop_relay "$RELAY_PID" 30
	check "$enc: the daemon stops on SIGTERM, exit 0" 0 "$STOP_RC"
done

# --- a batch too big for the relay's memory --------------------------------
db=okno_poison_memory
new_db "$db"
# 30 events of 10 MB; under a limit of 128 MB of address space (the relay
# alone takes about 20) a batch of them does not fit, one does
q "$db" "SELECT count(okno_emit('big', jsonb_build_object('n', i, 's', repeat('x', 10 * 1024 * 1024))))
         FROM generate_series(1, 30) AS i" >/dev/null
(
	ulimit -v 131072
	exec timeout 300 "$RELAY" --dbname "$db" --once
) >"$work/memory.out" 2>"$work/memory.err"
check "30 events of 10 MB under a 128 MB limit: all delivered, exit 0" "0/30/0" \
	"$?/$(lines "$work/memory.out")/$(q "$db" "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")"
check "the relay said it took them one at a time" 1 \
	"$(grep -c 'out of memory for query result.*one at a time' "$work/memory.err")"
# an event bigger than the limit alone: charged a failed attempt, the one
# after it delivered
q "$db" "DELETE FROM outbox" >/dev/null
q "$db" "SELECT okno_emit('big', jsonb_build_object('n', 1, 's', repeat('x', 100 * 1024 * 1024)))" >/dev/null
q "$db" "SELECT okno_emit('good', '{\"n\": 2}')" >/dev/null
(
	ulimit -v 131072
	exec timeout 300 "$RELAY" --dbname "$db" --once
) >"$work/huge.out" 2>"$work/huge.err"
check "a 100 MB event under a 128 MB limit: the next delivered, exit 0" "0/2" \
	"$?/$(good_lines "$work/huge.out")"
# (okno's backoff may have brought it round again before --once ended)
check "the big one is charged failed attempts, not parked at once, saying why" "true/false/true" \
	"$(q "$db" "SELECT (attempts >= 1) || '/' || (parked_at IS NOT NULL) || '/' ||
	               (last_error LIKE 'okno-relay could not read it: out of memory%')
	          FROM outbox WHERE payload->>'n' = '1'")"
