--
-- order: each booking's events are handed out in the order they were
-- written.  While an earlier event of a booking is pending, delayed,
-- parked or handed out in the same batch, its later events wait; other
-- bookings' events flow.  Requeueing or discarding a parked event releases
-- the rest in order.  (Concurrent drains: order_*.spec.)  Everything here
-- is rolled back at the end.
--
BEGIN;
-- events other tests left pending are set aside
UPDATE outbox SET delivered_at = clock_timestamp(), parked_at = NULL WHERE delivered_at IS NULL;
-- an actor and a room of this test's own
INSERT INTO actors (name) VALUES ('order actor') RETURNING id AS a \gset
INSERT INTO resources (name) VALUES ('order room') RETURNING id AS r \gset
CREATE TEMP TABLE b AS
  SELECT i, (okno_create_booking(:a, 'ord-' || i,
                okno_test.payload(:r, format('2031-01-%sT10:00:00Z', lpad(i::text, 2, '0')),
                                     format('2031-01-%sT11:00:00Z', lpad(i::text, 2, '0')))) ->> 'id')::bigint AS id
    FROM generate_series(1, 3) AS i;
-- the name of an event: its kind and which of this test's bookings
CREATE FUNCTION pg_temp.ev(kind text, payload jsonb) RETURNS text LANGUAGE sql AS $$
    SELECT kind || ' ' || coalesce((SELECT 'b' || b.i FROM b WHERE b.id = (payload ->> 'booking_id')::bigint), payload::text)
$$;
SELECT okno_cancel_booking(:a, id) ->> 'status' AS cancelled FROM b WHERE i IN (1, 2) ORDER BY i;

-- a cancellation waits for its booking_created, even in the same batch
SELECT pending, due_now, delayed, parked, held_back FROM okno_outbox_status;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);
SELECT pending, due_now, delayed, parked, held_back FROM okno_outbox_status;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);
SELECT pending, held_back FROM okno_outbox_status;

-- a delayed retry holds the booking's later events back; other bookings
-- flow
SELECT okno_create_booking(:a, 'ord-4', okno_test.payload(:r, '2031-01-04T10:00:00Z', '2031-01-04T11:00:00Z')) ->> 'id' AS b4 \gset
SELECT okno_cancel_booking(:a, :b4) IS NOT NULL AS cancelled;
SELECT okno_create_booking(:a, 'ord-7', okno_test.payload(:r, '2031-01-07T10:00:00Z', '2031-01-07T11:00:00Z')) IS NOT NULL AS b7;
SELECT kind, payload ->> 'booking_id' = :'b4' AS of_b4, event_id AS failing FROM okno_drain(1) \gset
SELECT :'kind' AS kind, :'of_b4' AS of_b4;
SELECT attempts, available_at > clock_timestamp() AS delayed FROM okno_record_failure(:'failing', 'recipient down');
SELECT pending, due_now, delayed, parked, held_back FROM okno_outbox_status;
SELECT kind, payload ->> 'booking_id' = :'b4' AS of_b4 FROM okno_drain(10);
SELECT kind, payload ->> 'booking_id' = :'b4' AS of_b4 FROM okno_drain(10);
-- its retry comes due: first the booking_created, then the cancellation
UPDATE outbox SET available_at = clock_timestamp() WHERE id = :'failing';
SELECT kind, payload ->> 'booking_id' = :'b4' AS of_b4, attempts FROM okno_drain(10);
SELECT kind, payload ->> 'booking_id' = :'b4' AS of_b4, attempts FROM okno_drain(10);

-- a parked event parks its booking
SET LOCAL okno.max_attempts = 1;
SELECT okno_create_booking(:a, 'ord-5', okno_test.payload(:r, '2031-01-05T10:00:00Z', '2031-01-05T11:00:00Z')) ->> 'id' AS b5 \gset
SELECT okno_cancel_booking(:a, :b5) IS NOT NULL AS cancelled;
SELECT id AS parked5 FROM outbox WHERE kind = 'booking_created' AND payload ->> 'booking_id' = :'b5' \gset
SELECT count(*) AS drained FROM okno_drain(10);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure(:'parked5', 'gone for good');
SELECT pending, due_now, delayed, parked, held_back FROM okno_outbox_status;
SELECT count(*) AS drained FROM okno_drain(10);
-- requeueing it releases the rest in order
SELECT okno_requeue(:'parked5') AS requeued;
SELECT kind FROM okno_drain(10);
SELECT kind FROM okno_drain(10);

-- discarding a parked event releases the rest too, and keeps its record
SELECT okno_create_booking(:a, 'ord-6', okno_test.payload(:r, '2031-01-06T10:00:00Z', '2031-01-06T11:00:00Z')) ->> 'id' AS b6 \gset
SELECT okno_cancel_booking(:a, :b6) IS NOT NULL AS cancelled;
SELECT id AS parked6 FROM outbox WHERE kind = 'booking_created' AND payload ->> 'booking_id' = :'b6' \gset
SELECT count(*) AS drained FROM okno_drain(10);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure(:'parked6', 'recipient refuses it');
SELECT okno_discard(:'parked6') AS discarded;
SELECT okno_discard(:'parked6') AS discarded_again;
SELECT event_id = :'parked6' AS same_event, subscriber, kind, payload = jsonb_build_object('booking_id', :b6) AS same_payload,
       attempts, last_error, parked_at IS NOT NULL AS was_parked, discarded_at IS NOT NULL AS recorded_when,
       discarded_by = current_user AS recorded_who
  FROM okno_discarded;
SELECT delivered_at IS NOT NULL AS done, parked_at IS NULL AS not_parked FROM outbox WHERE id = :'parked6';
SELECT kind FROM okno_drain(10);
SELECT count(*) AS problems FROM okno_verify();

-- an event without a booking_id is in no order group
INSERT INTO outbox (id, kind, payload) VALUES
  ('01800000-0000-7000-8000-000000000001', 'resource_renamed', '{"resource_id": 2}'),
  ('01800000-0000-7000-8000-000000000002', 'resource_renamed', '{"resource_id": 2}');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);

-- "earlier" is id order, but an id that is not a UUID version 7 (the
-- course's events, adopted with their uuid4 ids) comes first
INSERT INTO outbox (id, kind, payload) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'booking_created', '{"booking_id": -7}'),
  ('01800000-0000-7000-8000-000000000003', 'booking_cancelled', '{"booking_id": -7}');
SELECT event_id, kind FROM okno_drain(10);
SELECT event_id, kind FROM okno_drain(10);

-- the cursor never passes a held-back event: old ids (beyond the drain's
-- 100 ms look-back), a cancellation held back behind its booking_created
-- in the same batch, and later events after it
INSERT INTO outbox (id, kind, payload) VALUES
  ('01800000-0000-7000-8000-000000000011', 'booking_created', '{"booking_id": -11}'),
  ('01800000-0000-7000-8000-000000000012', 'booking_cancelled', '{"booking_id": -11}'),
  ('01800000-0000-7000-8000-000000000013', 'booking_created', '{"booking_id": -13}'),
  ('01800000-0000-7000-8000-000000000014', 'booking_created', '{"booking_id": -14}'),
  ('01800000-0000-7000-8000-000000000015', 'booking_created', '{"booking_id": -15}');
SELECT event_id, kind FROM okno_drain(3);
SELECT event_id, kind FROM okno_drain(3);

-- okno_requeue_parked: every filter optional, all of them must match
SET LOCAL okno.max_attempts = 1;
INSERT INTO outbox (id, kind, payload, attempts, last_error, parked_at) VALUES
  ('01800000-0000-7000-8000-000000000021', 'booking_created', '{"booking_id": -21}', 1, 'HTTP 503', '2031-01-01 00:00+00'),
  ('01800000-0000-7000-8000-000000000022', 'booking_created', '{"booking_id": -22}', 1, 'HTTP 404', '2031-01-02 00:00+00'),
  ('01800000-0000-7000-8000-000000000023', 'booking_cancelled', '{"booking_id": -23}', 1, 'HTTP 503', '2031-01-03 00:00+00'),
  ('01800000-0000-7000-8000-000000000024', 'booking_cancelled', '{"booking_id": -24}', 1, 'timeout', '2031-01-04 00:00+00');
SELECT parked FROM okno_outbox_status;
SELECT okno_requeue_parked(kind => 'booking_created', error_like => 'HTTP 5%') AS created_5xx;
SELECT okno_requeue_parked(error_like => 'HTTP%', parked_before => '2031-01-03 00:00+00') AS http_before_3rd;
SELECT okno_requeue_parked(subscriber => 'default', kind => 'no_such_kind') AS none;
SELECT parked FROM okno_outbox_status;
SELECT attempts, parked_at, available_at FROM outbox WHERE id = '01800000-0000-7000-8000-000000000021';
SELECT okno_requeue_parked() AS the_rest;
SELECT parked FROM okno_outbox_status;
SELECT event_id, kind FROM okno_drain(10);

-- errors
SELECT okno_test.err($$SELECT okno_requeue_parked('nobody')$$);
SELECT okno_test.err($$SELECT okno_requeue_parked('Journal')$$);
SELECT okno_test.err($$SELECT okno_requeue_parked('')$$);
SELECT okno_test.err($$SELECT okno_requeue_parked(repeat('j', 64))$$);
SELECT okno_test.err($$SELECT okno_discard(NULL)$$);
SELECT okno_test.err($$SELECT okno_discard('01800000-0000-7000-8000-000000000021', NULL)$$);
SELECT okno_test.err($$SELECT okno_discard('01800000-0000-7000-8000-000000000021', 'journal')$$);
SELECT okno_test.err($$SELECT okno_discard('01800000-0000-7000-8000-000000000021', 'no space')$$);
-- not parked (delivered, pending, unknown): false
SELECT okno_discard('01800000-0000-7000-8000-000000000021') AS delivered,
       okno_discard('00000000-0000-7000-8000-000000000000') AS unknown;

-- okno_verify checks the record against the outbox
UPDATE outbox SET delivered_at = NULL WHERE id = :'parked6';
UPDATE outbox SET payload = '{"booking_id": 0}' WHERE id = :'parked6';
SELECT problem FROM okno_verify() WHERE problem LIKE 'discard%';
-- a trigger that keeps the record from being stored fails the discard
CREATE FUNCTION pg_temp.no_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TRIGGER no_record BEFORE INSERT ON okno_discarded FOR EACH ROW EXECUTE FUNCTION pg_temp.no_record();
INSERT INTO outbox (id, kind, payload, attempts, last_error, parked_at) VALUES
  ('01800000-0000-7000-8000-000000000031', 'booking_created', '{"booking_id": -31}', 1, 'x', now());
SELECT okno_test.err($$SELECT okno_discard('01800000-0000-7000-8000-000000000031')$$);
SELECT parked_at IS NOT NULL AS still_parked FROM outbox WHERE id = '01800000-0000-7000-8000-000000000031';
-- and so does one that keeps the event from being marked done, in outbox
-- or in a subscriber's okno_delivery
DROP TRIGGER no_record ON okno_discarded;
CREATE TRIGGER no_done BEFORE UPDATE ON outbox FOR EACH ROW EXECUTE FUNCTION pg_temp.no_record();
SELECT okno_test.err($$SELECT okno_discard('01800000-0000-7000-8000-000000000031')$$);
DROP TRIGGER no_done ON outbox;
SELECT okno_subscribe('journal') AS journal;
INSERT INTO okno_delivery (subscriber, event_id, order_key, first, attempts, last_error, parked_at)
VALUES ('journal', '01800000-0000-7000-8000-000000000031', '-31', true, 1, 'x', now());
CREATE TRIGGER no_done BEFORE UPDATE ON okno_delivery FOR EACH ROW EXECUTE FUNCTION pg_temp.no_record();
SELECT okno_test.err($$SELECT okno_discard('01800000-0000-7000-8000-000000000031', 'journal')$$);
SELECT count(*) AS records FROM okno_discarded WHERE event_id = '01800000-0000-7000-8000-000000000031';
ROLLBACK;
