--
-- scenario: the course's expected results, step by step
--
-- first key november-room-1 -> the card with id N
SELECT okno_create_booking(1, 'november-room-1',
  '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') AS card;

-- the same call -> the same card, and nothing new
SELECT okno_create_booking(1, 'november-room-1',
  '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') AS card;
SELECT (SELECT count(*) FROM bookings) AS bookings,
       (SELECT count(*) FROM idempotency) AS keys,
       (SELECT count(*) FROM outbox) AS events;

-- other data under the same key -> key_reused (409)
SELECT okno_create_booking(1, 'november-room-1',
  '{"resource_id":2,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');
\echo :LAST_ERROR_SQLSTATE

-- a new key for the same slot -> slot_busy (409)
SELECT okno_create_booking(1, 'november-room-2',
  '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');
\echo :LAST_ERROR_SQLSTATE

-- exactly one outbox row
SELECT kind, payload, delivered_at IS NULL AS pending FROM outbox;

-- drain hands it out, then nothing
SELECT kind, payload, event_id = (SELECT id FROM outbox) AS is_the_event FROM okno_drain_once();
SELECT * FROM okno_drain_once();
SELECT kind, delivered_at IS NOT NULL AS delivered FROM outbox;
