--
-- other_schema: CREATE EXTENSION okno SCHEMA lab; okno works with lab
-- absent from the search_path, also in a session that had used okno in
-- another schema before (its cached plans must not point there).  DROP
-- EXTENSION leaves the application's tables, and okno installed again
-- binds to them.
--
SELECT okno_create_booking(1, 'o-1', okno_test.payload(1, '2027-02-01T10:00:00Z', '2027-02-01T11:00:00Z')) ->> 'resource_id' AS in_public;
SELECT count(*) > 0 AS public_has_bookings FROM public.bookings;

SELECT count(*) AS bookings, (SELECT count(*) FROM idempotency) AS keys, (SELECT count(*) FROM outbox) AS events
  FROM bookings \gset before_
DROP EXTENSION okno;
-- the tables and their rows stay
SELECT count(*) = :before_bookings AS bookings_kept, (SELECT count(*) FROM idempotency) = :before_keys AS keys_kept,
       (SELECT count(*) FROM outbox) = :before_events AS events_kept
  FROM bookings;
CREATE SCHEMA lab;
CREATE EXTENSION okno SCHEMA lab;
SELECT * FROM lab.okno_create_tables();
SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname = 'okno';
SHOW search_path;

INSERT INTO lab.actors (name) VALUES ('ann');
INSERT INTO lab.resources (name) VALUES ('lab room');
SELECT lab.okno_create_booking(1, 'o-1', okno_test.payload(1, '2027-02-01T10:00:00Z', '2027-02-01T11:00:00Z')) AS card;
SELECT lab.okno_create_booking(1, 'o-1', okno_test.payload(1, '2027-02-01T10:00:00Z', '2027-02-01T11:00:00Z')) ->> 'id' AS replayed_id;
SELECT okno_test.err($$SELECT lab.okno_create_booking(1, 'o-2', okno_test.payload(1, '2027-02-01T10:30:00Z', '2027-02-01T11:30:00Z'))$$);
SELECT event_id IS NOT NULL AS got_event, kind, payload FROM lab.okno_drain_once();
SELECT lab.okno_canonical(okno_test.payload(1, '2027-02-01T10:00:00Z', '2027-02-01T11:00:00Z'));

-- a schema whose name needs quoting
DROP EXTENSION okno;
CREATE SCHEMA "Okno Lab";
CREATE EXTENSION okno SCHEMA "Okno Lab";
SELECT count(*) AS tables_created FROM "Okno Lab".okno_create_tables();
INSERT INTO "Okno Lab".actors (name) VALUES ('ann');
INSERT INTO "Okno Lab".resources (name) VALUES ('room');
SELECT "Okno Lab".okno_create_booking(1, 'o-1', okno_test.payload(1, '2027-02-01T10:00:00Z', '2027-02-01T11:00:00Z')) ->> 'id' AS id;
SELECT okno_test.err($$SELECT "Okno Lab".okno_create_booking(1, 'o-2', okno_test.payload(1, '2027-02-01T10:30:00Z', '2027-02-01T11:30:00Z'))$$);
SELECT count(*) AS drained FROM "Okno Lab".okno_drain_once();

-- back to the default: the current schema, whose tables okno binds to
-- again, keys and all
DROP EXTENSION okno;
SET client_min_messages = warning;
DROP SCHEMA lab, "Okno Lab" CASCADE;
RESET client_min_messages;
CREATE EXTENSION okno;
SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname = 'okno';
SELECT okno_create_booking(1, 'o-1', okno_test.payload(1, '2027-02-01T10:00:00Z', '2027-02-01T11:00:00Z')) ->> 'resource_id' AS replayed_in_public;
SELECT count(*) = :before_bookings AS no_new_booking FROM bookings;
