--
-- binding: okno finds its five tables at first use and after any change
-- to them, checks that each can serve, and otherwise raises one error
-- (tables_unfit, OKB10) that names every difference and the statement that
-- mends it.  The owner may change the tables at any time; okno goes on in
-- the same session.  Each change is made inside a transaction that is
-- rolled back.  (Sessions already open when another one changes the
-- tables: the isolation spec binding_sessions.)
--
INSERT INTO actors (name) VALUES ('binding actor') RETURNING id AS a \gset
INSERT INTO resources (name) VALUES ('binding room') RETURNING id AS r \gset
-- book(key, day): okno_create_booking for the binding actor and room on
-- that day of January 2033, "ok" or the error
CREATE FUNCTION pg_temp.book(k text, day int) RETURNS text LANGUAGE sql AS $$
    SELECT okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)',
        (SELECT id FROM actors WHERE name = 'binding actor'), k,
        okno_test.payload((SELECT id FROM resources WHERE name = 'binding room'),
                          format('2033-01-%sT10:00:00Z', lpad(day::text, 2, '0')),
                          format('2033-01-%sT11:00:00Z', lpad(day::text, 2, '0')))))
$$;
-- the error in full, as a client sees it
CREATE FUNCTION pg_temp.error_of(q text, OUT state text, OUT message text, OUT detail text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    state := 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
        detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
END
$$;
SELECT pg_temp.book('bind-1', 1);

-- the owner adds to the tables what is its own: okno goes on in this
-- session, and the new columns get their defaults as in a plain INSERT
BEGIN;
ALTER TABLE bookings ADD COLUMN note text DEFAULT 'from the application';
ALTER TABLE bookings ADD COLUMN tag text NOT NULL DEFAULT 'web';
ALTER TABLE bookings ADD COLUMN noted_at timestamptz DEFAULT clock_timestamp();
ALTER TABLE idempotency ADD COLUMN client text;
ALTER TABLE outbox ADD COLUMN trace_id uuid;
CREATE INDEX bookings_note ON bookings (note);
ALTER TABLE bookings ADD CONSTRAINT bookings_tag_check CHECK (tag <> '');
ALTER TABLE actors ADD COLUMN email text;
SELECT pg_temp.book('bind-2', 2);
SELECT note, tag, noted_at IS NOT NULL AS noted FROM bookings
 WHERE id = (SELECT (response_body ->> 'id')::bigint FROM idempotency WHERE request_key = 'bind-2');
SELECT client IS NULL AS client_null FROM idempotency WHERE request_key = 'bind-2';
SELECT pg_temp.book('bind-2', 2) AS replayed;
SELECT count(*) AS drained FROM okno_drain(100);
-- a column of its own that a plain INSERT of okno's columns could not
-- fill fails the create as that INSERT would, and nothing is written
ALTER TABLE outbox ADD COLUMN region text NOT NULL DEFAULT 'eu';
ALTER TABLE outbox ALTER COLUMN region DROP DEFAULT;
SELECT split_part(pg_temp.book('bind-3', 3), ' | ', 1) AS error;
SELECT count(*) AS keys FROM idempotency WHERE request_key = 'bind-3';
SELECT count(*) AS bookings FROM bookings WHERE starts_at = '2033-01-03T10:00:00Z';
ROLLBACK;

-- okno's names for keys and constraints are not needed: the primary keys
-- and the foreign keys whose errors okno translates are found by their
-- columns, whatever their names
BEGIN;
ALTER INDEX idempotency_pkey RENAME TO idempotency_course_key;
ALTER INDEX actors_pkey RENAME TO actors_course_key;
ALTER INDEX resources_pkey RENAME TO resources_course_key;
ALTER TABLE bookings RENAME CONSTRAINT bookings_actor_id_fkey TO bookings_actor_fk;
SELECT pg_temp.book('bind-3', 3);
SELECT pg_temp.book('bind-3', 3) AS replayed;
SELECT split_part(pg_temp.book('bind-4', 3), ' | ', 1) AS error;
SELECT okno_test.err(format('SELECT okno_create_booking(999999, %L, %L)', 'bind-5',
        okno_test.payload(1, '2033-01-05T10:00:00Z', '2033-01-05T11:00:00Z')));
ROLLBACK;

-- a column okno needs dropped, another retyped, a key and the exclusion
-- constraint gone: one error names every difference and its fix, and
-- every okno function that reads the tables raises it
BEGIN;
ALTER TABLE outbox DROP COLUMN parked_at;
ALTER TABLE outbox ALTER COLUMN attempts TYPE bigint;
ALTER TABLE outbox ALTER COLUMN order_key TYPE varchar(255);
ALTER TABLE idempotency ALTER COLUMN request_key TYPE varchar(40);
ALTER TABLE actors DROP CONSTRAINT actors_pkey CASCADE;
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap;
SELECT * FROM pg_temp.error_of($$SELECT okno_create_booking(1, 'bind-6', okno_test.payload(1, '2033-01-06T10:00:00Z', '2033-01-06T11:00:00Z'))$$);
SELECT f, (pg_temp.error_of(q)).state
  FROM (VALUES ('create_booking_result', $$SELECT * FROM okno_create_booking_result(1, 'bind-6', okno_test.payload(1, '2033-01-06T10:00:00Z', '2033-01-06T11:00:00Z'))$$),
               ('drain', 'SELECT * FROM okno_drain(1)'),
               ('drain_once', 'SELECT * FROM okno_drain_once()'),
               ('drain (subscriber)', $$SELECT * FROM okno_drain(1, 'nobody')$$),
               ('record_failure', $$SELECT okno_record_failure('00000000-0000-7000-8000-000000000000', 'x')$$),
               ('release', $$SELECT okno_release('00000000-0000-7000-8000-000000000000')$$),
               ('requeue', $$SELECT okno_requeue('00000000-0000-7000-8000-000000000000')$$),
               ('requeue_parked', 'SELECT okno_requeue_parked()'),
               ('discard', $$SELECT okno_discard('00000000-0000-7000-8000-000000000000')$$),
               ('emit', $$SELECT okno_emit('x', '{}')$$),
               ('get_booking', 'SELECT okno_get_booking(1, 1)'),
               ('cancel_booking', 'SELECT okno_cancel_booking(1, 1)'),
               ('purge', $$SELECT * FROM okno_purge('1 day', '1 day')$$),
               ('verify', 'SELECT * FROM okno_verify()'),
               ('outbox_status', 'SELECT * FROM okno_outbox_status'),
               ('subscribers', 'SELECT * FROM okno_subscribers'),
               ('subscribe', $$SELECT okno_subscribe('binding')$$)) AS c(f, q);
-- what needs no table goes on
SELECT okno_fingerprint(okno_test.payload(1, '2033-01-06T10:00:00Z', '2033-01-06T11:00:00Z')) IS NOT NULL AS fingerprint;
ROLLBACK;
-- mended (here: rolled back), okno goes on in the same session
SELECT pg_temp.book('bind-7', 7);

-- bookings' primary key is (id): (resource_id, id), the key of bookings
-- distributed by resource_id on Citus (test/citus), serves only there
BEGIN;
ALTER TABLE bookings DROP CONSTRAINT bookings_pkey CASCADE;
ALTER TABLE bookings ADD PRIMARY KEY (resource_id, id);
SELECT detail FROM pg_temp.error_of('SELECT * FROM okno_drain(1)');
ROLLBACK;

-- the exclusion constraint must be the course's: another predicate, or
-- deferrable, does not serve
BEGIN;
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap;
ALTER TABLE bookings ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist
    (resource_id WITH =, tstzrange(starts_at, ends_at) WITH &&);
SELECT detail FROM pg_temp.error_of('SELECT * FROM okno_drain(1)');
ROLLBACK;
BEGIN;
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap;
ALTER TABLE bookings ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist
    (resource_id WITH =, tstzrange(starts_at, ends_at) WITH &&) WHERE (status = 'confirmed')
    DEFERRABLE INITIALLY DEFERRED;
SELECT detail FROM pg_temp.error_of('SELECT * FROM okno_drain(1)');
ROLLBACK;
-- the course's own spelling of it serves (tstzrange with its bounds,
-- status as varchar)
BEGIN;
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap;
ALTER TABLE bookings ALTER COLUMN status TYPE varchar(20);
ALTER TABLE bookings ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist
    (resource_id WITH =, tstzrange(starts_at, ends_at, '[)') WITH &&) WHERE (status = 'confirmed');
SELECT pg_temp.book('bind-8', 8);
ROLLBACK;

-- generated columns, short types, inheritance
BEGIN;
ALTER TABLE outbox ALTER COLUMN kind TYPE varchar(10) USING left(kind, 10);
ALTER TABLE outbox DROP COLUMN last_error;
ALTER TABLE outbox ADD COLUMN last_error text GENERATED ALWAYS AS (kind || '!') STORED;
ALTER TABLE idempotency ALTER COLUMN fingerprint TYPE char(70);
CREATE TABLE outbox_archive () INHERITS (outbox);
SELECT detail, hint FROM pg_temp.error_of('SELECT * FROM okno_drain(1)');
ROLLBACK;
-- a view where a table was, a table renamed away
BEGIN;
ALTER TABLE resources RENAME TO rooms;
CREATE VIEW resources AS SELECT * FROM rooms;
SELECT detail FROM pg_temp.error_of('SELECT * FROM okno_drain(1)');
ROLLBACK;
BEGIN;
ALTER TABLE actors RENAME TO people;
SELECT state, detail, hint FROM pg_temp.error_of('SELECT * FROM okno_drain(1)');
ROLLBACK;

-- bound, then changed, then called: the call sees the change
SELECT pg_temp.book('bind-9', 9) AS bound;
BEGIN;
ALTER TABLE outbox DROP COLUMN created_xid;
SELECT state, detail FROM pg_temp.error_of('SELECT * FROM okno_drain(1)');
ROLLBACK;
-- but 0.7.0's order_key: without it the tables are served as before 0.7.0
-- (order per booking), only an event's order key is refused (the
-- update tests go through the whole contract so), and okno_verify says
-- what okno_prepare_tables() would add; an operation's keys need none of
-- the tables
BEGIN;
ALTER TABLE outbox DROP COLUMN order_key;
SELECT state, detail FROM pg_temp.error_of('SELECT * FROM okno_drain(1)');
SELECT state, detail FROM pg_temp.error_of($$SELECT okno_emit('bind', '{}')$$);
SELECT state, detail, hint FROM pg_temp.error_of($$SELECT okno_emit('bind', '{}', 'k')$$);
SELECT * FROM okno_verify();
SELECT okno_idempotent('bind', 's', 'k', '{}', 'okno_test.strip_nulls(jsonb)');
ROLLBACK;
SELECT count(*) >= 0 AS drains_again FROM okno_drain(100);
SELECT * FROM okno_verify();
