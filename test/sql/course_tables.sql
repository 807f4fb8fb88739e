--
-- course_tables: okno in databases the course's migrations made and its
-- service filled.  The tables stay the application's: CREATE EXTENSION
-- okno changes none of them, okno refuses to serve them until their owner
-- has added what okno needs (okno_prepare_tables(), or the statements the
-- error lists), and then keeps every row and id, replays the course's keys
-- in the course's form, delivers its pending events, follows the owner's
-- next migration, and leaves the tables as they are when it is dropped.
-- (The course's own Python service writing these rows, pg_dump and
-- restore: test/shell/course_adopt.sh.)
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
-- the course's migrations (test/course/migrations)
\getenv abs_srcdir PG_ABS_SRCDIR
\set m001 :abs_srcdir '/course/migrations/001_actors_resources.sql'
\set m002 :abs_srcdir '/course/migrations/002_bookings.sql'
\set m003 :abs_srcdir '/course/migrations/003_idempotency.sql'
\set m005 :abs_srcdir '/course/migrations/005_outbox.sql'
CREATE ROLE regress_course LOGIN;
CREATE ROLE regress_course_app;
CREATE DATABASE regress_okno_course14 OWNER regress_course;
CREATE DATABASE regress_okno_course10 OWNER regress_course;
CREATE DATABASE regress_okno_course_bad OWNER regress_course;
-- the application's tables (everything in public but okno's own objects),
-- in one text, to see what changed
\set describe 'SELECT string_agg(line, E''\\n'' ORDER BY line) FROM (SELECT format(''%s %s %s'', c.relname, c.relkind, pg_get_userbyid(c.relowner)) AS line FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace AND c.relname !~ ''^okno_'' UNION ALL SELECT format(''%s.%s %s %s %s'', c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum WHERE c.relnamespace = ''public''::regnamespace AND c.relname !~ ''^okno_'' UNION ALL SELECT format(''%s %s %s'', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE connamespace = ''public''::regnamespace AND conrelid::regclass::text !~ ''^okno_'' UNION ALL SELECT format(''acl %s %s'', c.relname, c.relacl) FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace AND c.relname !~ ''^okno_'' UNION ALL SELECT format(''trigger %s %s'', tgname, tgenabled) FROM pg_trigger WHERE NOT tgisinternal UNION ALL SELECT format(''rule %s %s'', rulename, ev_enabled) FROM pg_rewrite WHERE ev_class IN (SELECT oid FROM pg_class WHERE relnamespace = ''public''::regnamespace AND relkind = ''r'') UNION ALL SELECT format(''member %s'', pg_describe_object(classid, objid, objsubid)) FROM pg_depend WHERE deptype = ''e'' AND classid = ''pg_class''::regclass AND objid IN (SELECT oid FROM pg_class WHERE relname IN (''actors'', ''resources'', ''bookings'', ''idempotency'', ''outbox''))) s'

--
-- 1. A database of lesson 14: all five tables, and the course's rows.
--
\c regress_okno_course14 regress_course
SET client_min_messages = warning;
\i :m001
\i :m002
\i :m003
\i :m005
RESET client_min_messages;
-- rows as the course's service writes them (its fingerprints: pydantic 2,
-- see course_vectors; its cards at the session's time zone)
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO actors (id, name) VALUES (7, 'demo actor, a fixed id');
INSERT INTO resources (name) VALUES ('november room'), ('october room');
-- a booking from before keys and events existed
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2026-11-01T10:00:00Z', '2026-11-01T11:00:00Z');
-- POST {"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00",...} as actor 1
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2026-12-01T07:00:00Z', '2026-12-01T08:00:00Z');
INSERT INTO idempotency VALUES (1, 'november-room-1',
    'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a',
    '{"id": 2, "resource_id": 1, "actor_id": 1, "starts_at": "2026-12-01T10:00:00+03:00", "ends_at": "2026-12-01T11:00:00+03:00", "status": "confirmed"}');
INSERT INTO outbox VALUES ('5f0c2c61-8e06-4d5c-9a55-2f0a6d1b4c11', 'booking_created', '{"booking_id": 2}', NULL);
-- POST {"resource_id":2,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T08:00:00Z"} as actor 2
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (2, 2, '2026-12-01T07:00:00Z', '2026-12-01T08:00:00Z');
INSERT INTO idempotency VALUES (2, 'october-room-1',
    '902f4640b4a4a211a3e94b6d0250f448e597bddfd6259e7468b38cdb829063c2',
    '{"id": 3, "resource_id": 2, "actor_id": 2, "starts_at": "2026-12-01T07:00:00Z", "ends_at": "2026-12-01T08:00:00Z", "status": "confirmed"}');
INSERT INTO outbox VALUES ('0d3e9b8a-1c2f-4e6a-8b7c-9d0e1f2a3b4c', 'booking_created', '{"booking_id": 3}', '2026-12-01T08:00:05Z');
-- a cancelled booking (the course's cancellation wrote no event)
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at, status)
    VALUES (2, 1, '2026-12-02T07:00:00Z', '2026-12-02T08:00:00Z', 'cancelled');
-- the course's application role's privileges, a column of the
-- application's own, and a trigger and a rule of the course's role
GRANT SELECT, INSERT ON bookings, idempotency, outbox TO regress_course_app;
ALTER TABLE actors ADD COLUMN email text;
CREATE TABLE booking_log (booking_id bigint, logged_by name);
CREATE FUNCTION log_booking() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO booking_log VALUES (NEW.id, current_user);
    RETURN NEW;
END $$;
CREATE TRIGGER log_booking AFTER INSERT ON bookings FOR EACH ROW EXECUTE FUNCTION log_booking();
CREATE RULE wake AS ON INSERT TO outbox DO ALSO NOTIFY course_outbox;
:describe \gset before_

-- the database owner, not a superuser, installs okno: nothing of the
-- application's changes (no owner, column, index, trigger, membership)
CREATE EXTENSION okno CASCADE;
:describe \gset after_
SELECT :'before_string_agg' = :'after_string_agg' AS nothing_changed;
-- and okno does not serve the tables until they have what it needs: one
-- error lists every difference and the statement that mends it
SELECT okno_create_booking(1, 'november-room-9', '{"resource_id":1,"starts_at":"2026-12-09T10:00:00Z","ends_at":"2026-12-09T11:00:00Z"}');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS bookings_unchanged FROM bookings;

-- the owner adds it: columns with constant defaults (nothing rewritten;
-- the course's rows get the time of the change), okno's indexes on outbox
-- beside the course's (outbox_pending is the course's, of another
-- definition), and since when okno_verify checks bookings
SELECT pg_relation_filenode('bookings') AS bookings_node, pg_relation_filenode('outbox') AS outbox_node \gset
SELECT * FROM okno_prepare_tables();
SELECT pg_relation_filenode('bookings') = :bookings_node AS bookings_not_rewritten,
       pg_relation_filenode('outbox') = :outbox_node AS outbox_not_rewritten;
-- a second call has nothing left to do
SELECT * FROM okno_prepare_tables();
-- still the application's: its owner, its grants, its trigger and rule,
-- no member of the extension, not dumped as extension data
SELECT c.relname, pg_get_userbyid(c.relowner) AS owner,
       EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e'
                  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno')) AS member,
       c.oid = ANY ((SELECT extconfig FROM pg_extension WHERE extname = 'okno')::oid[]) AS extension_data
  FROM pg_class c
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S') AND c.relname !~ '^okno_'
 ORDER BY 1;
SELECT c.relname, a.grantee::regrole, string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type) AS privileges
  FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S') AND c.relname !~ '^okno_'
   AND a.grantee <> c.relowner
 GROUP BY 1, 2 ORDER BY 1, 2;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'bookings'::regclass AND NOT tgisinternal;
SELECT rulename, ev_enabled FROM pg_rewrite WHERE ev_class = 'outbox'::regclass;
-- every row as it was, okno's columns added, the course's and the
-- application's columns untouched
SELECT id, resource_id, actor_id, starts_at AT TIME ZONE 'UTC' AS starts_at, status,
       created_at = (SELECT checked_since FROM okno_purge_horizon) AS at_the_change
  FROM bookings ORDER BY id;
SELECT actor_id, request_key, fingerprint_version FROM idempotency ORDER BY 1, 2;
SELECT id, attempts, last_error, available_at, parked_at, delivered_at IS NOT NULL AS delivered FROM outbox ORDER BY id;
SELECT indexrelid::regclass, pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'outbox'::regclass ORDER BY 1;
SELECT id, name, email FROM actors ORDER BY id;

-- the course's keys replay in the course's form: the same request (written
-- in any key order or spacing) gets the stored card exactly; the same
-- instants at another offset are another request to the course, and so to
-- okno
SELECT okno_create_booking(1, 'november-room-1',
    '{"ends_at": "2026-12-01T11:00:00+03:00", "starts_at": "2026-12-01T10:00:00+03:00", "resource_id": 1}') AS replay;
SELECT * FROM okno_create_booking_result(2, 'october-room-1',
    '{"resource_id":2,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T08:00:00Z"}');
\set VERBOSITY terse
SELECT okno_create_booking(1, 'november-room-1',
    '{"resource_id":1,"starts_at":"2026-12-01T07:00:00Z","ends_at":"2026-12-01T08:00:00Z"}');
\set VERBOSITY default
-- new keys are okno's, and ids go on after the course's (also after the
-- actor with the fixed id); the owner's trigger ran, as the owner
SELECT okno_create_booking(1, 'november-room-2',
    '{"resource_id":1,"starts_at":"2026-12-01T09:00:00Z","ends_at":"2026-12-01T10:00:00Z"}') ->> 'id' AS id;
SELECT request_key, fingerprint_version FROM idempotency WHERE request_key = 'november-room-2';
SELECT booking_id, logged_by FROM booking_log ORDER BY booking_id;
INSERT INTO actors (name) VALUES ('carol') RETURNING id;
-- the course's slots are taken
\set VERBOSITY terse
SELECT okno_create_booking(2, 'october-room-2',
    '{"resource_id":2,"starts_at":"2026-12-01T07:30:00Z","ends_at":"2026-12-01T08:30:00Z"}');
\set VERBOSITY default

-- the course's next migration, by the owner, with okno in use: okno goes
-- on in this session, and the new columns get their defaults
ALTER TABLE bookings ADD COLUMN note text DEFAULT 'from the course';
CREATE INDEX bookings_by_actor ON bookings (actor_id, starts_at);
ALTER TABLE outbox ADD COLUMN trace text;
SELECT okno_create_booking(2, 'october-room-3',
    '{"resource_id":2,"starts_at":"2026-12-04T07:30:00Z","ends_at":"2026-12-04T08:30:00Z"}') ->> 'id' AS id \gset
SELECT note FROM bookings WHERE id = :id;
SELECT okno_create_booking(2, 'october-room-3',
    '{"resource_id":2,"starts_at":"2026-12-04T07:30:00Z","ends_at":"2026-12-04T08:30:00Z"}') ->> 'id' = :'id' AS replayed;

-- the course's service, still running beside okno, leaves the version out:
-- its keys are the course's form, and okno replays them
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 2, '2026-12-03T07:00:00Z', '2026-12-03T08:00:00Z') RETURNING id AS course_booking \gset
INSERT INTO idempotency (actor_id, request_key, fingerprint, response_body)
    VALUES (2, 'beside-1', 'f105d87ac50ead311903147f8cec75ba4137b891c9afb2e0cf722299f68e17b3',
            jsonb_build_object('id', :course_booking, 'resource_id', 2, 'actor_id', 2,
                               'starts_at', '2026-12-01T07:00:00Z', 'ends_at', '2026-12-01T08:00:00Z', 'status', 'confirmed'));
SELECT fingerprint_version FROM idempotency WHERE request_key = 'beside-1';
SELECT okno_create_booking(2, 'beside-1',
    '{"resource_id":2,"starts_at":"2026-12-01T02:00:00-05:00","ends_at":"2026-12-01T03:00:00-05:00"}') ->> 'id' = :'course_booking' AS replayed;
-- (a made-up row: the card names a booking on resource 1 although the
-- key's request was resource 2, and the course would have written an
-- event; okno_verify sees the missing event, but not the card's room and
-- times, since 0.7.0: an application may move a booking, and its key
-- replays the card of the booking as created)
SELECT * FROM okno_verify();
DELETE FROM idempotency WHERE request_key = 'beside-1';
DELETE FROM bookings WHERE id = :course_booking;

-- the course's pending event is delivered like okno's, once
SELECT event_id = '5f0c2c61-8e06-4d5c-9a55-2f0a6d1b4c11' AS the_course_s, kind, payload, attempts
  FROM okno_drain(10) ORDER BY payload ->> 'booking_id';
SELECT count(*) AS due FROM okno_drain(10);
-- a subscriber gets what the course's service writes beside okno too: its
-- events record their transaction (a column default), whatever their ids
SELECT okno_subscribe('journal') AS subscribed;
INSERT INTO outbox (id, kind, payload)
    VALUES ('7a1c1e5e-0000-4000-8000-000000000001', 'booking_created', '{"booking_id": 9001}');
SELECT created_xid IS NOT NULL AS has_its_transaction FROM outbox WHERE id = '7a1c1e5e-0000-4000-8000-000000000001';
SELECT event_id, kind, payload FROM okno_drain(10, 'journal');
SELECT event_id, kind, payload FROM okno_drain(10);
SELECT okno_unsubscribe('journal') AS unsubscribed;
DELETE FROM outbox WHERE id = '7a1c1e5e-0000-4000-8000-000000000001';
-- what the course left behind before okno served the tables is no
-- problem; what is written after is checked
SELECT * FROM okno_verify();
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (2, 1, '2026-12-05T07:00:00Z', '2026-12-05T08:00:00Z') RETURNING id AS stray \gset
SELECT problem FROM okno_verify();
DELETE FROM bookings WHERE id = :stray;

-- DROP EXTENSION okno leaves the tables as they are: the owner's, every
-- row, okno's columns and indexes, the application's columns
SELECT count(*) AS bookings_before FROM bookings;
:describe \gset before_
DROP EXTENSION okno;
:describe \gset after_
SELECT :'before_string_agg' = :'after_string_agg' AS tables_unchanged;
SELECT count(*) AS bookings_after FROM bookings;
-- okno installed again serves them at once, its keys replaying
CREATE EXTENSION okno;
SELECT * FROM okno_prepare_tables();
SELECT okno_create_booking(1, 'november-room-2',
    '{"resource_id":1,"starts_at":"2026-12-01T09:00:00Z","ends_at":"2026-12-01T10:00:00Z"}') ->> 'id' AS replayed_id;
-- (okno's own state went with it, its record of since when it checks
-- bookings too: okno_verify now asks the course's bookings from before
-- okno for their keys and events)
SELECT * FROM okno_verify();

--
-- 2. A database of lesson 10: no outbox yet.  okno_create_tables(), as the
-- owner, creates it and prepares the others; DROP EXTENSION leaves all of
-- them, the outbox too.
--
\c regress_okno_course10 regress_course
SET client_min_messages = warning;
\i :m001
\i :m002
\i :m003
RESET client_min_messages;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('november room');
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2026-12-01T07:00:00Z', '2026-12-01T08:00:00Z');
INSERT INTO idempotency VALUES (1, 'november-room-1',
    'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a',
    '{"id": 1, "resource_id": 1, "actor_id": 1, "starts_at": "2026-12-01T07:00:00Z", "ends_at": "2026-12-01T08:00:00Z", "status": "confirmed"}');
CREATE EXTENSION okno;
SELECT * FROM okno_create_tables();
SELECT relname, pg_get_userbyid(relowner) AS owner FROM pg_class
 WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND relname !~ '^okno_' ORDER BY 1;
SELECT okno_create_booking(1, 'november-room-1',
    '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') ->> 'id' AS replayed_id;
SELECT okno_create_booking(1, 'november-room-2',
    '{"resource_id":1,"starts_at":"2026-12-01T08:00:00Z","ends_at":"2026-12-01T09:00:00Z"}') ->> 'id' AS new_id;
SELECT kind, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
DROP EXTENSION okno;
SELECT relname, pg_get_userbyid(relowner) AS owner FROM pg_class
 WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY 1;
SELECT count(*) AS events_kept FROM outbox;

--
-- 3. Tables that cannot serve: every difference in one error, nothing
-- changed by CREATE EXTENSION, nor by okno_prepare_tables(), which refuses
-- with the same error before it changes anything, listing what it cannot
-- add (the columns it would add are not in its list).
--
\c regress_okno_course_bad regress_course
SET client_min_messages = warning;
CREATE EXTENSION btree_gist;
RESET client_min_messages;
CREATE TABLE actors (id serial PRIMARY KEY, name text NOT NULL, email text);
CREATE TABLE resources (id integer, name text);
CREATE TABLE bookings (
    id bigserial PRIMARY KEY,
    resource_id integer NOT NULL,
    actor_id integer NOT NULL,
    starts_at timestamp NOT NULL,
    ends_at timestamptz NOT NULL
);
CREATE TABLE idempotency (
    actor_id integer NOT NULL,
    request_key varchar(40) NOT NULL,
    fingerprint char(64) NOT NULL,
    PRIMARY KEY (actor_id, request_key)
);
CREATE VIEW outbox AS SELECT 1 AS id;
:describe \gset before_
CREATE EXTENSION okno;
:describe \gset after_
SELECT :'before_string_agg' = :'after_string_agg' AS nothing_changed;
SELECT * FROM okno_drain(1);
SELECT * FROM okno_prepare_tables();
SELECT * FROM okno_create_tables();
:describe \gset prepared_
SELECT :'before_string_agg' = :'prepared_string_agg' AS nothing_changed;
SELECT * FROM okno_drain(1);

--
-- 4. okno installed by a superuser, the tables the course's role's.  The
-- owner may change its tables but not record, in okno's own table, that
-- their rows predate okno: okno_prepare_tables() is refused before it
-- changes anything.  A superuser's okno_prepare_tables() changes them as
-- their owner and records it.  A superuser's calls run as the tables'
-- owner, which then needs the privileges on okno's own tables that the
-- role installing okno gets.
--
\c :test_db :superuser_name
CREATE DATABASE regress_okno_course_su OWNER regress_course;
\c regress_okno_course_su regress_course
\set ECHO none
SET client_min_messages = warning;
\i :m001
\i :m002
\i :m003
\i :m005
RESET client_min_messages;
\set ECHO all
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2026-11-01T10:00:00Z', '2026-11-01T11:00:00Z');
\c regress_okno_course_su :superuser_name
CREATE EXTENSION okno;
\c regress_okno_course_su regress_course
SELECT * FROM okno_prepare_tables();
SELECT count(*) AS outbox_columns FROM pg_attribute WHERE attrelid = 'outbox'::regclass AND attnum > 0 AND NOT attisdropped;
-- (reading it is not enough)
\c regress_okno_course_su :superuser_name
GRANT SELECT ON okno_purge_horizon TO regress_course;
\c regress_okno_course_su regress_course
SELECT * FROM okno_prepare_tables();
\c regress_okno_course_su :superuser_name
SELECT * FROM okno_prepare_tables();
SELECT c.relname, pg_get_userbyid(c.relowner) AS owner FROM pg_class c
 WHERE c.relnamespace = 'public'::regnamespace AND c.relname IN ('bookings', 'outbox', 'okno_outbox_pending', 'outbox_order_key')
 ORDER BY 1;
SELECT checked_since IS NOT NULL AS recorded FROM okno_purge_horizon;
SELECT okno_create_booking(1, 'su-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'status' AS created;
\set SHOW_CONTEXT never
SELECT * FROM okno_verify();
\set SHOW_CONTEXT errors
\echo :LAST_ERROR_SQLSTATE
GRANT SELECT, INSERT, UPDATE, DELETE ON okno_purge_horizon, okno_discarded, okno_subscriber, okno_delivery,
    okno_key, okno_key_tombstone TO regress_course;
GRANT USAGE, SELECT, UPDATE ON SEQUENCE okno_drain_hint TO regress_course;
SELECT * FROM okno_verify();
SELECT kind, payload FROM okno_drain(10);

\c :test_db :superuser_name
DROP DATABASE regress_okno_course_su;
DROP DATABASE regress_okno_course14;
DROP DATABASE regress_okno_course10;
DROP DATABASE regress_okno_course_bad;
DROP ROLE regress_course_app;
DROP ROLE regress_course;
