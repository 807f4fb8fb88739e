--
-- direct: okno_create_booking reads and writes its tables without SPI
-- statements (store.c, insert.c) unless the statements could do something
-- different.  The rows written directly are the statement's, defaults of
-- any kind are evaluated as the statement would, and each reason to fall
-- back to the statements shows in a result only the statements give: a
-- user trigger that writes, row-level security that hides rows.  (Rules,
-- domains and triggers that keep a row: create_as_insert.)  Everything runs
-- in transactions that are rolled back.
--
SELECT id AS actor FROM actors ORDER BY id LIMIT 1 \gset
SELECT id AS room FROM resources ORDER BY id LIMIT 1 \gset
SELECT max(id) + 1 AS no_actor FROM actors \gset
-- the payload of a one-hour booking of room on day d of January 2031
CREATE FUNCTION okno_test.p(room integer, d integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('resource_id', room,
        'starts_at', format('2031-01-%sT10:00:00Z', lpad(d::text, 2, '0')),
        'ends_at', format('2031-01-%sT11:00:00Z', lpad(d::text, 2, '0')))
$$;

-- the rows, as the statement wrote them
BEGIN;
SELECT okno_create_booking(:actor, 'direct-1',
    okno_test.p(:room, 1)) AS card \gset
SELECT :'card'::jsonb = jsonb_build_object('id', b.id, 'resource_id', b.resource_id,
         'actor_id', b.actor_id, 'starts_at', '2031-01-01T10:00:00Z',
         'ends_at', '2031-01-01T11:00:00Z', 'status', 'confirmed') AS card_ok,
       b.status, b.created_at = now() AS booking_now,
       b.id = (SELECT last_value FROM bookings_id_seq) AS id_from_sequence
  FROM bookings b WHERE b.id = (:'card'::jsonb ->> 'id')::bigint;
SELECT i.response_body = :'card'::jsonb AS stored_card,
       i.response_body::text = :'card' AS same_text,
       i.fingerprint = okno_fingerprint(okno_test.p(:room, 1)) AS fingerprint_ok,
       i.fingerprint_version, i.created_at = now() AS key_now
  FROM idempotency i WHERE i.actor_id = :actor AND i.request_key = 'direct-1';
SELECT o.kind, o.payload = jsonb_build_object('booking_id', (:'card'::jsonb ->> 'id')::bigint) AS payload_ok,
       o.created_at = now() AS event_now, o.attempts, o.delivered_at, o.last_error,
       o.available_at, o.parked_at
  FROM outbox o WHERE o.payload ->> 'booking_id' = :'card'::jsonb ->> 'id';
-- later calls in the same statement see the rows: a replay, then slot_busy
SELECT okno_create_booking(:actor, 'direct-2', p) = okno_create_booking(:actor, 'direct-2', p) AS replayed,
       okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'direct-3', p)) AS busy
  FROM (SELECT (okno_test.p(:room, 2))::jsonb AS p) AS a;
-- actor_missing before resource_missing before slot_busy, nothing used up
SELECT last_value AS seq_before FROM bookings_id_seq \gset
SELECT okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)', :no_actor, 'direct-4',
    okno_test.p(999999, 1)));
SELECT okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'direct-4',
    okno_test.p(999999, 1)));
SELECT last_value = :seq_before AS sequence_unused FROM bookings_id_seq;
-- and after those errors the transaction's prepared state still serves
SELECT okno_create_booking(:actor, 'direct-12', okno_test.p(:room, 10)) ->> 'status' AS status;
SELECT count(*) AS bookings FROM bookings WHERE starts_at >= '2031-01-01' AND starts_at < '2031-02-01';
ROLLBACK;

-- under SERIALIZABLE (and REPEATABLE READ): created, then replayed
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT okno_create_booking(:actor, 'direct-13', okno_test.p(:room, 11)) = okno_create_booking(:actor, 'direct-13', okno_test.p(:room, 11)) AS replayed;
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT okno_create_booking(:actor, 'direct-14', okno_test.p(:room, 12)) = okno_create_booking(:actor, 'direct-14', okno_test.p(:room, 12)) AS replayed;
ROLLBACK;

-- a user trigger on outbox: the statement runs, and so does the trigger
CREATE FUNCTION okno_test.mark_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.last_error := 'seen by trigger';
    RETURN NEW;
END
$$;
BEGIN;
CREATE TRIGGER mark_event BEFORE INSERT ON outbox
    FOR EACH ROW EXECUTE FUNCTION okno_test.mark_event();
SELECT okno_create_booking(:actor, 'direct-5',
    okno_test.p(:room, 3)) ->> 'status' AS status;
SELECT last_error FROM outbox WHERE payload ->> 'booking_id' =
    (SELECT id::text FROM bookings WHERE starts_at = '2031-01-03T10:00:00Z');
DROP TRIGGER mark_event ON outbox;
-- and without it the direct path again
SELECT okno_create_booking(:actor, 'direct-6',
    okno_test.p(:room, 4)) ->> 'status' AS status;
SELECT last_error FROM outbox WHERE payload ->> 'booking_id' =
    (SELECT id::text FROM bookings WHERE starts_at = '2031-01-04T10:00:00Z');
ROLLBACK;
DROP FUNCTION okno_test.mark_event();

-- a default that is not a constant: evaluated as the statement would
BEGIN;
ALTER TABLE outbox ALTER COLUMN last_error SET DEFAULT 'by ' || current_user;
SELECT okno_create_booking(:actor, 'direct-7',
    okno_test.p(:room, 5)) ->> 'status' AS status;
SELECT last_error = 'by ' || current_user AS default_evaluated FROM outbox WHERE payload ->> 'booking_id' =
    (SELECT id::text FROM bookings WHERE starts_at = '2031-01-05T10:00:00Z');
-- and a constant one
ALTER TABLE outbox ALTER COLUMN last_error SET DEFAULT 'constant ' || 'default';
SELECT okno_create_booking(:actor, 'direct-8',
    okno_test.p(:room, 6)) ->> 'status' AS status;
SELECT last_error FROM outbox WHERE payload ->> 'booking_id' =
    (SELECT id::text FROM bookings WHERE starts_at = '2031-01-06T10:00:00Z');
ROLLBACK;

-- an index made between two creates of one transaction (the first
-- prepared the tables' indexes for the rest of it): the second writes it
-- (here: a unique index that only the first event fits)
BEGIN;
SELECT okno_create_booking(:actor, 'direct-ix1',
    okno_test.p(:room, 7)) ->> 'status' AS status;
CREATE UNIQUE INDEX outbox_one_event ON outbox ((kind IS NOT NULL))
    WHERE payload ->> 'booking_id' IS NOT NULL;
SELECT okno_create_booking(:actor, 'direct-ix2',
    okno_test.p(:room, 8)) ->> 'status' AS status;
ROLLBACK;

-- row-level security: a role that sees only some resources and no keys
CREATE ROLE regress_okno_rls NOLOGIN;
BEGIN;
GRANT USAGE ON SCHEMA okno_test TO regress_okno_rls;
GRANT SELECT (id) ON actors, resources TO regress_okno_rls;
GRANT SELECT (id, resource_id, actor_id, starts_at, ends_at, status),
      INSERT (resource_id, actor_id, starts_at, ends_at) ON bookings TO regress_okno_rls;
GRANT SELECT (actor_id, request_key, fingerprint, fingerprint_version, response_body),
      INSERT (actor_id, request_key, fingerprint, fingerprint_version, response_body)
   ON idempotency TO regress_okno_rls;
GRANT INSERT (id, kind, payload) ON outbox TO regress_okno_rls;
INSERT INTO resources (name) VALUES ('hidden room') RETURNING id AS hidden \gset
ALTER TABLE resources ENABLE ROW LEVEL SECURITY;
CREATE POLICY visible ON resources USING (name <> 'hidden room');
SET LOCAL ROLE regress_okno_rls;
-- the resource the policy hides does not exist for this role
SELECT replace(okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'direct-9',
    okno_test.p(:hidden, 7))), :'hidden', 'HIDDEN') AS err;
SELECT okno_create_booking(:actor, 'direct-10',
    okno_test.p(:room, 7)) ->> 'status' AS status;
RESET ROLE;
ALTER TABLE idempotency ENABLE ROW LEVEL SECURITY;
CREATE POLICY see_none ON idempotency FOR SELECT USING (false);
CREATE POLICY insert_any ON idempotency FOR INSERT WITH CHECK (true);
SET LOCAL ROLE regress_okno_rls;
-- the lookup does not see the stored key, and the statement's RETURNING
-- may not see the new one
SELECT okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'direct-10',
    okno_test.p(:room, 9)));
RESET ROLE;
-- the superuser bypasses the policies: a replay
SELECT okno_create_booking(:actor, 'direct-10',
    okno_test.p(:room, 7)) ->> 'status' AS status;
ROLLBACK;
DROP ROLE regress_okno_rls;

-- privileges are the statement's: without INSERT on outbox nothing happens
CREATE ROLE regress_okno_noevent NOLOGIN;
BEGIN;
GRANT USAGE ON SCHEMA okno_test TO regress_okno_noevent;
GRANT SELECT (id) ON actors, resources TO regress_okno_noevent;
GRANT SELECT (id, resource_id, actor_id, starts_at, ends_at, status),
      INSERT (resource_id, actor_id, starts_at, ends_at) ON bookings TO regress_okno_noevent;
GRANT SELECT (actor_id, request_key, fingerprint, fingerprint_version, response_body),
      INSERT (actor_id, request_key, fingerprint, fingerprint_version, response_body)
   ON idempotency TO regress_okno_noevent;
SELECT last_value AS seq_before FROM bookings_id_seq \gset
SET LOCAL ROLE regress_okno_noevent;
SELECT okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)', :no_actor, 'direct-11',
    okno_test.p(:room, 8)));
RESET ROLE;
SELECT last_value = :seq_before AS sequence_unused FROM bookings_id_seq;
ROLLBACK;
DROP ROLE regress_okno_noevent;

-- what the direct paths derived is derived again after a table changes in
-- the session: the key's columns recreated at new attribute numbers, its
-- primary key recreated as a new index; then replayed and created directly
BEGIN;
SELECT okno_create_booking(:actor, 'direct-14', okno_test.p(:room, 12)) AS card \gset
ALTER TABLE idempotency RENAME COLUMN response_body TO old_body;
ALTER TABLE idempotency RENAME COLUMN fingerprint_version TO old_version;
ALTER TABLE idempotency ADD COLUMN response_body jsonb, ADD COLUMN fingerprint_version smallint;
-- (the old columns' values in the rows left behind them would be read if
-- the old attribute numbers were)
UPDATE idempotency SET response_body = old_body, fingerprint_version = old_version,
    old_body = '"stale"', old_version = 9;
ALTER TABLE idempotency DROP COLUMN old_body, DROP COLUMN old_version;
ALTER TABLE idempotency DROP CONSTRAINT idempotency_pkey,
    ADD CONSTRAINT idempotency_pkey PRIMARY KEY (actor_id, request_key);
SELECT okno_create_booking(:actor, 'direct-14', okno_test.p(:room, 12)) = :'card'::jsonb AS replayed;
SELECT okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'direct-14',
    okno_test.p(:room, 13)));
SELECT okno_create_booking(:actor, 'direct-15', okno_test.p(:room, 13)) ->> 'status' AS status;
SELECT okno_test.err(format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'direct-16',
    okno_test.p(999999, 14)));
ROLLBACK;

-- the tables are as before
SELECT count(*) AS keys FROM idempotency WHERE request_key LIKE 'direct-%';
DROP FUNCTION okno_test.p(integer, integer);
