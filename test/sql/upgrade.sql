--
-- upgrade: okno 0.1.0 with data, ALTER EXTENSION okno UPDATE through every
-- version, and the result is the same schema as a fresh install of the
-- current version (CREATE EXTENSION, then okno_create_tables()), with
-- every row kept and okno_verify() empty.  Privileges are compared as
-- what they grant to roles other than the owner (whose own are all there
-- is, written out or not).  From 0.5.0 (at the end): the five tables
-- leave the extension and go to its owner, rows untouched and nothing
-- rewritten.
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
CREATE DATABASE regress_okno_upgrade;
CREATE DATABASE regress_okno_fresh;
CREATE DATABASE regress_okno_direct;
CREATE DATABASE regress_okno_v020;
CREATE DATABASE regress_okno_v030;

-- a description of everything okno owns, to compare two installs
\set ECHO none
\set describe 'SELECT string_agg(line, E''\\n'' ORDER BY line) FROM ( SELECT format(''column %s.%s %s %s %s %s'', c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) AS line FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum WHERE c.relnamespace = ''public''::regnamespace AND c.relkind IN (''r'', ''v'') UNION ALL SELECT format(''constraint %s %s %s'', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE connamespace = ''public''::regnamespace UNION ALL SELECT format(''index %s'', pg_get_indexdef(indexrelid)) FROM pg_index WHERE indrelid IN (SELECT oid FROM pg_class WHERE relnamespace = ''public''::regnamespace) UNION ALL SELECT format(''function %s(%s) %s %s %s %s %s %s %s'', p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), p.provolatile, p.proparallel, p.proisstrict, p.prosecdef, p.prosrc, p.prorows) FROM pg_proc p WHERE p.pronamespace = ''public''::regnamespace AND p.proname LIKE ''okno%%'' UNION ALL SELECT format(''view %s %s'', c.relname, pg_get_viewdef(c.oid)) FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace AND c.relkind = ''v'' UNION ALL SELECT format(''acl %s %s %s'', c.relname, pg_get_userbyid(c.relowner), (SELECT string_agg(format(''%s:%s%s'', a.grantee::regrole, a.privilege_type, CASE WHEN a.is_grantable THEN ''*'' ELSE '''' END), '','' ORDER BY 1) FROM aclexplode(c.relacl) a WHERE a.grantee <> c.relowner)) FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace AND c.relkind IN (''r'', ''v'', ''S'') UNION ALL SELECT format(''comment %s %s'', pg_describe_object(d.classoid, d.objoid, d.objsubid), d.description) FROM pg_description d JOIN pg_depend x ON x.classid = d.classoid AND x.objid = d.objoid AND x.deptype = ''e'' AND x.refobjid = (SELECT oid FROM pg_extension WHERE extname = ''okno'') UNION ALL SELECT format(''member %s'', pg_describe_object(classid, objid, objsubid)) FROM pg_depend WHERE deptype = ''e'' AND refobjid = (SELECT oid FROM pg_extension WHERE extname = ''okno'') UNION ALL SELECT format(''config %s'', extconfig::regclass[]) FROM pg_extension WHERE extname = ''okno'' ) s'
\set ECHO all

\c regress_okno_fresh
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
SELECT count(*) AS changes FROM okno_create_tables();
SELECT extversion FROM pg_extension WHERE extname = 'okno';
:describe \gset fresh_

-- and a fresh install of 0.2.0, to compare with 0.1.0 updated to 0.2.0
\c regress_okno_v020
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.2.0' CASCADE;
:describe \gset fresh020_

\c regress_okno_upgrade
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.1.0' CASCADE;
SELECT extversion FROM pg_extension WHERE extname = 'okno';
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('room');
-- 0.1.0's functions work with the new library before the update
SELECT okno_create_booking(1, 'u-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 4) AS i;
SELECT payload FROM okno_drain_once();
UPDATE bookings SET status = 'cancelled' WHERE id = 4;
SELECT (SELECT string_agg(format('%s/%s/%s/%s', id, resource_id, actor_id, status), ';' ORDER BY id) FROM bookings)
    || ' ' || (SELECT string_agg(format('%s/%s/%s', actor_id, request_key, response_body), ';' ORDER BY actor_id, request_key) FROM idempotency)
    || ' ' || (SELECT string_agg(format('%s/%s/%s/%s', id, kind, payload, delivered_at), ';' ORDER BY id) FROM outbox) AS rows_before \gset

ALTER EXTENSION okno UPDATE TO '0.2.0';
SELECT extversion FROM pg_extension WHERE extname = 'okno';
:describe \gset upgraded020_
SELECT :'upgraded020_string_agg' = :'fresh020_string_agg' AS same_as_fresh_020_install;

-- every row kept; the new columns at their defaults
SELECT (SELECT string_agg(format('%s/%s/%s/%s', id, resource_id, actor_id, status), ';' ORDER BY id) FROM bookings)
    || ' ' || (SELECT string_agg(format('%s/%s/%s', actor_id, request_key, response_body), ';' ORDER BY actor_id, request_key) FROM idempotency)
    || ' ' || (SELECT string_agg(format('%s/%s/%s/%s', id, kind, payload, delivered_at), ';' ORDER BY id) FROM outbox) = :'rows_before' AS rows_kept;
SELECT count(*) AS events, sum(attempts) AS attempts, count(last_error) AS errors, count(available_at) AS delayed, count(parked_at) AS parked FROM outbox;

-- 0.2.0 goes on from where 0.1.0 was, and adds its own kinds of data:
-- failures, a parked event, a cancellation
SELECT okno_create_booking(1, 'u-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS replayed_id;
SET okno.max_attempts = 2;
BEGIN;
SELECT payload, attempts FROM okno_drain(10);
SELECT attempts, parked_at IS NULL AS not_parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 3}'), 'first failure');
COMMIT;
SELECT attempts, parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 3}'), 'second failure');
SELECT okno_cancel_booking(1, 2) ->> 'status' AS cancelled;
SELECT kind, payload FROM okno_drain_once();
SELECT okno_create_booking(2, 'u-5', '{"resource_id":1,"starts_at":"2026-12-09T10:00:00Z","ends_at":"2026-12-09T11:00:00Z"}') ->> 'id' AS new_id;
SELECT pending, parked FROM okno_outbox_status;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) AS events_before FROM outbox \gset

-- on to the current version
ALTER EXTENSION okno UPDATE;
-- (the owner adds what 0.7.0's order keys need: outbox.order_key and its
-- index; upgrade_paths shows okno serving the tables before it does)
SELECT p AS prepared FROM okno_prepare_tables() AS p;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'okno') AS current_version FROM pg_extension WHERE extname = 'okno';
:describe \gset upgraded_
SELECT :'upgraded_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
-- (what differs, if anything)
SELECT 'only after the update: ' || l AS difference FROM regexp_split_to_table(:'upgraded_string_agg', E'\\n') AS l
EXCEPT SELECT 'only after the update: ' || regexp_split_to_table(:'fresh_string_agg', E'\\n')
UNION ALL
(SELECT 'only in a fresh install: ' || l FROM regexp_split_to_table(:'fresh_string_agg', E'\\n') AS l
 EXCEPT SELECT 'only in a fresh install: ' || regexp_split_to_table(:'upgraded_string_agg', E'\\n'))
ORDER BY 1;
SELECT length(:'fresh_string_agg') > 5000 AS description_is_substantial;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) = :'events_before' AS events_kept FROM outbox;
SELECT * FROM okno_verify();
SELECT okno_requeue((SELECT id FROM outbox WHERE payload = '{"booking_id": 3}')) AS requeued;
SELECT payload FROM okno_drain(10);
SELECT keys_deleted, events_deleted FROM okno_purge('0 seconds', '0 seconds');
SELECT * FROM okno_verify();

-- an update straight from 0.1.0 to the current version, in one step
\c regress_okno_direct
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.1.0' CASCADE;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'd-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS id;
ALTER EXTENSION okno UPDATE;
-- (the owner adds what 0.7.0's order keys need: outbox.order_key and its
-- index; upgrade_paths shows okno serving the tables before it does)
SELECT p AS prepared FROM okno_prepare_tables() AS p;
:describe \gset direct_
SELECT :'direct_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
SELECT okno_create_booking(1, 'd-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS replayed_id;
SELECT * FROM okno_verify();

-- 0.3.0 with data, to 0.4.0 (the drain hint) and on: same as a fresh
-- install, and the first drain after the update writes the hint
\c regress_okno_v030
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.3.0' CASCADE;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'v3-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 3) AS i;
-- the new library with 0.3.0's objects: no hint to read or write
SELECT payload FROM okno_drain(1);
ALTER EXTENSION okno UPDATE TO '0.4.0';
SELECT pg_sequence_last_value('okno_drain_hint') IS NULL AS no_hint_yet;
-- and on to the current version (0.4.1: the owner's privileges)
ALTER EXTENSION okno UPDATE;
-- (the owner adds what 0.7.0's order keys need: outbox.order_key and its
-- index; upgrade_paths shows okno serving the tables before it does)
SELECT p AS prepared FROM okno_prepare_tables() AS p;
:describe \gset v030_
SELECT :'v030_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
\c regress_okno_v030
SELECT payload FROM okno_drain(1);
SELECT pg_sequence_last_value('okno_drain_hint') IS NOT NULL AS hint_written;
SELECT payload FROM okno_drain(10);
SELECT * FROM okno_verify();

-- from 0.2.0, 0.4.0 and 0.4.1 too, with what 0.5.0 orders: a booking whose
-- booking_created is parked and whose cancellation is pending.  After the
-- update the cancellation is held back; requeueing releases both in order.
\c :test_db :superuser_name
CREATE DATABASE regress_okno_from_v020;
CREATE DATABASE regress_okno_from_v040;
CREATE DATABASE regress_okno_from_v041;
\c regress_okno_from_v020
\set from_version 0.2.0
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION :'from_version' CASCADE;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'f-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 2) AS i;
SET okno.max_attempts = 1;
BEGIN;
SELECT count(*) AS drained FROM okno_drain(10);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}'), 'recipient down');
COMMIT;
RESET okno.max_attempts;
SELECT okno_cancel_booking(1, 1) ->> 'status' AS cancelled;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) AS events_before FROM outbox \gset
ALTER EXTENSION okno UPDATE;
-- (the owner adds what 0.7.0's order keys need: outbox.order_key and its
-- index; upgrade_paths shows okno serving the tables before it does)
SELECT p AS prepared FROM okno_prepare_tables() AS p;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'okno') AS current_version FROM pg_extension WHERE extname = 'okno';
:describe \gset from_
SELECT :'from_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) = :'events_before' AS events_kept FROM outbox;
SELECT pending, parked, held_back FROM okno_outbox_status;
SELECT kind, payload FROM okno_drain(10);
SELECT okno_requeue_parked() AS requeued;
SELECT kind, payload FROM okno_drain(10);
SELECT kind, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
\c regress_okno_from_v040
\set from_version 0.4.0
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION :'from_version' CASCADE;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'f-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 2) AS i;
SET okno.max_attempts = 1;
BEGIN;
SELECT count(*) AS drained FROM okno_drain(10);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}'), 'recipient down');
COMMIT;
RESET okno.max_attempts;
SELECT okno_cancel_booking(1, 1) ->> 'status' AS cancelled;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) AS events_before FROM outbox \gset
ALTER EXTENSION okno UPDATE;
-- (the owner adds what 0.7.0's order keys need: outbox.order_key and its
-- index; upgrade_paths shows okno serving the tables before it does)
SELECT p AS prepared FROM okno_prepare_tables() AS p;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'okno') AS current_version FROM pg_extension WHERE extname = 'okno';
:describe \gset from_
SELECT :'from_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) = :'events_before' AS events_kept FROM outbox;
SELECT pending, parked, held_back FROM okno_outbox_status;
SELECT kind, payload FROM okno_drain(10);
SELECT okno_requeue_parked() AS requeued;
SELECT kind, payload FROM okno_drain(10);
SELECT kind, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
\c regress_okno_from_v041
\set from_version 0.4.1
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION :'from_version' CASCADE;
-- a relay granted by column, as 0.4's docs/PRIVILEGES.md has it
CREATE ROLE regress_okno_v041_relay;
GRANT EXECUTE ON FUNCTION okno_record_failure(uuid, text), okno_drain(integer) TO regress_okno_v041_relay;
GRANT SELECT (id, kind, payload, created_at, delivered_at, attempts, last_error, available_at, parked_at),
      UPDATE (delivered_at, attempts, last_error, available_at, parked_at)
   ON outbox TO regress_okno_v041_relay;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'f-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 2) AS i;
SET okno.max_attempts = 1;
BEGIN;
SELECT count(*) AS drained FROM okno_drain(10);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}'), 'recipient down');
COMMIT;
RESET okno.max_attempts;
SELECT okno_cancel_booking(1, 1) ->> 'status' AS cancelled;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) AS events_before FROM outbox \gset
ALTER EXTENSION okno UPDATE;
-- (the owner adds what 0.7.0's order keys need: outbox.order_key and its
-- index; upgrade_paths shows okno serving the tables before it does)
SELECT p AS prepared FROM okno_prepare_tables() AS p;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'okno') AS current_version FROM pg_extension WHERE extname = 'okno';
:describe \gset from_
SELECT :'from_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) = :'events_before' AS events_kept FROM outbox;
SELECT pending, parked, held_back FROM okno_outbox_status;
SELECT kind, payload FROM okno_drain(10);
SELECT okno_requeue_parked() AS requeued;
SELECT kind, payload FROM okno_drain(10);
SELECT kind, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
-- subscribers after the update: the events from before it (no created_xid)
-- are none of theirs, the new ones are
SELECT count(*) AS events_without_transaction FROM outbox WHERE created_xid IS NULL;
SELECT okno_subscribe('journal') AS subscribed;
SELECT okno_create_booking(1, 'f-3', '{"resource_id":1,"starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T11:00:00Z"}') ->> 'id' AS id;
-- the relay granted by column records failures as before (okno_record_failure
-- returns the row, created_xid included): okno_prepare_tables() granted it
-- what 0.7.0's drain reads besides, outbox.order_key, as it may read kind
-- and payload
SELECT has_column_privilege('regress_okno_v041_relay', 'outbox', 'order_key', 'SELECT') AS relay_reads_order_key;
BEGIN;
SET LOCAL ROLE regress_okno_v041_relay;
SELECT attempts FROM okno_record_failure((SELECT event_id FROM okno_drain(1)), 'down');
ROLLBACK;
SELECT kind, payload FROM okno_drain(10, 'journal');
SELECT okno_purge('0 seconds', '0 seconds');
SELECT kind, payload FROM okno_drain(10);
SELECT okno_purge('0 seconds', '0 seconds');
SELECT * FROM okno_verify();

-- from 0.5.0: a fresh install's tables and a course database's adopted
-- ones, each installed and updated by a database owner who is not a
-- superuser.  The tables leave the extension and go to that owner, rows
-- untouched and nothing rewritten, grants kept; what only adoption needed
-- goes (its time stays, as since when okno_verify checks bookings); keys
-- replay and events drain as before.
\c :test_db :superuser_name
CREATE ROLE regress_okno_v050_owner LOGIN;
CREATE ROLE regress_okno_v050_relay;
CREATE DATABASE regress_okno_from_v050 OWNER regress_okno_v050_owner;
CREATE DATABASE regress_okno_from_v050_course OWNER regress_okno_v050_owner;
-- the five tables, their sequences and okno's: owner, membership, whether
-- pg_dump dumps them as extension data, their files
\set tables 'SELECT c.relname, CASE WHEN c.relowner = 10 THEN ''bootstrap superuser'' ELSE pg_get_userbyid(c.relowner) END AS owner, EXISTS (SELECT FROM pg_depend d WHERE d.classid = ''pg_class''::regclass AND d.objid = c.oid AND d.deptype = ''e'') AS member, c.oid = ANY ((SELECT extconfig FROM pg_extension WHERE extname = ''okno'')::oid[]) AS extension_data FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace AND c.relkind IN (''r'', ''S'') ORDER BY 1'
\set files 'SELECT string_agg(format(''%s=%s'', c.relname, pg_relation_filenode(c.oid)), '','' ORDER BY c.relname) FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace AND c.relkind = ''r'' AND c.relname IN (''actors'', ''resources'', ''bookings'', ''idempotency'', ''outbox'')'
\set rows 'SELECT md5(concat_ws(''|'', (SELECT string_agg(t::text, '','' ORDER BY t.id) FROM actors t), (SELECT string_agg(t::text, '','' ORDER BY t.id) FROM resources t), (SELECT string_agg(t::text, '','' ORDER BY t.id) FROM bookings t), (SELECT string_agg(t::text, '','' ORDER BY t.actor_id, t.request_key) FROM idempotency t), (SELECT string_agg(t::text, '','' ORDER BY t.id) FROM outbox t)))'
\c regress_okno_from_v050 regress_okno_v050_owner
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.5.0' CASCADE;
RESET client_min_messages;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'v5-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 3) AS i;
SELECT okno_subscribe('journal') AS subscribed;
SELECT okno_create_booking(1, 'v5-4', '{"resource_id":1,"starts_at":"2026-12-04T10:00:00Z","ends_at":"2026-12-04T11:00:00Z"}') ->> 'id' AS id;
SET okno.max_attempts = 1;
BEGIN;
SELECT count(*) AS drained FROM okno_drain(2);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}'), 'recipient down');
COMMIT;
RESET okno.max_attempts;
-- a relay granted as 0.5.0's docs/PRIVILEGES.md has it (EXECUTE by a
-- superuser: okno's functions are the bootstrap superuser's)
\c regress_okno_from_v050 :superuser_name
REVOKE EXECUTE ON FUNCTION okno_record_failure(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION okno_record_failure(uuid, text) TO regress_okno_v050_relay;
\c regress_okno_from_v050 regress_okno_v050_owner
GRANT SELECT ON okno_outbox_status, okno_subscribers TO regress_okno_v050_relay;
GRANT SELECT (id, kind, payload, created_at, delivered_at, attempts, last_error, available_at, parked_at, created_xid),
      UPDATE (delivered_at, attempts, last_error, available_at, parked_at)
   ON outbox TO regress_okno_v050_relay;
:tables;
:files \gset before_
:rows \gset before_
SELECT pending, parked FROM okno_outbox_status;
ALTER EXTENSION okno UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'okno';
:tables;
:files \gset after_
:rows \gset after_
SELECT :'before_string_agg' = :'after_string_agg' AS nothing_rewritten, :'before_md5' = :'after_md5' AS rows_untouched;
-- (the owner adds what 0.7.0's order keys need, outbox.order_key and its
-- index, without rewriting the table)
SELECT p AS prepared FROM okno_prepare_tables() AS p;
:files \gset prepared_
SELECT :'before_string_agg' = :'prepared_string_agg' AS nothing_rewritten_by_prepare;
SELECT count(*) AS event_triggers FROM pg_event_trigger;
SELECT to_regclass('okno_adoption') AS okno_adoption, (SELECT checked_since FROM okno_purge_horizon) AS checked_since;
SELECT column_default FROM information_schema.columns WHERE table_name = 'idempotency' AND column_name = 'fingerprint_version';
-- the relay's grants are kept, on the view and the function made anew too
SELECT has_function_privilege('regress_okno_v050_relay', 'okno_record_failure(uuid, text)', 'EXECUTE') AS relay_may_record,
       has_function_privilege('public', 'okno_record_failure(uuid, text)', 'EXECUTE') AS public_may_record,
       has_table_privilege('regress_okno_v050_relay', 'okno_outbox_status', 'SELECT') AS relay_reads_status,
       has_table_privilege('regress_okno_v050_relay', 'okno_subscribers', 'SELECT') AS relay_reads_subscribers,
       has_column_privilege('regress_okno_v050_relay', 'outbox', 'parked_at', 'UPDATE') AS relay_updates_outbox;
SELECT pending, parked FROM okno_outbox_status;
SELECT subscriber, pending FROM okno_subscribers;
-- and okno goes on: the keys replay, the owner migrates its tables, the
-- events drain, the parked one is requeued
SELECT okno_create_booking(1, 'v5-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS replayed_id;
ALTER TABLE bookings ADD COLUMN note text;
SELECT okno_create_booking(1, 'v5-5', '{"resource_id":1,"starts_at":"2026-12-05T10:00:00Z","ends_at":"2026-12-05T11:00:00Z"}') ->> 'id' AS id;
SELECT okno_requeue_parked() AS requeued;
SELECT kind, payload FROM okno_drain(10);
SELECT kind, payload FROM okno_drain(10, 'journal');
-- (as the relay: EXECUTE on okno_record_failure is its alone, as before)
\c regress_okno_from_v050 :superuser_name
BEGIN;
SET LOCAL ROLE regress_okno_v050_relay;
SELECT attempts, last_error FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 5}'), 'down again');
COMMIT;
\c regress_okno_from_v050 regress_okno_v050_owner
SELECT * FROM okno_verify();
-- DROP EXTENSION leaves them now
DROP EXTENSION okno;
SELECT count(*) AS bookings_kept FROM bookings;

-- a course database that 0.5.0 adopted
\getenv abs_srcdir PG_ABS_SRCDIR
\set m001 :abs_srcdir '/course/migrations/001_actors_resources.sql'
\set m002 :abs_srcdir '/course/migrations/002_bookings.sql'
\set m003 :abs_srcdir '/course/migrations/003_idempotency.sql'
\set m005 :abs_srcdir '/course/migrations/005_outbox.sql'
\c regress_okno_from_v050_course regress_okno_v050_owner
SET client_min_messages = warning;
\i :m001
\i :m002
\i :m003
\i :m005
RESET client_min_messages;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('november room');
-- a booking from before keys and events, and one of the course's service
-- with its key and event
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2026-11-01T10:00:00Z', '2026-11-01T11:00:00Z');
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2026-12-01T07:00:00Z', '2026-12-01T08:00:00Z');
INSERT INTO idempotency VALUES (1, 'november-room-1',
    'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a',
    '{"id": 2, "resource_id": 1, "actor_id": 1, "starts_at": "2026-12-01T10:00:00+03:00", "ends_at": "2026-12-01T11:00:00+03:00", "status": "confirmed"}');
INSERT INTO outbox VALUES ('5f0c2c61-8e06-4d5c-9a55-2f0a6d1b4c11', 'booking_created', '{"booking_id": 2}', NULL);
SET client_min_messages = error;
CREATE EXTENSION okno VERSION '0.5.0' CASCADE;
RESET client_min_messages;
SELECT relation, former_owner FROM okno_adoption ORDER BY 1;
SELECT max(adopted_at) AS adopted_at FROM okno_adoption \gset
:tables;
:files \gset before_
:rows \gset before_
ALTER EXTENSION okno UPDATE;
:tables;
:files \gset after_
:rows \gset after_
SELECT :'before_string_agg' = :'after_string_agg' AS nothing_rewritten, :'before_md5' = :'after_md5' AS rows_untouched;
-- (the owner adds what 0.7.0's order keys need, outbox.order_key and its
-- index, without rewriting the table)
SELECT p AS prepared FROM okno_prepare_tables() AS p;
:files \gset prepared_
SELECT :'before_string_agg' = :'prepared_string_agg' AS nothing_rewritten_by_prepare;
SELECT checked_since = :'adopted_at' AS checked_since_adoption FROM okno_purge_horizon;
SELECT okno_create_booking(1, 'november-room-1',
    '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') ->> 'id' AS replayed_id;
SELECT event_id = '5f0c2c61-8e06-4d5c-9a55-2f0a6d1b4c11' AS the_course_s, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
SELECT * FROM okno_prepare_tables();

-- from 0.6.0 (0.7.0: operations' keys, tombstones, order keys): a 0.6.0
-- install with keys, a subscriber whose booking_created is parked and
-- whose cancellation it holds back (okno_delivery kept the booking as
-- jsonb).  The new library serves it as 0.6.0 until the update; the
-- update keeps every key and row, converts the held-back rows' booking to
-- the order key, the owner adds outbox.order_key with okno_prepare_tables(),
-- and then the keys replay, the subscriber gets its events in order, and
-- a purge leaves tombstones that answer key_expired.
\c :test_db :superuser_name
CREATE DATABASE regress_okno_from_v060;
\c regress_okno_from_v060
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.6.0' CASCADE;
RESET client_min_messages;
SELECT count(*) AS tables_created FROM okno_create_tables();
-- (the tables as 0.6.0's okno_create_tables() made them: this library's
-- adds what 0.7.0 needs)
ALTER TABLE outbox DROP COLUMN order_key;
CREATE INDEX outbox_order ON outbox ((payload -> 'booking_id'), id) WHERE delivered_at IS NULL;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_subscribe('journal') AS journal;
SELECT okno_create_booking(1, 'g-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 2) AS i;
SET okno.max_attempts = 1;
BEGIN;
SELECT count(*) AS journal_drained FROM okno_drain(10, 'journal');
SELECT parked_at IS NOT NULL AS parked
  FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}'), 'journal down', 'journal');
COMMIT;
RESET okno.max_attempts;
SELECT okno_cancel_booking(1, 1) ->> 'status' AS cancelled;
-- (as 0.6.0: the cancellation is held back for the journal)
SELECT count(*) AS journal_drained FROM okno_drain(10, 'journal');
SELECT booking, jsonb_typeof(booking) AS booking_type, first, parked_at IS NOT NULL AS parked
  FROM okno_delivery ORDER BY event_id;
SELECT string_agg(format('%s/%s/%s', actor_id, request_key, response_body), ';' ORDER BY request_key) AS keys_before FROM idempotency \gset
ALTER EXTENSION okno UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'okno';
-- okno_delivery's order keys are text now
SELECT order_key, pg_typeof(order_key) AS order_key_type, first, parked_at IS NOT NULL AS parked
  FROM okno_delivery ORDER BY event_id;
-- until the owner adds what 0.7.0's order keys need of outbox, okno
-- serves the tables as 0.6.0 did: the cancellation stays held back
SELECT count(*) AS journal_drained FROM okno_drain(10, 'journal');
SELECT problem, detail FROM okno_verify() ORDER BY 1, 2;
SELECT p AS prepared FROM okno_prepare_tables() AS p;
:describe \gset from060_
-- the same as a fresh install, but for the place of order_key (the column
-- dropped above to make the 0.6.0 table keeps its number)
SELECT 'only after the update: ' || l AS difference FROM regexp_split_to_table(:'from060_string_agg', E'\\n') AS l
EXCEPT SELECT 'only after the update: ' || regexp_split_to_table(:'fresh_string_agg', E'\\n')
UNION ALL
(SELECT 'only in a fresh install: ' || l FROM regexp_split_to_table(:'fresh_string_agg', E'\\n') AS l
 EXCEPT SELECT 'only in a fresh install: ' || regexp_split_to_table(:'from060_string_agg', E'\\n'))
ORDER BY 1;
SELECT string_agg(format('%s/%s/%s', actor_id, request_key, response_body), ';' ORDER BY request_key) = :'keys_before' AS keys_kept FROM idempotency;
SELECT okno_create_booking(1, 'g-2', '{"resource_id":1,"starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}') ->> 'id' AS replayed_id;
-- the journal: still held back, then in order once requeued
SELECT count(*) AS journal_drained FROM okno_drain(10, 'journal');
SELECT okno_requeue_parked('journal') AS requeued;
SELECT kind, payload FROM okno_drain(10, 'journal');
SELECT kind, payload FROM okno_drain(10, 'journal');
-- an emitted event of booking 2 follows its booking_created for the journal
SELECT okno_emit('booking_rescheduled', '{"booking_id": 2}', '2') IS NOT NULL AS emitted;
SELECT kind, payload FROM okno_drain(10, 'journal');
-- the keys are purged into tombstones, and a retry is answered
SELECT count(*) AS default_drained FROM okno_drain(100);
SELECT * FROM okno_purge('0 seconds', '0 seconds');
SELECT count(*) AS tombstones FROM okno_key_tombstone;
\set VERBOSITY terse
SELECT okno_create_booking(1, 'g-2', '{"resource_id":1,"starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}');
\set VERBOSITY default
SELECT * FROM okno_verify();

\c :test_db :superuser_name
DROP DATABASE regress_okno_from_v050;
DROP DATABASE regress_okno_from_v050_course;
DROP DATABASE regress_okno_from_v060;
DROP ROLE regress_okno_v050_relay;
DROP ROLE regress_okno_v050_owner;
DROP DATABASE regress_okno_from_v020;
DROP DATABASE regress_okno_from_v040;
DROP DATABASE regress_okno_from_v041;
DROP ROLE regress_okno_v041_relay;
DROP DATABASE regress_okno_upgrade;
DROP DATABASE regress_okno_fresh;
DROP DATABASE regress_okno_direct;
DROP DATABASE regress_okno_v020;
DROP DATABASE regress_okno_v030;
