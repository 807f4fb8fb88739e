--
-- create: okno_create_booking's steps 4 to 9 in one session
--
CREATE TEMP TABLE before AS
  SELECT (SELECT count(*) FROM bookings) AS b, (SELECT count(*) FROM idempotency) AS k,
         (SELECT count(*) FROM outbox) AS e;
CREATE FUNCTION pg_temp.added() RETURNS TABLE (bookings bigint, keys bigint, events bigint)
LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM bookings) - b, (SELECT count(*) FROM idempotency) - k,
         (SELECT count(*) FROM outbox) - e FROM before
$$;

-- a new booking: the card, its key row, its event
SELECT okno_create_booking(2, 'c-1', okno_test.payload(2, '2026-12-05T09:00:00+01:00', '2026-12-05T10:30:00+01:00')) AS card \gset
SELECT :'card'::jsonb - 'id' AS card_without_id,
       (:'card'::jsonb ->> 'id')::bigint = (SELECT max(id) FROM bookings) AS id_is_the_booking;
SELECT jsonb_object_keys(:'card'::jsonb) AS key ORDER BY 1;
SELECT b.resource_id, b.actor_id, b.starts_at = '2026-12-05 08:00:00+00' AS starts_ok,
       b.ends_at = '2026-12-05 09:30:00+00' AS ends_ok, b.status
  FROM bookings b WHERE b.id = (:'card'::jsonb ->> 'id')::bigint;
SELECT i.response_body = :'card'::jsonb AS stored_as_returned,
       i.fingerprint = okno_fingerprint(okno_test.payload(2, '2026-12-05T09:00:00+01:00', '2026-12-05T10:30:00+01:00')) AS fingerprint_ok,
       i.fingerprint_version
  FROM idempotency i WHERE i.actor_id = 2 AND i.request_key = 'c-1';
SELECT o.kind, o.payload = jsonb_build_object('booking_id', (:'card'::jsonb ->> 'id')::bigint) AS payload_ok,
       o.delivered_at IS NULL AS pending
  FROM outbox o WHERE o.payload ->> 'booking_id' = :'card'::jsonb ->> 'id';
SELECT * FROM pg_temp.added();

-- a replay returns the stored card unchanged and creates nothing, however
-- the same request is written (other offsets, key order, number form)
SELECT okno_create_booking(2, 'c-1', p) = :'card'::jsonb AS same_card
  FROM (VALUES
    (okno_test.payload(2, '2026-12-05T09:00:00+01:00', '2026-12-05T10:30:00+01:00')),
    ('{"ends_at":"2026-12-05T09:30:00Z","starts_at":"2026-12-05T08:00:00Z","resource_id":2.0}'::jsonb),
    ('{"resource_id":2,"starts_at":"2026-12-05T03:00:00-05:00","ends_at":"2026-12-05t09:30:00z"}'::jsonb)
  ) AS t(p);
SELECT * FROM pg_temp.added();

-- the same key with other data: key_reused, whatever differs
SELECT okno_test.err(format('SELECT okno_create_booking(2, %L, %L)', 'c-1', p)) AS result
  FROM (VALUES
    (okno_test.payload(3, '2026-12-05T09:00:00+01:00', '2026-12-05T10:30:00+01:00')),
    (okno_test.payload(2, '2026-12-05T09:00:00+01:00', '2026-12-05T10:30:01+01:00')),
    (okno_test.payload(2, '2026-12-05T09:00:00.000001+01:00', '2026-12-05T10:30:00+01:00')),
    (okno_test.payload(2, '2026-12-05T09:00:00Z', '2026-12-05T10:30:00Z'))
  ) AS t(p);

-- key_reused is decided before the actor and resource are looked at
SELECT okno_test.err($$SELECT okno_create_booking(2, 'c-1', okno_test.payload(999, '2026-12-05T09:00:00Z', '2026-12-05T10:00:00Z'))$$);

-- a key belongs to its actor: actor 1 may use 'c-1' for a request of its own
SELECT okno_create_booking(1, 'c-1', okno_test.payload(2, '2026-12-06T09:00:00Z', '2026-12-06T10:00:00Z')) ->> 'actor_id' AS actor;
SELECT actor_id, request_key FROM idempotency WHERE request_key = 'c-1' ORDER BY 1;

-- actor_missing (403) and resource_missing (404), in that order
SELECT okno_test.err($$SELECT okno_create_booking(999, 'c-2', okno_test.payload(2, '2026-12-07T09:00:00Z', '2026-12-07T10:00:00Z'))$$);
SELECT okno_test.err($$SELECT okno_create_booking(NULL, 'c-2', okno_test.payload(2, '2026-12-07T09:00:00Z', '2026-12-07T10:00:00Z'))$$);
SELECT okno_test.err($$SELECT okno_create_booking(1, 'c-2', okno_test.payload(999, '2026-12-07T09:00:00Z', '2026-12-07T10:00:00Z'))$$);
SELECT okno_test.err($$SELECT okno_create_booking(999, 'c-2', okno_test.payload(999, '2026-12-07T09:00:00Z', '2026-12-07T10:00:00Z'))$$);
-- a missing actor is reported before a busy slot
SELECT okno_test.err($$SELECT okno_create_booking(999, 'c-2', okno_test.payload(2, '2026-12-05T08:00:00Z', '2026-12-05T09:00:00Z'))$$);

-- slot_busy (409), with the constraint name set as the course read it
SELECT okno_test.err($$SELECT okno_create_booking(1, 'c-3', okno_test.payload(2, '2026-12-05T09:00:00Z', '2026-12-05T09:00:01Z'))$$);
SELECT okno_test.err($$SELECT okno_create_booking(1, 'c-3', okno_test.payload(2, '2026-12-05T07:00:00Z', '2026-12-05T12:00:00Z'))$$);
-- periods are half-open: touching the end is not an overlap
SELECT okno_create_booking(1, 'c-4', okno_test.payload(2, '2026-12-05T09:30:00Z', '2026-12-05T10:00:00Z')) ->> 'ends_at' AS ends_at;
SELECT okno_create_booking(1, 'c-5', okno_test.payload(2, '2026-12-05T07:00:00Z', '2026-12-05T08:00:00Z')) ->> 'starts_at' AS starts_at;
-- another resource at the same time is free
SELECT okno_create_booking(1, 'c-6', okno_test.payload(3, '2026-12-05T08:00:00Z', '2026-12-05T09:30:00Z')) ->> 'resource_id' AS resource;

-- after any error nothing of the attempt remains
SELECT * FROM pg_temp.added();
SELECT count(*) AS keys_c3 FROM idempotency WHERE request_key IN ('c-2', 'c-3');

-- ... so the same key may be retried once the slot frees
UPDATE bookings SET status = 'cancelled' WHERE id = (:'card'::jsonb ->> 'id')::bigint;
SELECT okno_create_booking(1, 'c-3', okno_test.payload(2, '2026-12-05T09:00:00Z', '2026-12-05T09:00:01Z')) ->> 'starts_at' AS retried;
-- and a replay after the cancellation still returns the original confirmed card
SELECT okno_create_booking(2, 'c-1', okno_test.payload(2, '2026-12-05T09:00:00+01:00', '2026-12-05T10:30:00+01:00')) = :'card'::jsonb AS original_card,
       (SELECT status FROM bookings WHERE id = (:'card'::jsonb ->> 'id')::bigint) AS current_status;

-- an error in the middle of a caller's transaction aborts the transaction
BEGIN;
SELECT okno_create_booking(1, 'c-7', okno_test.payload(3, '2026-12-08T08:00:00Z', '2026-12-08T09:00:00Z')) ->> 'resource_id' AS created;
SELECT okno_create_booking(1, 'c-8', okno_test.payload(3, '2026-12-08T08:30:00Z', '2026-12-08T09:30:00Z'));
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) AS c7_or_c8 FROM idempotency WHERE request_key IN ('c-7', 'c-8');

-- one event per new booking, none per replay; ids are UUID version 7,
-- increasing in the order written
SELECT (SELECT count(*) FROM outbox) - e AS events, (SELECT count(*) FROM bookings) - b AS bookings FROM before;
SELECT count(*) FILTER (WHERE substr(id::text, 15, 1) <> '7') AS not_v7,
       count(*) FILTER (WHERE substr(id::text, 20, 1) NOT IN ('8', '9', 'a', 'b')) AS bad_variant
  FROM outbox;
SELECT array_agg((payload ->> 'booking_id')::bigint ORDER BY id) = array_agg((payload ->> 'booking_id')::bigint ORDER BY (payload ->> 'booking_id')::bigint) AS id_order_is_creation_order
  FROM outbox;
SELECT bool_and(kind = 'booking_created') AS all_booking_created,
       bool_and(payload ?& ARRAY['booking_id'] AND (SELECT count(*) FROM jsonb_object_keys(payload)) = 1) AS payload_is_booking_id
  FROM outbox;
SELECT count(*) AS events_without_booking FROM outbox o
 WHERE NOT EXISTS (SELECT FROM bookings b WHERE b.id = (o.payload ->> 'booking_id')::bigint);

-- a stored key with a fingerprint version this okno does not know
UPDATE idempotency SET fingerprint_version = 2 WHERE actor_id = 1 AND request_key = 'c-4';
SELECT okno_test.err($$SELECT okno_create_booking(1, 'c-4', okno_test.payload(2, '2026-12-05T09:30:00Z', '2026-12-05T10:00:00Z'))$$);
UPDATE idempotency SET fingerprint_version = 1 WHERE actor_id = 1 AND request_key = 'c-4';

-- read-only transactions are refused (as on a standby)
BEGIN READ ONLY;
SELECT okno_create_booking(1, 'c-9', okno_test.payload(3, '2026-12-09T08:00:00Z', '2026-12-09T09:00:00Z'));
ROLLBACK;
BEGIN READ ONLY;
SELECT * FROM okno_drain_once();
ROLLBACK;

-- the function's declared properties
SELECT proname, provolatile, proparallel, proisstrict, prosecdef, prorettype::regtype
  FROM pg_proc WHERE proname LIKE 'okno\_%' ORDER BY 1;
