--
-- idempotent: idempotency keys of any operation (okno 0.7.0):
-- okno_idempotent and okno_idempotent_result with a handler, okno_key_claim
-- and okno_key_store around the caller's own statements, every rule and
-- error, and okno_canonical_json, the RFC 8785 form fingerprints are of
--

-- ---------------------------------------------------------------------
-- okno_canonical_json
-- RFC 8785's own example (section 3.2.2), given as jsonb
SELECT okno_canonical_json('{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA''\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]}');
-- keys sorted by UTF-16 code units, not by jsonb's length-first order
SELECT okno_canonical_json('{"peach": 1, "péché": 2, "pêche": 3, "sin": 4, "a": {"b": 1, "aa": 2}}');
SELECT okno_canonical_json(jsonb_build_object(E'\uD83D\uDE00', 1, E'\uFB33', 2, E'\u20AC', 3));
-- numbers as ECMAScript writes the nearest double
SELECT n, okno_canonical_json(n::jsonb)
  FROM unnest(ARRAY['0', '-0', '1.0', '-1.50', '1e21', '1e20', '123456789012345678901',
                    '0.000001', '0.0000001', '1e-7', '333333333.33333333', '9007199254740993',
                    '5e-324', '1.7976931348623157e308', '3e-324', '100', '1E+2']) AS n;
-- outside IEEE 754 double's range: an error, never a silent rounding
SELECT okno_test.err($$SELECT okno_canonical_json('1e400')$$);
SELECT okno_test.err($$SELECT okno_canonical_json('[1, {"x": -1e-400}]')$$);
SELECT okno_test.err($$SELECT okno_canonical_json(('1' || repeat('0', 400))::jsonb)$$);
-- scalars, escapes, empty containers; NULL in, NULL out (STRICT)
SELECT encode(convert_to(okno_canonical_json('"a\tb\u0001\u007f\u2028"'), 'UTF8'), 'escape') AS escaped, okno_canonical_json('[]'),
       okno_canonical_json('{}'), okno_canonical_json('null'), okno_canonical_json(NULL) IS NULL AS strict;
-- the fingerprint of a request: SHA-256 of its form's UTF-8 bytes
SELECT encode(sha256(convert_to(okno_canonical_json('{"b": [1, 2.0], "a": "x"}'), 'UTF8')), 'hex');

-- ---------------------------------------------------------------------
-- okno_idempotent: a handler runs once per key; a retry replays
CREATE TABLE moves (n serial PRIMARY KEY, request jsonb NOT NULL, mover name NOT NULL DEFAULT current_user);
CREATE FUNCTION okno_test.move(r jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  IF r ? 'fail' THEN
    RAISE EXCEPTION 'the move failed' USING ERRCODE = 'P0001';
  END IF;
  INSERT INTO moves (request) VALUES (r);
  RETURN jsonb_build_object('move', (SELECT max(n) FROM moves), 'to', r -> 'to');
END $$;
-- a handler in SQL
CREATE FUNCTION okno_test.move_sql(r jsonb) RETURNS jsonb LANGUAGE sql
BEGIN ATOMIC
  INSERT INTO moves (request) VALUES (r) RETURNING jsonb_build_object('move', n);
END;

SELECT okno_idempotent('reschedule', 'tenant-1', 'r-1', '{"to": "11:00", "room": 1}', 'okno_test.move(jsonb)');
-- the same request, its keys in another order: replayed, the handler not run
SELECT okno_idempotent('reschedule', 'tenant-1', 'r-1', '{"room": 1.0, "to": "11:00"}', 'okno_test.move(jsonb)');
SELECT count(*) AS moves FROM moves;
SELECT * FROM okno_idempotent_result('reschedule', 'tenant-1', 'r-1', '{"to": "11:00", "room": 1}', 'okno_test.move(jsonb)');
SELECT * FROM okno_idempotent_result('reschedule', 'tenant-1', 'r-2', '{"to": "12:00"}', 'okno_test.move(jsonb)');
-- another request under the key: key_reused
SELECT okno_test.err($$SELECT okno_idempotent('reschedule', 'tenant-1', 'r-1', '{"to": "12:00", "room": 1}', 'okno_test.move(jsonb)')$$);
-- another scope, another operation: another key
SELECT okno_idempotent('reschedule', 'tenant-2', 'r-1', '{"to": "12:00"}', 'okno_test.move(jsonb)');
SELECT okno_idempotent('bookings/reschedule', 'tenant-1', 'r-1', '{"to": "13:00"}', 'okno_test.move_sql(jsonb)');
SELECT okno_idempotent('bookings/reschedule', 'tenant-1', 'r-1', '{"to": "13:00"}', 'okno_test.move_sql(jsonb)');
SELECT okno_idempotent('pay.v2', '', 'r-1', '{"to": "14:00"}', 'okno_test.move_sql(jsonb)');
SELECT operation, scope, request_key, encode(fingerprint, 'hex') = encode(sha256(convert_to(okno_canonical_json(m.request), 'UTF8')), 'hex') AS fingerprint_is_jcs,
       response
  FROM okno_key k
  LEFT JOIN LATERAL (SELECT request FROM moves WHERE n = (k.response ->> 'move')::int) m ON true
 ORDER BY 1, 2, 3;
-- the stored response is the handler's, replayed as it was
SELECT count(*) AS moves FROM moves;

-- the handler's error aborts the call: nothing stored, the key is free
SELECT okno_test.err($$SELECT okno_idempotent('reschedule', 'tenant-1', 'r-3', '{"to": "15:00", "fail": 1}', 'okno_test.move(jsonb)')$$);
SELECT count(*) AS keys FROM okno_key WHERE request_key = 'r-3';
SELECT okno_idempotent('reschedule', 'tenant-1', 'r-3', '{"to": "15:00"}', 'okno_test.move(jsonb)');
-- a handler that returns NULL: an error, nothing stored
CREATE FUNCTION okno_test.nothing(r jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT NULL::jsonb $$;
SELECT okno_test.err($$SELECT okno_idempotent('reschedule', 'tenant-1', 'r-4', '{}', 'okno_test.nothing(jsonb)')$$);
-- 'null'::jsonb is a response like any other
CREATE FUNCTION okno_test.null_response(r jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT 'null'::jsonb $$;
SELECT * FROM okno_idempotent_result('reschedule', 'tenant-1', 'r-4', '{}', 'okno_test.null_response(jsonb)');
SELECT * FROM okno_idempotent_result('reschedule', 'tenant-1', 'r-4', '{}', 'okno_test.null_response(jsonb)');
-- a function in the SQL-standard form (RETURN) may handle
SELECT okno_idempotent('strip', 'x', 'r-5', '{"a": null, "b": 1}', 'okno_test.strip_nulls(jsonb)');

-- every rule, in the order of the arguments
SELECT okno_test.err($$SELECT okno_idempotent(NULL, 's', 'k', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('', 's', 'k', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('Reschedule', 's', 'k', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('1pay', 's', 'k', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay:now', 's', 'k', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay now', 's', 'k', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err(format($$SELECT okno_idempotent(%L, 's', 'k', '{}', 'okno_test.move(jsonb)')$$, 'a' || repeat('b', 63)));
SELECT okno_test.err(format($$SELECT okno_idempotent(%L, 's', 'k', '{}', 'okno_test.move(jsonb)')$$, 'a' || repeat('b', 62)));
SELECT okno_test.err($$SELECT okno_idempotent('a.b/c-d_9', 's', 'k', '{}', 'okno_test.strip_nulls(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', NULL, 'k', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err(format($$SELECT okno_idempotent('pay', %L, 'k', '{}', 'okno_test.move(jsonb)')$$, repeat('s', 256)));
SELECT okno_test.err(format($$SELECT okno_idempotent('pay', %L, 'k', '{}', 'okno_test.strip_nulls(jsonb)')$$, repeat('é', 127) || 's'));
SELECT okno_test.err($$SELECT okno_idempotent('pay', 'пользователь:7', 'k', '{}', 'okno_test.strip_nulls(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', NULL, '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', '', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'a:b', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err(format($$SELECT okno_idempotent('pay', 's', %L, '{}', 'okno_test.move(jsonb)')$$, repeat('k', 81)));
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', NULL, 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', '{}', NULL)$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', '{"n": 1e999}', 'okno_test.move(jsonb)')$$);
-- handlers that cannot be one
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', '{}', 'jsonb_typeof(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', '{}', 'jsonb_array_elements(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', '{}', 'jsonb_set(jsonb, text[], jsonb, boolean)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', '{}', 'jsonb_agg(anyelement)')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', '{}', 0)$$);
CREATE PROCEDURE okno_test.proc(r jsonb) LANGUAGE sql AS $$ SELECT 1 $$;
SELECT okno_test.err($$SELECT okno_idempotent('pay', 's', 'k', '{}', 'okno_test.proc(jsonb)'::regprocedure)$$);
-- (the refused calls stored nothing: these are the two accepted scopes')
SELECT octet_length(scope) AS scope_bytes, request_key FROM okno_key WHERE operation = 'pay' ORDER BY 1;

-- a call of the same key while this transaction's own claim is open
CREATE FUNCTION okno_test.again(r jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT okno_idempotent('nested', 's', 'k', r, 'okno_test.again(jsonb)')
$$;
SELECT okno_test.err($$SELECT okno_idempotent('nested', 's', 'k', '{}', 'okno_test.again(jsonb)')$$);
-- a handler may use another key, and its own handler
CREATE FUNCTION okno_test.outer_move(r jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('inner', okno_idempotent('inner', 's', 'k', r, 'okno_test.move(jsonb)'))
$$;
SELECT okno_idempotent('outer', 's', 'k', '{"to": "16:00"}', 'okno_test.outer_move(jsonb)');
SELECT okno_idempotent('outer', 's', 'k', '{"to": "16:00"}', 'okno_test.outer_move(jsonb)');

-- a handler that stores its own key with okno_key_store: refused (55000),
-- okno_idempotent stores the response its handler returns
CREATE FUNCTION okno_test.self_store(r jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT okno_key_store('self', 's', 'k', '{"stored": "by the handler"}')
$$;
SELECT okno_test.err($$SELECT okno_idempotent('self', 's', 'k', '{}', 'okno_test.self_store(jsonb)')$$);
SELECT count(*) AS self_stored FROM okno_key WHERE operation = 'self';

-- read-only transactions are refused
BEGIN READ ONLY;
SELECT okno_test.err($$SELECT okno_idempotent('reschedule', 'tenant-1', 'r-1', '{}', 'okno_test.move(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_key_claim('reschedule', 'tenant-1', 'r-1', '{}')$$);
SELECT okno_test.err($$SELECT okno_key_store('reschedule', 'tenant-1', 'r-1', '{}')$$);
ROLLBACK;

-- ---------------------------------------------------------------------
-- okno_key_claim and okno_key_store: the caller's own statements
BEGIN;
SELECT okno_key_claim('pay', 'acct-1', 'p-1', '{"amount": 5}') IS NULL AS claimed;
INSERT INTO moves (request) VALUES ('{"amount": 5}');
SELECT okno_key_store('pay', 'acct-1', 'p-1', '{"paid": 5}');
-- stored once: a second store, or a store of a key never claimed, is refused
SELECT okno_test.err($$SELECT okno_key_store('pay', 'acct-1', 'p-1', '{"paid": 5}')$$);
SELECT okno_test.err($$SELECT okno_key_store('pay', 'acct-1', 'p-2', '{"paid": 5}')$$);
-- in the same transaction a claim replays the stored response
SELECT okno_key_claim('pay', 'acct-1', 'p-1', '{"amount": 5}');
COMMIT;
SELECT okno_key_claim('pay', 'acct-1', 'p-1', '{"amount": 5.0}');
SELECT okno_test.err($$SELECT okno_key_claim('pay', 'acct-1', 'p-1', '{"amount": 6}')$$);
SELECT okno_test.err($$SELECT okno_key_store('pay', 'acct-1', 'p-1', NULL)$$);
SELECT okno_test.err($$SELECT okno_key_claim('pay', 'acct-1', 'p-9', NULL)$$);

-- a claim not stored fails the commit, which rolls the work back
BEGIN;
SELECT okno_key_claim('pay', 'acct-1', 'p-3', '{"amount": 7}') IS NULL AS claimed;
INSERT INTO moves (request) VALUES ('{"amount": 7}');
-- the key is this transaction's, and not stored yet
SELECT okno_test.err($$SELECT okno_key_claim('pay', 'acct-1', 'p-3', '{"amount": 7}')$$);
SELECT okno_test.err($$SELECT okno_idempotent('pay', 'acct-1', 'p-3', '{"amount": 7}', 'okno_test.move(jsonb)')$$);
COMMIT;
SELECT count(*) AS work_committed FROM moves WHERE request = '{"amount": 7}';
SELECT count(*) AS keys FROM okno_key WHERE request_key = 'p-3';
-- so does PREPARE TRANSACTION
BEGIN;
SELECT okno_key_claim('pay', 'acct-1', 'p-3', '{"amount": 7}') IS NULL AS claimed;
PREPARE TRANSACTION 'okno-claim';
SELECT count(*) AS prepared FROM pg_prepared_xacts WHERE gid = 'okno-claim';

-- a claim made in a subtransaction that rolls back is gone with it
BEGIN;
SAVEPOINT a;
SELECT okno_key_claim('pay', 'acct-1', 'p-4', '{"amount": 8}') IS NULL AS claimed;
ROLLBACK TO SAVEPOINT a;
COMMIT;
-- a store made in one is undone: the claim is open again
BEGIN;
SELECT okno_key_claim('pay', 'acct-1', 'p-5', '{"amount": 9}') IS NULL AS claimed;
SAVEPOINT b;
SELECT okno_key_store('pay', 'acct-1', 'p-5', '{"paid": 9}');
ROLLBACK TO SAVEPOINT b;
SELECT count(*) AS stored FROM okno_key WHERE request_key = 'p-5';
SELECT okno_key_store('pay', 'acct-1', 'p-5', '{"paid": 9}');
-- one made in a subtransaction that commits is the transaction's
SAVEPOINT c;
SELECT okno_key_claim('pay', 'acct-1', 'p-6', '{"amount": 10}') IS NULL AS claimed;
RELEASE SAVEPOINT c;
SELECT okno_key_store('pay', 'acct-1', 'p-6', '{"paid": 10}');
COMMIT;
SELECT request_key, response FROM okno_key WHERE operation = 'pay' ORDER BY 1;

-- ---------------------------------------------------------------------
-- privileges: okno_key as the caller; the handler's EXECUTE
CREATE ROLE okno_idem_app;
GRANT USAGE ON SCHEMA okno_test TO okno_idem_app;
SET ROLE okno_idem_app;
SELECT okno_test.err($$SELECT okno_idempotent('strip', 'x', 'r-5', '{"a": null, "b": 1}', 'okno_test.strip_nulls(jsonb)')$$);
RESET ROLE;
GRANT SELECT, INSERT ON okno_key TO okno_idem_app;
REVOKE EXECUTE ON FUNCTION okno_test.move(jsonb) FROM PUBLIC;
SET ROLE okno_idem_app;
SELECT okno_idempotent('strip', 'x', 'r-5', '{"a": null, "b": 1}', 'okno_test.strip_nulls(jsonb)');
SELECT okno_test.err($$SELECT okno_idempotent('reschedule', 'app', 'r-1', '{}', 'okno_test.move(jsonb)')$$);
RESET ROLE;

-- a superuser never runs another role's handler as a superuser: it runs
-- as its owner
CREATE ROLE okno_idem_owner;
GRANT USAGE ON SCHEMA okno_test TO okno_idem_owner;
GRANT SELECT, INSERT ON okno_key TO okno_idem_owner;
CREATE FUNCTION okno_test.whoami(r jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('user', current_user, 'superuser', (SELECT rolsuper FROM pg_roles WHERE rolname = current_user))
$$;
ALTER FUNCTION okno_test.whoami(jsonb) OWNER TO okno_idem_owner;
SELECT okno_idempotent('who', 's', 'k1', '{}', 'okno_test.whoami(jsonb)');
-- a superuser's own handler runs as the superuser, as a direct call would
CREATE FUNCTION okno_test.whoami_su(r jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('superuser', (SELECT rolsuper FROM pg_roles WHERE rolname = current_user))
$$;
SELECT okno_idempotent('who', 's', 'k2', '{}', 'okno_test.whoami_su(jsonb)');
DROP FUNCTION okno_test.whoami(jsonb);

-- a handler in a schema the caller may not use runs for it no more than a
-- direct call would (42501), by name or by OID
CREATE SCHEMA okno_hidden;
CREATE FUNCTION okno_hidden.h(r jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT r';
SELECT 'okno_hidden.h(jsonb)'::regprocedure::oid AS hidden \gset
SET ROLE okno_idem_app;
SELECT okno_test.err($$SELECT okno_hidden.h('{}')$$);
SELECT okno_test.err($$SELECT okno_idempotent('hidden', 's', 'k', '{}', 'okno_hidden.h(jsonb)')$$);
SELECT okno_test.err(format($$SELECT okno_idempotent('hidden', 's', 'k', '{}', %s::regprocedure)$$, :hidden));
SELECT okno_test.err(format($$SELECT okno_idempotent_result('hidden', 's', 'k', '{}', %s::regprocedure)$$, :hidden));
RESET ROLE;
-- with USAGE it runs; without it again, the kept handler is refused too
GRANT USAGE ON SCHEMA okno_hidden TO okno_idem_app;
SET ROLE okno_idem_app;
SELECT okno_idempotent('hidden', 's', 'k', '{"n": 1}', :hidden::regprocedure);
RESET ROLE;
REVOKE USAGE ON SCHEMA okno_hidden FROM okno_idem_app;
SET ROLE okno_idem_app;
SELECT okno_test.err(format($$SELECT okno_idempotent('hidden', 's', 'k2', '{}', %s::regprocedure)$$, :hidden));
RESET ROLE;
DROP SCHEMA okno_hidden CASCADE;

-- a role that may not read okno_key learns nothing of a key: not that it
-- expired (nor, test/specs/key_claim.spec, that a request holds it); one
-- that may read but not store learns no tombstone
SELECT okno_idempotent('gone', 's', 'k', '{}', 'okno_test.strip_nulls(jsonb)');
UPDATE okno_key SET created_at = created_at - interval '2 days' WHERE operation = 'gone';
SELECT keys_deleted FROM okno_purge('1 day', '1 day');
SELECT okno_test.err($$SELECT okno_key_claim('gone', 's', 'k', '{}')$$) AS as_owner;
REVOKE ALL ON okno_key FROM okno_idem_app;
SET ROLE okno_idem_app;
SELECT okno_test.err($$SELECT okno_key_claim('gone', 's', 'k', '{}')$$) AS no_privilege;
SELECT okno_test.err($$SELECT okno_idempotent('gone', 's', 'k', '{}', 'okno_test.strip_nulls(jsonb)')$$) AS no_privilege;
RESET ROLE;
GRANT SELECT ON okno_key TO okno_idem_app;
SET ROLE okno_idem_app;
SELECT okno_test.err($$SELECT okno_key_claim('gone', 's', 'k', '{}')$$) AS select_only;
SELECT okno_test.err($$SELECT okno_key_claim('pay', 'acct-1', 'p-6', '{"amount": 10}')$$) AS select_only_replays;
RESET ROLE;
-- (the tombstone is this test's: the tombstones test counts its own)
DELETE FROM okno_key_tombstone WHERE key_hash = sha256(convert_to('gone:k:s', 'UTF8'));
REVOKE ALL ON okno_key FROM okno_idem_app, okno_idem_owner;
REVOKE ALL ON SCHEMA okno_test FROM okno_idem_app, okno_idem_owner;
DROP ROLE okno_idem_app;
DROP ROLE okno_idem_owner;

-- nothing depends on the caller's search_path
SET search_path = pg_catalog;
SELECT public.okno_idempotent('reschedule', 'tenant-1', 'r-1', '{"to": "11:00", "room": 1}', 'okno_test.move(jsonb)');
RESET search_path;

-- okno_verify finds nothing wrong
SELECT * FROM okno_verify();

-- ---------------------------------------------------------------------
-- a database whose encoding is not UTF-8: requests are canonicalized in
-- Unicode; two keys that differ in EUC_JP but are one character in
-- Unicode (0xA2E8 and 0xADFA are both U+2235) have no RFC 8785 form: 22030
SELECT current_database() AS idem_db \gset
CREATE DATABASE okno_idem_eucjp ENCODING 'EUC_JP' LOCALE 'C' TEMPLATE template0;
\c okno_idem_eucjp
SET client_encoding = 'UTF8';
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
RESET client_min_messages;
CREATE FUNCTION err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END
$$;
CREATE FUNCTION echo(r jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT r';
SELECT convert_from('\xa2e8', 'EUC_JP') = convert_from('\xadfa', 'EUC_JP') AS same_in_euc_jp,
       convert_to(convert_from('\xa2e8', 'EUC_JP'), 'UTF8') = convert_to(convert_from('\xadfa', 'EUC_JP'), 'UTF8') AS same_in_unicode;
SELECT okno_canonical_json(jsonb_build_object(convert_from('\xa2e8', 'EUC_JP'), 1, 'b', 'ü')) AS one_of_them;
SELECT err($$SELECT okno_canonical_json(jsonb_build_object(convert_from('\xa2e8', 'EUC_JP'), 1, convert_from('\xadfa', 'EUC_JP'), 2))$$);
SELECT err($$SELECT okno_idempotent('op', 's', 'k', jsonb_build_object(convert_from('\xa2e8', 'EUC_JP'), 1, convert_from('\xadfa', 'EUC_JP'), 2), 'echo(jsonb)')$$);
SELECT count(*) AS stored FROM okno_key;
\c :idem_db
DROP DATABASE okno_idem_eucjp;
