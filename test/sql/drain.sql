--
-- drain: okno_drain_once hands out pending events in id order, in the
-- caller's transaction
--
-- start from a clean outbox: deliver what earlier tests left
SELECT count(*) > 0 AS had_pending FROM outbox WHERE delivered_at IS NULL;
DO $$ BEGIN WHILE EXISTS (SELECT FROM okno_drain_once()) LOOP END LOOP; END $$;
SELECT count(*) AS pending FROM outbox WHERE delivered_at IS NULL;
SELECT * FROM okno_drain_once();

-- three bookings, three events
SELECT okno_create_booking(1, 'd-' || i, okno_test.payload(3, format('2026-12-20T%s:00:00Z', 10 + i), format('2026-12-20T%s:30:00Z', 10 + i))) ->> 'starts_at' AS starts_at
  FROM generate_series(1, 3) AS i;
CREATE TEMP TABLE expected_events AS
  SELECT id, payload FROM outbox WHERE delivered_at IS NULL ORDER BY id;

-- a drain whose transaction rolls back leaves the event pending: it is
-- handed out again (at least once)
BEGIN;
SELECT d.event_id = (SELECT id FROM expected_events ORDER BY id LIMIT 1) AS first_event, d.kind FROM okno_drain_once() d;
SELECT delivered_at IS NOT NULL AS marked_inside FROM outbox WHERE id = (SELECT id FROM expected_events ORDER BY id LIMIT 1);
ROLLBACK;
SELECT delivered_at IS NULL AS pending_again FROM outbox WHERE id = (SELECT id FROM expected_events ORDER BY id LIMIT 1);

-- in id order, each once, then nothing
SELECT d.event_id = (SELECT id FROM expected_events ORDER BY id OFFSET 0 LIMIT 1) AS first,
       d.payload = (SELECT payload FROM expected_events ORDER BY id OFFSET 0 LIMIT 1) AS same_payload
  FROM okno_drain_once() d;
SELECT d.event_id = (SELECT id FROM expected_events ORDER BY id OFFSET 1 LIMIT 1) AS second FROM okno_drain_once() d;
SELECT d.event_id = (SELECT id FROM expected_events ORDER BY id OFFSET 2 LIMIT 1) AS third FROM okno_drain_once() d;
SELECT * FROM okno_drain_once();
SELECT count(*) AS delivered, bool_and(delivered_at >= created_at) AS after_creation
  FROM outbox WHERE id IN (SELECT id FROM expected_events);

-- delivered_at is the clock at delivery, not the transaction start
BEGIN;
SELECT okno_create_booking(1, 'd-4', okno_test.payload(3, '2026-12-20T20:00:00Z', '2026-12-20T21:00:00Z')) ->> 'resource_id' AS created;
SELECT pg_sleep(0.01);
SELECT count(*) AS drained FROM okno_drain_once();
SELECT delivered_at > now() AS clock_timestamp FROM outbox WHERE payload = jsonb_build_object('booking_id', (SELECT max(id) FROM bookings));
COMMIT;

-- the pending index stays partial and serves the drain
SELECT indexdef FROM pg_indexes WHERE indexname = 'outbox_pending';
