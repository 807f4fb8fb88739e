--
-- tombstones: okno_purge leaves a tombstone of each key it removes (a
-- booking's and an operation's); a retry with the key is answered
-- key_expired (OKB11) instead of being run again; the tombstone is purged
-- after okno.key_tombstone_age, and then the key runs again (okno 0.7.0)
--
-- a booking's key and an operation's, both 40 days old (their bookings
-- and keys made so)
SELECT okno_create_booking(1, 'tomb-1', okno_test.payload(3, '2031-03-01T10:00:00Z', '2031-03-01T11:00:00Z')) ->> 'status' AS status;
CREATE FUNCTION okno_test.echo(r jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT jsonb_build_object('echo', r) $$;
SELECT okno_idempotent('echo', 'tenant-1', 'tomb-1', '{"n": 1}', 'okno_test.echo(jsonb)');
SHOW okno.key_tombstone_age;
CREATE FUNCTION okno_test.age_tomb_keys() RETURNS void LANGUAGE sql AS $$
  UPDATE bookings SET created_at = now() - interval '40 days'
   WHERE id IN (SELECT (response_body ->> 'id')::bigint FROM idempotency WHERE request_key = 'tomb-1');
  UPDATE idempotency SET created_at = now() - interval '40 days' WHERE request_key = 'tomb-1';
  UPDATE okno_key SET created_at = now() - interval '40 days' WHERE request_key = 'tomb-1';
$$;
SELECT okno_test.age_tomb_keys();
-- a key of another scope, recent: kept
SELECT okno_idempotent('echo', 'tenant-2', 'tomb-1', '{"n": 2}', 'okno_test.echo(jsonb)');

SELECT * FROM okno_purge('30 days', '30 days');
SELECT count(*) AS tombstones FROM okno_key_tombstone;
-- each tombstone is the SHA-256 of the key's identity, and nothing else
SELECT encode(key_hash, 'hex') IN (encode(sha256(convert_to(':tomb-1:1', 'UTF8')), 'hex'),
                                   encode(sha256(convert_to('echo:tomb-1:tenant-1', 'UTF8')), 'hex')) AS identity,
       expired_at BETWEEN now() - interval '1 hour' AND now() AS expired_by_the_purge
  FROM okno_key_tombstone ORDER BY 1;

-- a retry is answered, not run again: the same request, or another one
SELECT okno_test.err($$SELECT okno_create_booking(1, 'tomb-1', okno_test.payload(3, '2031-03-01T10:00:00Z', '2031-03-01T11:00:00Z'))$$);
SELECT okno_test.err($$SELECT okno_create_booking(1, 'tomb-1', okno_test.payload(3, '2031-03-02T10:00:00Z', '2031-03-02T11:00:00Z'))$$);
SELECT okno_test.err($$SELECT okno_idempotent('echo', 'tenant-1', 'tomb-1', '{"n": 1}', 'okno_test.echo(jsonb)')$$);
SELECT okno_test.err($$SELECT okno_key_claim('echo', 'tenant-1', 'tomb-1', '{"n": 1}')$$);
-- only to a role that may store the key: one that may not even read it
-- learns nothing of it, one that may read keys but not store them learns
-- no tombstone (42501 both, as the store would raise it)
CREATE ROLE okno_tomb_reader;
GRANT USAGE ON SCHEMA okno_test TO okno_tomb_reader;
SET ROLE okno_tomb_reader;
SELECT okno_test.err($$SELECT okno_create_booking(1, 'tomb-1', okno_test.payload(3, '2031-03-01T10:00:00Z', '2031-03-01T11:00:00Z'))$$) AS no_privilege;
RESET ROLE;
GRANT SELECT ON idempotency, okno_key TO okno_tomb_reader;
SET ROLE okno_tomb_reader;
SELECT okno_test.err($$SELECT okno_create_booking(1, 'tomb-1', okno_test.payload(3, '2031-03-01T10:00:00Z', '2031-03-01T11:00:00Z'))$$) AS select_only;
SELECT okno_test.err($$SELECT okno_key_claim('echo', 'tenant-1', 'tomb-1', '{"n": 1}')$$) AS select_only;
RESET ROLE;
REVOKE ALL ON idempotency, okno_key FROM okno_tomb_reader;
REVOKE ALL ON SCHEMA okno_test FROM okno_tomb_reader;
DROP ROLE okno_tomb_reader;
-- other actors, scopes and operations are not expired
SELECT okno_idempotent('echo', 'tenant-2', 'tomb-1', '{"n": 2}', 'okno_test.echo(jsonb)');
SELECT okno_idempotent('echo2', 'tenant-1', 'tomb-1', '{"n": 1}', 'okno_test.echo(jsonb)');
SELECT okno_create_booking(2, 'tomb-1', okno_test.payload(3, '2031-03-03T10:00:00Z', '2031-03-03T11:00:00Z')) ->> 'status' AS status;
-- okno_verify has nothing to say
SELECT * FROM okno_verify();

-- a second purge keeps them (younger than okno.key_tombstone_age)
SELECT * FROM okno_purge('30 days', '30 days');
SELECT count(*) AS tombstones FROM okno_key_tombstone;
-- older than that, they go, and the keys are new again
UPDATE okno_key_tombstone SET expired_at = now() - interval '91 days';
SELECT * FROM okno_purge('30 days', '30 days');
SELECT count(*) AS tombstones FROM okno_key_tombstone;
SELECT okno_create_booking(1, 'tomb-1', okno_test.payload(3, '2031-03-04T10:00:00Z', '2031-03-04T11:00:00Z')) ->> 'status' AS status;
SELECT okno_idempotent('echo', 'tenant-1', 'tomb-1', '{"n": 3}', 'okno_test.echo(jsonb)');

-- okno.key_tombstone_age takes an interval's units; 0 turns tombstones off
SET okno.key_tombstone_age = '1d';
SHOW okno.key_tombstone_age;
-- (the range's spelling differs between versions: "0 .. 2147483647" on 15,
-- "0 s .. 2147483647 s" from 17)
SELECT regexp_replace(okno_test.err($$SET okno.key_tombstone_age = -1$$), ' \(0 .*\)$', '') AS err;
SELECT okno_test.age_tomb_keys();
INSERT INTO okno_key_tombstone VALUES (sha256('old'), now() - interval '2 hours');
SET okno.key_tombstone_age = 0;
SELECT * FROM okno_purge('30 days', '30 days');
SELECT count(*) AS tombstones FROM okno_key_tombstone;
SELECT okno_idempotent('echo', 'tenant-1', 'tomb-1', '{"n": 4}', 'okno_test.echo(jsonb)');
RESET okno.key_tombstone_age;

-- okno_verify: a key stored beside its tombstone (a writer that does not
-- look at tombstones), a malformed tombstone or fingerprint
BEGIN;
SELECT okno_create_booking(1, 'tomb-1', okno_test.payload(3, '2031-03-05T10:00:00Z', '2031-03-05T11:00:00Z')) ->> 'status' AS status;
INSERT INTO okno_key_tombstone
  SELECT sha256(convert_to(':tomb-1:1', 'UTF8')), now()
  UNION ALL SELECT sha256(convert_to('echo:tomb-1:tenant-1', 'UTF8')), now()
  UNION ALL SELECT '\x00', now();
INSERT INTO okno_key VALUES ('echo', 'tenant-9', 'bad', '\x01', '{}', now());
SELECT * FROM okno_verify();
ROLLBACK;

-- a pending tombstone (expired_at 'infinity'): a purge on a Citus cluster
-- writes one beside each expired key and deletes the key in a later
-- purge, and a database restored from a cluster may hold some.
-- okno_verify does not count one beside its key as a key run again; a
-- purge here deletes the expired key and dates its tombstone; with
-- okno.key_tombstone_age = 0 a pending one goes like any other
BEGIN;
SELECT okno_create_booking(1, 'tomb-1', okno_test.payload(3, '2031-03-05T10:00:00Z', '2031-03-05T11:00:00Z')) ->> 'status' AS status;
INSERT INTO okno_key_tombstone VALUES (sha256(convert_to(':tomb-1:1', 'UTF8')), 'infinity');
SELECT * FROM okno_verify();
SELECT okno_test.age_tomb_keys();
SELECT * FROM okno_purge('30 days', '30 days');
SELECT expired_at > now() - interval '1 hour' AND expired_at < 'infinity' AS dated
  FROM okno_key_tombstone WHERE key_hash = sha256(convert_to(':tomb-1:1', 'UTF8'));
INSERT INTO okno_key_tombstone VALUES (sha256('pending'), 'infinity');
SET LOCAL okno.key_tombstone_age = 0;
SELECT * FROM okno_purge('30 days', '30 days');
SELECT count(*) AS tombstones FROM okno_key_tombstone;
ROLLBACK;

-- tombstones and keys are the extension's data: pg_dump dumps their rows
SELECT c.relname FROM pg_extension e, unnest(e.extconfig) AS t(oid)
  JOIN pg_class c ON c.oid = t.oid
 WHERE e.extname = 'okno' AND c.relname LIKE 'okno_key%' ORDER BY 1;

-- clean up what this test made (the other tests' keys and events stay):
-- its events count as delivered, its operations' keys and the tombstones go
UPDATE outbox SET delivered_at = clock_timestamp()
 WHERE delivered_at IS NULL
   AND payload ->> 'booking_id' IN (SELECT id::text FROM bookings WHERE resource_id = 3
                                      AND starts_at >= '2031-03-01' AND starts_at < '2031-03-06');
DELETE FROM okno_key WHERE request_key = 'tomb-1';
TRUNCATE okno_key_tombstone;

--
-- A database that uses only operations' keys, with none of the
-- application's five tables: okno_purge purges okno's own tables (the
-- keys, leaving tombstones, and the tombstones) and okno_verify checks
-- them; once one of the five is there, both bind the tables again
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
CREATE ROLE regress_keys_only LOGIN;
CREATE DATABASE regress_okno_keys_only OWNER regress_keys_only;
\c regress_okno_keys_only regress_keys_only
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
RESET client_min_messages;
CREATE FUNCTION echo(r jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT jsonb_build_object('echo', r) $$;
SELECT okno_idempotent('echo', 's', 'k-old', '{"n": 1}', 'echo(jsonb)');
SELECT okno_idempotent('echo', 's', 'k-new', '{"n": 2}', 'echo(jsonb)');
\c regress_okno_keys_only :superuser_name
UPDATE okno_key SET created_at = now() - interval '40 days' WHERE request_key = 'k-old';
\c regress_okno_keys_only regress_keys_only
SELECT * FROM okno_purge('30 days', '30 days');
SELECT request_key FROM okno_key ORDER BY 1;
SELECT count(*) AS tombstones FROM okno_key_tombstone;
SELECT okno_idempotent('echo', 's', 'k-old', '{"n": 1}', 'echo(jsonb)');
SELECT okno_idempotent('echo', 's', 'k-new', '{"n": 2}', 'echo(jsonb)');
SELECT * FROM okno_verify();
-- a superuser's calls run as the superuser (there is no tables' owner)
\c regress_okno_keys_only :superuser_name
SELECT * FROM okno_purge('30 days', '30 days');
BEGIN;
INSERT INTO okno_key VALUES ('echo', 's', 'k-old', '\x01', '{}', now());
INSERT INTO okno_key_tombstone VALUES ('\x00', now());
SELECT * FROM okno_verify();
ROLLBACK;
\c regress_okno_keys_only regress_keys_only
-- no tombstones kept: the purge removes it, and the key runs again
SET okno.key_tombstone_age = 0;
SELECT * FROM okno_purge('30 days', '30 days');
SELECT count(*) AS tombstones FROM okno_key_tombstone;
SELECT okno_idempotent('echo', 's', 'k-old', '{"n": 3}', 'echo(jsonb)');
RESET okno.key_tombstone_age;
-- one of the five tables, unfit: the binding is back, and says what is wrong
CREATE TABLE outbox (id int);
SELECT * FROM okno_purge('30 days', '30 days');
SELECT * FROM okno_verify();
\c :test_db :superuser_name
DROP DATABASE regress_okno_keys_only;
DROP ROLE regress_keys_only;
