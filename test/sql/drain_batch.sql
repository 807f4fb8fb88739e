--
-- drain_batch: okno_drain(n) hands out up to n due events in id order, in
-- the caller's transaction; parked and delayed events are skipped
--
DO $$ BEGIN WHILE EXISTS (SELECT FROM okno_drain(10000)) LOOP END LOOP; END $$;
SELECT count(okno_create_booking(2, 'b-' || i, okno_test.payload(3, format('2027-03-01T%s:00:00Z', lpad(i::text, 2, '0')), format('2027-03-01T%s:30:00Z', lpad(i::text, 2, '0'))))) AS created
  FROM generate_series(0, 9) AS i;
CREATE TEMP TABLE batch AS SELECT id, payload FROM outbox WHERE delivered_at IS NULL ORDER BY id;
SELECT count(*) AS pending FROM batch;

-- max_events must be 1..10000 (22023)
SELECT okno_test.err('SELECT * FROM okno_drain(0)');
SELECT okno_test.err('SELECT * FROM okno_drain(10001)');
SELECT okno_test.err('SELECT * FROM okno_drain(-1)');
SELECT okno_test.err('SELECT * FROM okno_drain(NULL)');

-- up to n, in id order, with attempts
BEGIN;
SELECT array_agg(event_id ORDER BY event_id) = (SELECT array_agg(id ORDER BY id) FROM (SELECT id FROM batch ORDER BY id LIMIT 4) s) AS first_four_in_order,
       count(*) AS n, bool_and(attempts = 0) AS no_attempts, bool_and(kind = 'booking_created') AS kinds
  FROM okno_drain(4);
SELECT count(*) AS marked FROM outbox WHERE id IN (SELECT id FROM batch) AND delivered_at IS NOT NULL;
ROLLBACK;
SELECT count(*) AS marked_after_rollback FROM outbox WHERE id IN (SELECT id FROM batch) AND delivered_at IS NOT NULL;

-- the rows come back in id order, and the default is 100
SELECT array_agg(event_id) = (SELECT array_agg(id ORDER BY id) FROM batch) AS all_in_id_order FROM okno_drain();
SELECT count(*) AS nothing_left FROM okno_drain(10000);

-- parked and delayed events are not handed out, by either drain
SELECT okno_create_booking(2, 'b-p', okno_test.payload(3, '2027-03-02T10:00:00Z', '2027-03-02T11:00:00Z')) ->> 'resource_id' AS r \gset
SELECT okno_create_booking(2, 'b-d', okno_test.payload(3, '2027-03-02T11:00:00Z', '2027-03-02T12:00:00Z')) ->> 'resource_id' AS r \gset
SELECT okno_create_booking(2, 'b-ok', okno_test.payload(3, '2027-03-02T12:00:00Z', '2027-03-02T13:00:00Z')) ->> 'resource_id' AS r \gset
UPDATE outbox SET parked_at = now(), attempts = 10, last_error = 'test' WHERE payload = jsonb_build_object('booking_id', (SELECT (response_body ->> 'id')::bigint FROM idempotency WHERE request_key = 'b-p'));
UPDATE outbox SET available_at = now() + interval '1 hour', attempts = 1, last_error = 'test' WHERE payload = jsonb_build_object('booking_id', (SELECT (response_body ->> 'id')::bigint FROM idempotency WHERE request_key = 'b-d'));
BEGIN;
SELECT payload = jsonb_build_object('booking_id', (SELECT (response_body ->> 'id')::bigint FROM idempotency WHERE request_key = 'b-ok')) AS only_the_due_one FROM okno_drain_once();
SELECT count(*) AS none_left FROM okno_drain(100);
ROLLBACK;
SELECT count(*) AS due_by_batch FROM okno_drain(100);
-- a delayed event becomes due once its time has come
UPDATE outbox SET available_at = now() - interval '1 second' WHERE available_at IS NOT NULL AND parked_at IS NULL AND delivered_at IS NULL;
SELECT attempts FROM okno_drain(100);
SELECT count(*) AS parked_still_pending FROM outbox WHERE parked_at IS NOT NULL AND delivered_at IS NULL;

-- the pick runs on the partial index, never on the whole table: scans
-- counted by the statistics of this transaction
INSERT INTO outbox (id, kind, payload, delivered_at)
  SELECT gen_random_uuid(), 'filler', '{}', now() FROM generate_series(1, 20000);
ANALYZE outbox;
-- flush this session's pending statistics, so that the counters below are
-- this transaction's alone
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT count(*) AS drained FROM okno_drain(100);
SELECT seq_scan AS outbox_seq_scans FROM pg_stat_xact_user_tables WHERE relid = 'outbox'::regclass;
SELECT pg_stat_get_xact_numscans('outbox_pending'::regclass) > 0 AS pending_index_scanned;
ROLLBACK;
-- the same query, as the C code runs it (PostgreSQL 17 names an InitPlan's
-- output "(InitPlan 1).col1" where 15 wrote "$1"; the filter prints 15's form)
SET enable_seqscan = on;
CREATE FUNCTION pg_temp.plan(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        line := regexp_replace(line, '^(\s*InitPlan (\d+))$', '\1 (returns $\2)');
        RETURN NEXT regexp_replace(line, '\(InitPlan (\d+)\)\.col1', '$\1', 'g');
    END LOOP;
END $$;
SELECT pg_temp.plan($q$
WITH delivered AS (
 UPDATE public.outbox AS o SET delivered_at = pg_catalog.clock_timestamp()
  WHERE o.id OPERATOR(pg_catalog.=) ANY (ARRAY(
   SELECT p.id FROM public.outbox AS p
    WHERE p.delivered_at IS NULL AND p.parked_at IS NULL
      AND (p.available_at IS NULL OR p.available_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp())
    ORDER BY p.id LIMIT 100 FOR UPDATE SKIP LOCKED))
  RETURNING o.id, o.kind::pg_catalog.text AS kind, o.payload, o.attempts)
SELECT id, kind, payload, attempts FROM delivered ORDER BY id
$q$) AS "QUERY PLAN";
DELETE FROM outbox WHERE kind = 'filler';

-- a drain starts after the last id this backend handed out: the dead
-- index entries that delivered events leave at the front of
-- outbox_pending (until VACUUM) are walked by the first scan only
ALTER TABLE outbox SET (autovacuum_enabled = off);
-- (ids below every UUID v7 of today, so the filler sorts first)
INSERT INTO outbox (id, kind, payload)
  SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'filler', '{}'
    FROM generate_series(1, 30000) AS i;
SELECT count(*) AS drained FROM okno_drain(10000);
SELECT count(*) AS drained FROM okno_drain(10000);
SELECT count(*) AS drained FROM okno_drain(10000);
-- new events behind nothing: the next drains read a few index pages, not
-- the ~100 pages of dead entries in front of them
SELECT okno_create_booking(2, 'cursor-' || i, okno_test.payload(3, format('2027-03-05T%s:00:00Z', lpad(i::text, 2, '0')), format('2027-03-05T%s:30:00Z', lpad(i::text, 2, '0')))) IS NOT NULL AS created
  FROM generate_series(1, 2) AS i;
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT count(*) AS drained FROM okno_drain_once();
SELECT pg_stat_get_xact_blocks_fetched('outbox_pending'::regclass) < 10 AS few_index_pages_read;
COMMIT;
-- a new session (no cursor) scans from the start, through the dead entries
\c
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT count(*) AS drained FROM okno_drain_once();
SELECT pg_stat_get_xact_blocks_fetched('outbox_pending'::regclass) > 50 AS many_index_pages_read;
COMMIT;
ALTER TABLE outbox RESET (autovacuum_enabled);
DELETE FROM outbox WHERE kind = 'filler';
