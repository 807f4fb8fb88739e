--
-- purge: okno_purge deletes old keys and old delivered events, in
-- batches, never pending or parked events
--
SELECT okno_test.err($$SELECT * FROM okno_purge(NULL, '1 day')$$);
SELECT okno_test.err($$SELECT * FROM okno_purge('1 day', NULL)$$);
SELECT okno_test.err($$SELECT * FROM okno_purge('-1 day', '1 day')$$);
SELECT okno_test.err($$SELECT * FROM okno_purge('1 day', '-1 second')$$);
SELECT okno_test.err($$SELECT * FROM okno_purge('178000000 years', '1 mon -31 days')$$);
-- any negative field is refused, whatever the interval compares as: these
-- compare as zero, or as a day, depending on the month ('-1 month +31 days'
-- deleted keys minutes old when subtracted in a 31-day month)
SELECT okno_test.err($$SELECT * FROM okno_purge('-1 month +30 days', '1 day')$$);
SELECT okno_test.err($$SELECT * FROM okno_purge('-1 month +31 days', '1 day')$$);
SELECT okno_test.err($$SELECT * FROM okno_purge('1 day', '1 day -1 hour')$$);
SELECT okno_test.err($$SELECT * FROM okno_purge('1 year -1 day', '1 day')$$);
SELECT okno_test.err($$SELECT * FROM okno_purge('1 day', '-0.5 seconds')$$);
-- an age reaching back past 4713 BC (the first timestamp) deletes nothing
SELECT * FROM okno_purge('178000000 years', '300000 years');
SELECT * FROM okno_purge('6000 years', '100000000 hours');

-- start from what earlier tests left: nothing is older than a day yet
SELECT * FROM okno_purge('1 day', '1 day');

-- 25,000 old keys and 25,000 old delivered events (more than two batches
-- of 10,000 each), some recent ones, and old pending and parked events
INSERT INTO idempotency (actor_id, request_key, fingerprint, response_body, created_at)
  SELECT 1 + i % 2, 'old-' || i, repeat('0', 64), '{}', now() - interval '40 days'
    FROM generate_series(1, 25000) AS i;
INSERT INTO idempotency (actor_id, request_key, fingerprint, response_body, created_at)
  SELECT 1, 'recent-' || i, repeat('0', 64), '{}', now() - interval '2 days'
    FROM generate_series(1, 10) AS i;
INSERT INTO outbox (id, kind, payload, created_at, delivered_at)
  SELECT gen_random_uuid(), 'old', '{}', now() - interval '40 days', now() - interval '39 days'
    FROM generate_series(1, 25000);
INSERT INTO outbox (id, kind, payload, created_at, delivered_at)
  SELECT gen_random_uuid(), 'recent', '{}', now() - interval '40 days', now() - interval '1 hour'
    FROM generate_series(1, 10);
INSERT INTO outbox (id, kind, payload, created_at)
  SELECT gen_random_uuid(), 'old-pending', '{}', now() - interval '40 days' FROM generate_series(1, 5);
INSERT INTO outbox (id, kind, payload, created_at, attempts, last_error, parked_at)
  SELECT gen_random_uuid(), 'old-parked', '{}', now() - interval '40 days', 10, 'gave up', now() - interval '39 days'
    FROM generate_series(1, 5);
SELECT count(*) AS keys_before FROM idempotency \gset
SELECT count(*) AS events_before FROM outbox \gset

-- keys older than 30 days, delivered events older than 7 days
SELECT * FROM okno_purge('30 days', '7 days');
SELECT :keys_before - count(*) AS keys_gone, count(*) FILTER (WHERE request_key LIKE 'recent-%') AS recent_kept,
       count(*) FILTER (WHERE request_key LIKE 'old-%') AS old_left
  FROM idempotency;
SELECT kind, count(*) FROM outbox WHERE kind IN ('old', 'recent', 'old-pending', 'old-parked') GROUP BY kind ORDER BY kind;

-- nothing more to do; then an age of zero takes every delivered event,
-- and still no pending or parked one
SELECT * FROM okno_purge('30 days', '7 days');
SELECT events_deleted > 0 AS took_the_rest FROM okno_purge('30 days', '0 seconds');
SELECT count(*) FILTER (WHERE delivered_at IS NOT NULL) AS delivered_left,
       count(*) FILTER (WHERE kind IN ('old-pending', 'old-parked')) AS pending_and_parked_kept
  FROM outbox;

-- a key purged is forgotten: the same key is a new request afterwards
SELECT (okno_create_booking(1, 'p-1', okno_test.payload(2, '2027-06-01T10:00:00Z', '2027-06-01T11:00:00Z')) ->> 'id')::bigint AS first_id \gset
UPDATE idempotency SET created_at = now() - interval '31 days' WHERE request_key = 'p-1';
UPDATE bookings SET created_at = now() - interval '31 days' WHERE id = :first_id;
SELECT keys_deleted FROM okno_purge('30 days', '7 days');
SELECT okno_test.err($$SELECT okno_create_booking(1, 'p-1', okno_test.payload(2, '2027-06-01T10:00:00Z', '2027-06-01T11:00:00Z'))$$) AS retry_after_purge;

DELETE FROM outbox WHERE kind IN ('old-pending', 'old-parked');
DELETE FROM idempotency WHERE request_key LIKE 'recent-%';
