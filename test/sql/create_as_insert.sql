--
-- create_as_insert: whatever has been done to okno's tables, a create
-- behaves as the plain INSERTs of its three rows would, or fails with a
-- clear error; it never stores a booking without its key and its event.
-- Each case runs in a session whose caches are warm (it created before the
-- change) and in a new session, and is compared with a plain INSERT.
--
SELECT id AS actor FROM actors ORDER BY id LIMIT 1 \gset
SELECT id AS room FROM resources ORDER BY id LIMIT 1 \gset
-- the payload of a one-hour booking of room on day d of March 2033
CREATE FUNCTION okno_test.m(room integer, d integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('resource_id', room,
        'starts_at', format('2033-03-%sT10:00:00Z', lpad(d::text, 2, '0')),
        'ends_at', format('2033-03-%sT11:00:00Z', lpad(d::text, 2, '0')))
$$;
-- what a create of key on day d left behind: booking, key and event counts
CREATE FUNCTION okno_test.left_behind(k text, d integer) RETURNS text
LANGUAGE sql AS $$
    SELECT format('bookings %s, keys %s, events %s',
        (SELECT count(*) FROM bookings WHERE starts_at = format('2033-03-%sT10:00:00Z', lpad(d::text, 2, '0'))::timestamptz),
        (SELECT count(*) FROM idempotency WHERE request_key = k),
        (SELECT count(*) FROM outbox o JOIN bookings b ON o.payload ->> 'booking_id' = b.id::text
          WHERE b.starts_at = format('2033-03-%sT10:00:00Z', lpad(d::text, 2, '0'))::timestamptz))
$$;
\set create 'SELECT okno_test.err(format(''SELECT okno_create_booking(%s, %L, %L)'', :actor, :''key'', okno_test.m(:room, :day))) AS create, okno_test.left_behind(:''key'', :day)'

--
-- 1. A DO ALSO rule on outbox fires, as for a plain INSERT.
--
CREATE TABLE okno_test.audit (event_id uuid, kind text);
\c
SELECT okno_create_booking(:actor, 'rule-warm-0', okno_test.m(:room, 1)) ->> 'status' AS warm;
CREATE RULE audit_events AS ON INSERT TO outbox
    DO ALSO INSERT INTO okno_test.audit VALUES (NEW.id, NEW.kind);
-- a plain INSERT fires it
INSERT INTO outbox (id, kind, payload) VALUES ('00000000-0000-7000-8000-000000000001', 'test', '{}');
SELECT kind FROM okno_test.audit;
DELETE FROM outbox WHERE kind = 'test';
DELETE FROM okno_test.audit;
-- warm caches
\set key rule-warm-1
\set day 2
:create;
SELECT kind FROM okno_test.audit;
-- a new session
\c
\set key rule-new-1
\set day 3
:create;
SELECT kind, count(*) FROM okno_test.audit GROUP BY 1;
DROP RULE audit_events ON outbox;

--
-- 2. A DO INSTEAD NOTHING rule on bookings: a plain INSERT stores nothing;
-- a create fails before it writes anything.
--
\c
SELECT okno_create_booking(:actor, 'instead-warm-0', okno_test.m(:room, 4)) ->> 'status' AS warm;
CREATE RULE no_bookings AS ON INSERT TO bookings DO INSTEAD NOTHING;
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (:room, :actor, '2033-03-05T10:00:00Z', '2033-03-05T11:00:00Z');
\set key instead-warm-1
\set day 5
:create;
\c
\set key instead-new-1
:create;
-- an INSTEAD rule on outbox or idempotency, and an ALSO rule next to it
CREATE RULE no_events AS ON INSERT TO outbox DO INSTEAD NOTHING;
DROP RULE no_bookings ON bookings;
:create;
DROP RULE no_events ON outbox;
CREATE RULE no_keys AS ON INSERT TO idempotency DO INSTEAD NOTHING;
:create;
DROP RULE no_keys ON idempotency;
-- a disabled one is no rule
CREATE RULE no_bookings AS ON INSERT TO bookings DO INSTEAD NOTHING;
ALTER TABLE bookings DISABLE RULE no_bookings;
:create;
DROP RULE no_bookings ON bookings;

--
-- 3. A column of a domain with NOT NULL and no default: a plain INSERT
-- fails with 23502, and so does a create (it used to store NULL).
--
CREATE DOMAIN okno_test.nn AS text NOT NULL;
\c
SELECT okno_create_booking(:actor, 'domain-warm-0', okno_test.m(:room, 6)) ->> 'status' AS warm;
ALTER TABLE bookings ADD COLUMN tag okno_test.nn DEFAULT 'x';
ALTER TABLE bookings ALTER tag DROP DEFAULT;
SELECT okno_test.err($$INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2033-03-07T10:00:00Z', '2033-03-07T11:00:00Z')$$) AS plain_insert;
\set key domain-warm-1
\set day 7
:create;
-- raised by the direct path itself, not by a statement (no CONTEXT line)
SELECT okno_create_booking(:actor, 'domain-warm-2', okno_test.m(:room, 7));
\c
\set key domain-new-1
:create;
-- with a default again, the domain's value is stored; a CHECK added to the
-- domain later applies at once, also in a session whose caches are warm
ALTER TABLE bookings ALTER tag SET DEFAULT 'ab';
\set key domain-new-2
:create;
SELECT tag FROM bookings WHERE starts_at = '2033-03-07T10:00:00Z';
ALTER DOMAIN okno_test.nn ADD CONSTRAINT not_ab CHECK (VALUE <> 'ab') NOT VALID;
SELECT okno_test.err($$INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2033-03-08T10:00:00Z', '2033-03-08T11:00:00Z')$$) AS plain_insert;
\set key domain-new-3
\set day 8
:create;
\c
:create;
ALTER TABLE bookings DROP COLUMN tag;
DROP DOMAIN okno_test.nn;
-- a domain on outbox with a CHECK its default fails
CREATE DOMAIN okno_test.small AS integer CHECK (VALUE < 5);
ALTER TABLE outbox ADD COLUMN priority okno_test.small;
ALTER TABLE outbox ALTER priority SET DEFAULT 9;
SELECT okno_test.err($$INSERT INTO outbox (id, kind, payload)
    VALUES ('00000000-0000-7000-8000-000000000002', 'test', '{}')$$) AS plain_insert;
\set key domain-new-4
\set day 9
:create;
ALTER TABLE outbox DROP COLUMN priority;
DROP DOMAIN okno_test.small;

--
-- 4. A BEFORE ROW trigger on bookings that returns NULL: a plain INSERT
-- stores nothing; a create fails with a clear error (it used to report
-- 40001 forever, even under READ COMMITTED).
--
CREATE FUNCTION okno_test.skip_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RETURN NULL;
END $$;
\c
SELECT okno_create_booking(:actor, 'skip-warm-0', okno_test.m(:room, 10)) ->> 'status' AS warm;
CREATE TRIGGER skip_row BEFORE INSERT ON bookings FOR EACH ROW EXECUTE FUNCTION okno_test.skip_row();
SELECT okno_test.err($$INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2033-03-11T10:00:00Z', '2033-03-11T11:00:00Z')$$) AS plain_insert,
    (SELECT count(*) FROM bookings WHERE starts_at = '2033-03-11T10:00:00Z') AS stored;
\set key skip-warm-1
\set day 11
:create;
\c
\set key skip-new-1
:create;
BEGIN ISOLATION LEVEL READ COMMITTED;
:create;
COMMIT;
DROP TRIGGER skip_row ON bookings;

--
-- 5. The same trigger on outbox: the booking is not stored without its
-- event (it used to commit without one).
--
\c
SELECT okno_create_booking(:actor, 'skip-warm-2', okno_test.m(:room, 12)) ->> 'status' AS warm;
CREATE TRIGGER skip_row BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION okno_test.skip_row();
SELECT okno_test.err($$INSERT INTO outbox (id, kind, payload)
    VALUES ('00000000-0000-7000-8000-000000000003', 'test', '{}')$$) AS plain_insert,
    (SELECT count(*) FROM outbox WHERE id = '00000000-0000-7000-8000-000000000003') AS stored;
\set key skip-warm-3
\set day 13
:create;
\c
\set key skip-new-3
:create;
-- and cancelling a booking does not cancel it without its event
SELECT okno_test.err(format('SELECT okno_cancel_booking(%s, %s)', :actor,
    (SELECT id FROM bookings WHERE starts_at = '2033-03-12T10:00:00Z'))) AS cancel,
    (SELECT status FROM bookings WHERE starts_at = '2033-03-12T10:00:00Z') AS status;
DROP TRIGGER skip_row ON outbox;
-- on idempotency
CREATE TRIGGER skip_row BEFORE INSERT ON idempotency FOR EACH ROW EXECUTE FUNCTION okno_test.skip_row();
:create;
DROP TRIGGER skip_row ON idempotency;
DROP FUNCTION okno_test.skip_row();

-- without any of that, the direct path again, in a warm session
\set key after-all
\set day 14
:create;
SELECT * FROM okno_verify();
DELETE FROM outbox WHERE payload ->> 'booking_id' IN
    (SELECT id::text FROM bookings WHERE starts_at >= '2033-03-01' AND starts_at < '2033-04-01');
DELETE FROM idempotency WHERE response_body ->> 'starts_at' LIKE '2033-03-%';
DELETE FROM bookings WHERE starts_at >= '2033-03-01' AND starts_at < '2033-04-01';
DROP TABLE okno_test.audit;
DROP FUNCTION okno_test.left_behind(text, integer);
DROP FUNCTION okno_test.m(integer, integer);
