--
-- settings: nothing okno stores or returns depends on session settings,
-- and nothing it runs depends on the caller's search_path
--
SELECT okno_create_booking(1, 's-1', okno_test.payload(3, '2026-12-10T10:00:00.25+05:45', '2026-12-10T11:00:00+05:45')) AS card \gset
SELECT okno_fingerprint(okno_test.payload(3, '2026-12-10T10:00:00.25+05:45', '2026-12-10T11:00:00+05:45')) AS fp \gset

SET TimeZone = 'Pacific/Chatham';
SET DateStyle = 'SQL, DMY';
SET IntervalStyle = 'sql_standard';
SET extra_float_digits = -10;
SET lc_monetary = 'C';
SELECT okno_create_booking(1, 's-1', okno_test.payload(3, '2026-12-10T10:00:00.25+05:45', '2026-12-10T11:00:00+05:45')) = :'card'::jsonb AS same_card,
       okno_fingerprint(okno_test.payload(3, '2026-12-10T10:00:00.25+05:45', '2026-12-10T11:00:00+05:45')) = :'fp' AS same_fingerprint;
-- a booking created under these settings is written in UTC all the same
SELECT okno_create_booking(1, 's-2', okno_test.payload(3, '2026-12-10T12:00:00-03:30', '2026-12-10T13:00:00-03:30')) - 'id' AS card;
SELECT starts_at, ends_at FROM bookings WHERE id = (SELECT (response_body ->> 'id')::bigint FROM idempotency WHERE request_key = 's-2');
RESET ALL;
SELECT :'card'::jsonb - 'id' AS card;

-- objects named like okno's, earlier in the search_path, are never used
CREATE SCHEMA decoy;
CREATE TABLE decoy.idempotency (actor_id int, request_key text, fingerprint text, fingerprint_version smallint, response_body jsonb);
INSERT INTO decoy.idempotency VALUES (1, 's-3', repeat('0', 64), 1, '{"id": -1}');
CREATE TABLE decoy.bookings (LIKE bookings);
CREATE TABLE decoy.outbox (LIKE outbox);
CREATE TABLE decoy.actors (id int, name text);
CREATE TABLE decoy.resources (id int, name text);
CREATE FUNCTION decoy.now() RETURNS timestamptz LANGUAGE sql AS $$ SELECT '2000-01-01'::timestamptz $$;
CREATE FUNCTION decoy.clock_timestamp() RETURNS timestamptz LANGUAGE sql AS $$ SELECT '2000-01-01'::timestamptz $$;
SET search_path = decoy, public;
SELECT public.okno_create_booking(1, 's-3', okno_test.payload(3, '2026-12-11T10:00:00Z', '2026-12-11T11:00:00Z')) - 'id' AS card;
SELECT count(*) AS decoy_bookings FROM decoy.bookings;
SELECT count(*) AS decoy_events FROM decoy.outbox;
-- and with an empty search_path
SET search_path = '';
SELECT public.okno_create_booking(1, 's-3', okno_test.payload(3, '2026-12-11T10:00:00Z', '2026-12-11T11:00:00Z')) - 'id' AS replay;
SELECT (public.okno_create_booking(1, 's-4', okno_test.payload(3, '2026-12-11T11:00:00Z', '2026-12-11T12:00:00Z')) ->> 'resource_id') AS created;
RESET search_path;
SELECT created_at > '2026-01-01' AS real_created_at FROM idempotency WHERE request_key = 's-3';
DROP SCHEMA decoy CASCADE;
