--
-- emit: okno_emit(kind, payload, order_key) writes an outbox event from any
-- function (okno 0.7.0).  Events of one order key are handed out in the
-- order they were written, a booking's events having its id as their key;
-- NULL is no order.  Drains, subscribers, retries, parking and the
-- dead-letter tools treat emitted events as they treat a booking's.
--
-- start from an empty outbox (what earlier tests left is theirs)
UPDATE outbox SET delivered_at = clock_timestamp(), parked_at = NULL WHERE delivered_at IS NULL;
SELECT okno_subscribe('emit-journal') AS journal;

-- the rules
SELECT okno_test.err($$SELECT okno_emit(NULL, '{}')$$);
SELECT okno_test.err($$SELECT okno_emit('', '{}')$$);
SELECT okno_test.err($$SELECT okno_emit('Booking', '{}')$$);
SELECT okno_test.err($$SELECT okno_emit('1st', '{}')$$);
SELECT okno_test.err($$SELECT okno_emit('a b', '{}')$$);
SELECT okno_test.err(format($$SELECT okno_emit(%L, '{}')$$, 'a' || repeat('b', 40)));
SELECT okno_test.err($$SELECT okno_emit('booking_created', '{"booking_id": 1}')$$);
SELECT okno_test.err($$SELECT okno_emit('booking_cancelled', '{"booking_id": 1}')$$);
SELECT okno_test.err($$SELECT okno_emit('ok', NULL)$$);
SELECT okno_test.err($$SELECT okno_emit('ok', '{}', '')$$);
SELECT okno_test.err(format($$SELECT okno_emit('ok', '{}', %L)$$, repeat('k', 256)));
BEGIN READ ONLY;
SELECT okno_test.err($$SELECT okno_emit('ok', '{}')$$);
ROLLBACK;
-- (none of them wrote anything)
SELECT count(*) AS pending FROM outbox WHERE delivered_at IS NULL;

-- an emitted event is a row of outbox like a booking's: a UUID v7 id, its
-- kind, its payload as given, its order key
SELECT okno_emit('a.b-c_9', '[1, "two", null]') IS NOT NULL AS emitted;
SELECT okno_emit('x' || repeat('y', 39), '"a string"', repeat('k', 255)) IS NOT NULL AS emitted;
SELECT kind, payload, order_key IS NULL AS unordered, length(order_key) AS key_length,
       get_byte(uuid_send(id), 6) / 16 AS uuid_version
  FROM outbox WHERE delivered_at IS NULL ORDER BY id;
SELECT count(*) AS drained FROM okno_drain(10);

-- order: a booking's events and the events emitted with its id as their
-- key go in the order written; an unordered event goes at once
SELECT okno_create_booking(1, 'emit-1', okno_test.payload(2, '2032-01-01T10:00:00Z', '2032-01-01T11:00:00Z')) ->> 'id' AS b1 \gset
SELECT okno_emit('booking_rescheduled', jsonb_build_object('booking_id', :b1, 'to', '12:00'), :'b1') IS NOT NULL AS rescheduled;
SELECT okno_emit('audit', jsonb_build_object('booking_id', :b1)) IS NOT NULL AS unordered;
SELECT okno_emit('payment_captured', '{"amount": 5}', 'payment:7') IS NOT NULL AS payment_1;
SELECT okno_emit('payment_refunded', '{"amount": 5}', 'payment:7') IS NOT NULL AS payment_2;
SELECT okno_cancel_booking(1, :b1) ->> 'status' AS cancelled;
SELECT pending, due_now, held_back FROM okno_outbox_status;
-- a batch holds at most one event of an order key
SELECT kind FROM okno_drain(10);
SELECT kind FROM okno_drain(10);
SELECT kind FROM okno_drain(10);
SELECT count(*) AS nothing_left FROM okno_drain(10);

-- a failed event holds its key's later events back, and the retries,
-- parking and dead-letter tools treat it as any event
SET okno.max_attempts = 1;
BEGIN;
SELECT okno_emit('payment_captured', '{"amount": 6}', 'payment:8') AS p1 \gset
SELECT okno_emit('payment_refunded', '{"amount": 6}', 'payment:8') AS p2 \gset
COMMIT;
SELECT kind FROM okno_drain(10);
SELECT kind, attempts, parked_at IS NOT NULL AS parked FROM okno_record_failure(:'p1', 'gateway down');
RESET okno.max_attempts;
SELECT pending, parked, held_back FROM okno_outbox_status;
SELECT count(*) AS held_back_by_the_parked FROM okno_drain(10);
SELECT okno_requeue_parked(kind => 'payment_captured') AS requeued;
SELECT kind FROM okno_drain(10);
SELECT kind FROM okno_drain(10);

-- a subscriber: its own order of the same keys
SELECT kind, payload ->> 'amount' AS amount FROM okno_drain(100, 'emit-journal') ORDER BY event_id;
SELECT kind FROM okno_drain(100, 'emit-journal') ORDER BY event_id;
SELECT kind FROM okno_drain(100, 'emit-journal') ORDER BY event_id;
SELECT count(*) AS nothing_left FROM okno_drain(100, 'emit-journal');
-- its failure parks its event and holds the key back for it alone
SET okno.max_attempts = 1;
SELECT okno_emit('note', '{"n": 1}', 'note:1') AS n1 \gset
SELECT okno_emit('note', '{"n": 2}', 'note:1') AS n2 \gset
SELECT count(*) AS journal_drained FROM okno_drain(100, 'emit-journal');
SELECT attempts, parked_at IS NOT NULL AS parked, order_key FROM okno_record_failure(:'n1', 'journal down', 'emit-journal');
RESET okno.max_attempts;
SELECT count(*) AS journal_held_back FROM okno_drain(100, 'emit-journal');
SELECT subscriber, parked, held_back FROM okno_subscribers WHERE subscriber = 'emit-journal';
-- (the default subscriber has both, in order)
SELECT payload FROM okno_drain(100);
SELECT payload FROM okno_drain(100);
SELECT okno_discard(:'n1', 'emit-journal') AS discarded;
SELECT payload FROM okno_drain(100, 'emit-journal');
SELECT subscriber, kind, payload FROM okno_discarded WHERE event_id = :'n1';

-- an emit in a transaction that rolls back leaves nothing
BEGIN;
SELECT okno_emit('rolled_back', '{}') IS NOT NULL AS emitted;
ROLLBACK;
SELECT count(*) AS rolled_back FROM outbox WHERE kind = 'rolled_back';

-- a BEFORE trigger that keeps the row from being stored is an error, and
-- an INSTEAD rule is refused
CREATE FUNCTION pg_temp.drop_it() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
BEGIN;
CREATE TRIGGER drop_it BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION pg_temp.drop_it();
SELECT okno_test.err($$SELECT okno_emit('kept', '{}')$$);
ROLLBACK;
BEGIN;
CREATE RULE nowhere AS ON INSERT TO outbox DO INSTEAD NOTHING;
SELECT okno_test.err($$SELECT okno_emit('kept', '{}')$$);
ROLLBACK;

-- nothing depends on the caller's search_path
SET search_path = pg_catalog;
SELECT public.okno_emit('searched', '{}', 'k') IS NOT NULL AS emitted;
RESET search_path;
SELECT d.kind, o.order_key FROM okno_drain(10) AS d JOIN outbox AS o ON o.id = d.event_id;

SELECT okno_unsubscribe('emit-journal') AS unsubscribed;
SELECT * FROM okno_verify();

-- an order key's outbox bucket, where Citus distributes outbox by bucket
-- (test/unit/test_bucket.c pins the same values): 0 to 1023, the same for
-- the same bytes, NULL for none (on one server outbox has no bucket)
SELECT okno_outbox_bucket('7') AS b7, okno_outbox_bucket('') AS b_empty,
       okno_outbox_bucket('foobar') AS b_foobar, okno_outbox_bucket(NULL) AS b_null;
SELECT min(okno_outbox_bucket(g::text)) AS lowest, max(okno_outbox_bucket(g::text)) AS highest,
       count(DISTINCT okno_outbox_bucket(g::text)) AS buckets_used
  FROM generate_series(1, 20000) AS g;
