--
-- verify: okno_verify() is empty on consistent data and names every kind
-- of inconsistency it checks for
--
SELECT * FROM okno_verify();
-- whatever the session's settings and search_path
SET TimeZone = 'Asia/Kathmandu';
SET DateStyle = 'German, DMY';
SET search_path = '';
SELECT count(*) AS problems FROM public.okno_verify();
RESET ALL;

-- break every invariant once, inside a transaction that is rolled back
-- (overlapping confirmed bookings are not among them: okno serves only a
-- bookings table whose bookings_no_overlap refuses them, below)
BEGIN;
INSERT INTO resources (id, name) VALUES (900, 'verify room');
-- a booking without key and event, and another
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at) VALUES
  (900, 1, '2030-01-01 10:00+00', '2030-01-01 11:00+00'),
  (900, 2, '2030-01-01 11:30+00', '2030-01-01 12:30+00');
-- a key naming no booking, and one whose response disagrees with its booking
INSERT INTO idempotency (actor_id, request_key, fingerprint, response_body) VALUES
  (1, 'verify-ghost', repeat('0', 64), '{"id": 999999}'),
  (1, 'verify-bad-fp', 'NOT-HEX', jsonb_build_object('id', (SELECT max(id) FROM bookings WHERE resource_id = 900))),
  (2, 'verify-other', repeat('a', 64), jsonb_build_object('id', (SELECT min(id) FROM bookings WHERE resource_id = 900), 'actor_id', 2, 'resource_id', 900,
      'starts_at', '2030-01-01T10:00:00.000001Z', 'ends_at', '2030-01-01T11:00:00Z'));
-- events: one for a booking that does not exist, a second booking_created,
-- a failure without an error text, and one both delivered and parked
INSERT INTO outbox (id, kind, payload) VALUES
  ('00000000-0000-7000-8000-000000000001', 'booking_created', '{"booking_id": 999999}'),
  ('00000000-0000-7000-8000-000000000002', 'booking_created', jsonb_build_object('booking_id', (SELECT max(id) FROM bookings WHERE resource_id = 900))),
  ('00000000-0000-7000-8000-000000000003', 'booking_created', jsonb_build_object('booking_id', (SELECT max(id) FROM bookings WHERE resource_id = 900)));
INSERT INTO outbox (id, kind, payload, attempts) VALUES
  ('00000000-0000-7000-8000-000000000004', 'booking_cancelled', jsonb_build_object('booking_id', (SELECT min(id) FROM bookings)), 3);
INSERT INTO outbox (id, kind, payload, delivered_at, parked_at, attempts, last_error) VALUES
  ('00000000-0000-7000-8000-000000000005', 'booking_cancelled', jsonb_build_object('booking_id', (SELECT min(id) FROM bookings)), now(), now(), 10, 'x');
SELECT problem, regexp_replace(detail, '\d{2,}', 'N', 'g') AS detail FROM okno_verify();
ROLLBACK;
SELECT count(*) AS problems_after_rollback FROM okno_verify();
-- without the exclusion constraint okno does not serve the tables, and
-- okno_verify says so rather than look for overlaps
BEGIN;
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap;
SELECT okno_test.err('SELECT * FROM okno_verify()');
ROLLBACK;

-- okno_purge removes keys and delivered events on purpose: okno_verify
-- then does not report the bookings it took them from
BEGIN;
DELETE FROM okno_purge_horizon;
UPDATE idempotency SET created_at = now() - interval '100 days';
UPDATE outbox SET delivered_at = now() - interval '100 days' WHERE delivered_at IS NULL AND parked_at IS NULL;
UPDATE outbox SET delivered_at = now() - interval '100 days' WHERE delivered_at IS NOT NULL;
UPDATE bookings SET created_at = now() - interval '100 days';
SELECT keys_deleted > 0 AS keys_gone, events_deleted > 0 AS events_gone FROM okno_purge('30 days', '30 days');
SELECT keys_purged_before < now() - interval '29 days' AS keys_horizon, events_purged_before < now() - interval '29 days' AS events_horizon
  FROM okno_purge_horizon;
SELECT count(*) AS problems_after_purge FROM okno_verify();
-- a later purge with shorter ages moves the horizon forward, never back
SELECT keys_purged_before AS h FROM okno_purge_horizon \gset
SELECT count(*) FROM okno_purge('60 days', '60 days');
SELECT keys_purged_before = :'h' AS horizon_kept FROM okno_purge_horizon;
-- but a booking newer than the horizon without its key is still a problem
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at) VALUES (1, 1, '2031-01-01 10:00+00', '2031-01-01 11:00+00');
SELECT problem FROM okno_verify();
ROLLBACK;

-- 0.7.0: an application may move a booking (an operation of its own, as a
-- reschedule handler of okno_idempotent); its key still replays the card
-- of the booking as created, and okno_verify does not report it.  A card
-- of another actor is still a problem.
BEGIN;
INSERT INTO resources (id, name) VALUES (901, 'verify room 2');
SELECT okno_create_booking(1, 'verify-moved',
    '{"resource_id": 1, "starts_at": "2032-01-01T10:00:00Z", "ends_at": "2032-01-01T11:00:00Z"}') ->> 'id' AS moved \gset
UPDATE bookings SET resource_id = 901, starts_at = '2032-01-02 10:00+00', ends_at = '2032-01-02 12:00+00'
 WHERE id = :moved;
SELECT count(*) AS problems_after_move FROM okno_verify();
SELECT okno_create_booking(1, 'verify-moved',
    '{"resource_id": 1, "starts_at": "2032-01-01T10:00:00Z", "ends_at": "2032-01-01T11:00:00Z"}') ->> 'starts_at' AS replayed_as_created;
UPDATE idempotency SET response_body = jsonb_set(response_body, '{actor_id}', '2')
 WHERE actor_id = 1 AND request_key = 'verify-moved';
SELECT problem FROM okno_verify();
ROLLBACK;
