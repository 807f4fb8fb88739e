--
-- adopt: CREATE EXTENSION okno in databases the course's migrations made and
-- its service filled.  okno takes the course's tables over in place, keeps
-- every row and id, replays the course's keys in the course's form, delivers
-- its pending events, and leaves the tables when it is dropped.  Tables that
-- cannot serve are refused, all differences in one error, nothing changed.
-- (The course's own Python service writing these rows, pg_dump and restore:
-- test/shell/course_adopt.sh.)
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
-- the tables of a schema, in one text, to see what changed
\set describe 'SELECT string_agg(line, E''\\n'' ORDER BY line) FROM (SELECT format(''%s %s %s'', c.relname, c.relkind, pg_get_userbyid(c.relowner)) AS line FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace UNION ALL SELECT format(''%s.%s %s %s %s'', c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum WHERE c.relnamespace = ''public''::regnamespace UNION ALL SELECT format(''%s %s %s'', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE connamespace = ''public''::regnamespace UNION ALL SELECT format(''acl %s %s'', c.relname, c.relacl) FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace UNION ALL SELECT format(''trigger %s %s'', tgname, tgenabled) FROM pg_trigger WHERE NOT tgisinternal) s'

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
-- the course's application role's privileges, and a trigger of the
-- course's role
GRANT SELECT, INSERT ON bookings, idempotency, outbox TO regress_course_app;
CREATE FUNCTION count_bookings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RETURN NEW;
END $$;
CREATE TRIGGER count_bookings BEFORE INSERT ON bookings FOR EACH ROW EXECUTE FUNCTION count_bookings();
CREATE RULE wake AS ON INSERT TO outbox DO ALSO NOTIFY course_outbox;

-- the database owner, not a superuser, installs okno
CREATE EXTENSION okno CASCADE;
SELECT relation, former_owner, row_count, added FROM okno_adoption ORDER BY 1;
SELECT c.relname,
       c.relowner = (SELECT oid FROM pg_roles WHERE rolname = :'superuser_name') AS owned_by_superuser,
       EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e'
                  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno')) AS member,
       c.oid = ANY ((SELECT extconfig FROM pg_extension WHERE extname = 'okno')::oid[]) AS dumped
  FROM pg_class c
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S')
 ORDER BY 1;
-- privileges as a fresh install's: the owner's set, nothing else
SELECT c.relname, a.grantee::regrole, string_agg(a.privilege_type || CASE WHEN a.is_grantable THEN '*' ELSE '' END,
                                                 ', ' ORDER BY a.privilege_type) AS privileges
  FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S')
   AND a.grantee <> c.relowner
 GROUP BY 1, 2 ORDER BY 1, 2;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'bookings'::regclass AND NOT tgisinternal;
SELECT rulename, ev_enabled FROM pg_rewrite WHERE ev_class = 'outbox'::regclass;
-- every row as it was, okno's columns added (the course's rows at the
-- adoption's time), the course's columns untouched
SELECT id, resource_id, actor_id, starts_at AT TIME ZONE 'UTC' AS starts_at, status,
       created_at = (SELECT adopted_at FROM okno_adoption WHERE relation = 'bookings') AS at_adoption
  FROM bookings ORDER BY id;
SELECT actor_id, request_key, fingerprint_version, created_at = now() AS at_adoption FROM idempotency ORDER BY 1, 2;
SELECT id, attempts, last_error, available_at, parked_at, delivered_at IS NOT NULL AS delivered FROM outbox ORDER BY id;
SELECT indexrelid::regclass, pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'outbox'::regclass ORDER BY 1;
\d bookings

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
-- actor with the fixed id)
SELECT okno_create_booking(1, 'november-room-2',
    '{"resource_id":1,"starts_at":"2026-12-01T09:00:00Z","ends_at":"2026-12-01T10:00:00Z"}') ->> 'id' AS id;
SELECT request_key, fingerprint_version FROM idempotency WHERE request_key = 'november-room-2';
INSERT INTO actors (name) VALUES ('carol') RETURNING id;
-- the course's slots are taken
\set VERBOSITY terse
SELECT okno_create_booking(2, 'october-room-2',
    '{"resource_id":2,"starts_at":"2026-12-01T07:30:00Z","ends_at":"2026-12-01T08:30:00Z"}');
\set VERBOSITY default
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
-- event; okno_verify sees both)
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
-- what the course left behind before the adoption is no problem; what is
-- written after it is checked
SELECT * FROM okno_verify();
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (2, 1, '2026-12-05T07:00:00Z', '2026-12-05T08:00:00Z') RETURNING id AS stray \gset
SELECT problem FROM okno_verify();
DELETE FROM bookings WHERE id = :stray;

-- the course's role is the extension's owner now, with a fresh install's
-- privileges: no trigger of its own on okno's tables
\set VERBOSITY terse
CREATE TRIGGER again BEFORE INSERT ON bookings FOR EACH ROW EXECUTE FUNCTION count_bookings();
ALTER TABLE bookings ENABLE TRIGGER count_bookings;
\set VERBOSITY default

-- DROP EXTENSION okno leaves the tables okno adopted, with their rows
SELECT count(*) AS bookings_before FROM bookings;
DROP EXTENSION okno;
SELECT c.relname, pg_get_userbyid(c.relowner) = :'superuser_name' AS owned_by_superuser
  FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' ORDER BY 1;
\c regress_okno_course14 :superuser_name
SELECT count(*) AS bookings_after FROM bookings;
SELECT count(*) AS keys_after FROM idempotency;
-- and a superuser gives them back
ALTER TABLE actors OWNER TO regress_course;
ALTER TABLE resources OWNER TO regress_course;
ALTER TABLE bookings OWNER TO regress_course;
ALTER TABLE idempotency OWNER TO regress_course;
ALTER TABLE outbox OWNER TO regress_course;
\c regress_okno_course14 regress_course
-- okno installed again takes them over again, with okno's columns already
-- there, and the keys okno stored in its own form
CREATE EXTENSION okno;
SELECT relation, added FROM okno_adoption ORDER BY 1;
SELECT okno_create_booking(1, 'november-room-2',
    '{"resource_id":1,"starts_at":"2026-12-01T09:00:00Z","ends_at":"2026-12-01T10:00:00Z"}') ->> 'id' AS replayed_id;
SELECT * FROM okno_verify();

--
-- 2. A database of lesson 10: no outbox yet.  okno creates it (and drops it
-- with itself); the other tables stay.
--
\c regress_okno_course10 :superuser_name
-- (btree_gist of a superuser here, so that DROP OWNED below drops okno only)
CREATE EXTENSION btree_gist;
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
SELECT relation FROM okno_adoption ORDER BY 1;
SELECT okno_create_booking(1, 'november-room-1',
    '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') ->> 'id' AS replayed_id;
SELECT okno_create_booking(1, 'november-room-2',
    '{"resource_id":1,"starts_at":"2026-12-01T08:00:00Z","ends_at":"2026-12-01T09:00:00Z"}') ->> 'id' AS new_id;
SELECT kind, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
-- DROP OWNED BY the extension's owner drops okno; the course's tables stay,
-- the outbox okno made goes
\c regress_okno_course10 :superuser_name
DROP OWNED BY regress_course;
SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY 1;
-- okno installed in another schema beside the course's tables makes a
-- second set, and says so
CREATE SCHEMA lab;
CREATE EXTENSION okno SCHEMA lab;
SELECT count(*) AS okno_tables_in_lab FROM pg_class WHERE relnamespace = 'lab'::regnamespace AND relkind = 'r';
DROP EXTENSION okno;

--
-- 3. Tables that cannot serve: every difference in one error, nothing
-- changed.
--
\c regress_okno_course_bad regress_course
SET client_min_messages = warning;
CREATE EXTENSION btree_gist;
RESET client_min_messages;
CREATE TABLE actors (id serial PRIMARY KEY, name text NOT NULL, email text);
CREATE TABLE resources (id integer, name text);
CREATE DOMAIN short_text AS text CHECK (length(VALUE) < 100);
CREATE TABLE bookings (
    id bigserial PRIMARY KEY,
    resource_id integer NOT NULL,
    actor_id integer NOT NULL,
    starts_at timestamp NOT NULL,
    ends_at timestamptz NOT NULL,
    note short_text
);
CREATE TABLE idempotency (
    actor_id integer NOT NULL,
    request_key varchar(40) NOT NULL,
    fingerprint char(64) NOT NULL,
    PRIMARY KEY (actor_id, request_key)
);
CREATE VIEW outbox AS SELECT 1 AS id;
CREATE TYPE booking_ref AS (v bigint);
CREATE FUNCTION booking_ref_id(booking_ref) RETURNS bigint LANGUAGE sql AS 'SELECT ($1).v';
CREATE CAST (booking_ref AS bigint) WITH FUNCTION booking_ref_id(booking_ref) AS IMPLICIT;
CREATE TABLE payments (booking booking_ref REFERENCES bookings (id));
:describe \gset before_
-- (no CONTEXT: PostgreSQL 18 adds the extension script's line to it)
\set SHOW_CONTEXT never
CREATE EXTENSION okno;
\set SHOW_CONTEXT errors
:describe \gset after_
SELECT :'before_string_agg' = :'after_string_agg' AS nothing_changed;
SELECT count(*) AS okno_installed FROM pg_extension WHERE extname = 'okno';

\c :test_db :superuser_name
DROP DATABASE regress_okno_course14;
DROP DATABASE regress_okno_course10;
DROP DATABASE regress_okno_course_bad;
DROP ROLE regress_course_app;
DROP ROLE regress_course;
