--
-- drain_read: a drain's events are delivered only if its result is read.
-- Run as a cursor (DECLARE, or PL/pgSQL's) that is closed, or dropped at
-- commit, before its last row was fetched, a drain rolls its transaction
-- back: the events of the rows never fetched are not lost.  (The extended
-- protocol's row limit: test/shell/drain_portal.sh.)
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
CREATE DATABASE regress_okno_drain_read;
\c regress_okno_drain_read
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
RESET client_min_messages;
SELECT count(*) AS tables_created FROM okno_create_tables();
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT count(okno_create_booking(1, 'k' || i, jsonb_build_object('resource_id', 1,
           'starts_at', timestamptz '2034-01-01T10:00:00Z' + i * interval '1 hour',
           'ends_at', timestamptz '2034-01-01T11:00:00Z' + i * interval '1 hour')))
  FROM generate_series(1, 40) AS i;
\set due 'SELECT due_now FROM okno_outbox_status'

-- the issue's case: 10 events taken, 2 fetched, commit
BEGIN;
DECLARE c CURSOR FOR SELECT event_id IS NOT NULL AS event FROM okno_drain(10);
FETCH 2 FROM c;
COMMIT;
:due;
-- closing the cursor early, in a transaction that goes on
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM okno_drain(10);
MOVE 9 IN c;
CLOSE c;
ROLLBACK;
:due;
-- a cursor kept over the commit is no different
BEGIN;
DECLARE c CURSOR WITH HOLD FOR SELECT * FROM okno_drain(10);
MOVE 1 IN c;
COMMIT;
:due;
-- a cursor over a filtered drain, read in part
BEGIN;
DECLARE c CURSOR FOR SELECT payload FROM okno_drain(5) WHERE kind = 'booking_created';
MOVE 5 IN c;
COMMIT;
:due;

-- read to the end: delivered
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM okno_drain(2);
MOVE ALL IN c;
COMMIT;
:due;
-- as many rows fetched as the drain returned, with the drain alone in the
-- query: delivered (the portal cannot know there is no next row, the drain
-- can)
BEGIN;
DECLARE c CURSOR FOR SELECT event_id, kind FROM okno_drain(3);
MOVE 3 IN c;
COMMIT;
:due;
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM okno_drain_once();
MOVE 1 IN c;
CLOSE c;
COMMIT;
:due;
-- the filtered drain read until no row comes back: delivered
BEGIN;
DECLARE c CURSOR FOR SELECT payload FROM okno_drain(2) WHERE kind = 'booking_created';
MOVE 2 IN c;
MOVE 1 IN c;
COMMIT;
:due;
-- WITH HOLD, read to the end before the commit, and again after it
BEGIN;
DECLARE c CURSOR WITH HOLD FOR SELECT (payload ->> 'booking_id')::int AS booking FROM okno_drain(2);
MOVE ALL IN c;
COMMIT;
MOVE ABSOLUTE 0 IN c;
FETCH ALL FROM c;
CLOSE c;
:due;

-- PL/pgSQL: a FOR loop reads its query through a cursor, 10 rows ahead
-- at first, then 50; a loop left before its cursor was read to the end
-- rolls back, one whose cursor had read all (here 3 of 3) does not
CREATE FUNCTION deliver(n integer, stop_after integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    ev record;
    seen integer := 0;
BEGIN
    FOR ev IN SELECT * FROM okno_drain(n) LOOP
        seen := seen + 1;
        EXIT WHEN seen = stop_after;
    END LOOP;
    RETURN seen;
END $$;
SELECT deliver(8, 1);
:due;
SELECT deliver(20, 1);
:due;
SELECT deliver(3, 0);
:due;
-- a drain in a function's own statement is that statement's business:
-- RETURN QUERY passes every row on
CREATE FUNCTION pass_on(n integer) RETURNS SETOF uuid
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT event_id FROM okno_drain(n);
END $$;
SELECT count(*) AS passed_on FROM pass_on(2);
:due;
-- as is a LIMIT (or a WHERE) on the drain's result in the query itself:
-- the events of the rows it drops are delivered all the same
SELECT count(*) AS limited FROM (SELECT * FROM okno_drain(2) LIMIT 1) AS d;
:due;
-- a plain query reads everything: delivered
SELECT count(*) AS plain FROM okno_drain(100);
:due;
SELECT * FROM okno_verify();

\c :test_db :superuser_name
DROP DATABASE regress_okno_drain_read;
