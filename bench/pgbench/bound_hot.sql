-- Scenario 7, the same bound with every update HOT: bound_outbox.sql's
-- statement on a copy of the outbox with only its primary key and
-- fillfactor 50 (bench.hot_outbox), so that a delivery writes no index
-- entry.  (okno cannot do this: its drain finds pending events through
-- partial indexes on delivered_at.)
WITH d AS (
  UPDATE bench.hot_outbox AS o SET delivered_at = clock_timestamp()
   WHERE o.id = ANY (ARRAY(
     SELECT p.id FROM bench.hot_outbox AS p
      WHERE p.delivered_at IS NULL AND p.parked_at IS NULL
        AND (p.available_at IS NULL OR p.available_at <= clock_timestamp())
        AND p.id > coalesce(nullif(current_setting('bench.cursor', true), ''),
                            '00000000-0000-0000-0000-000000000000')::uuid
      ORDER BY p.id LIMIT 1000 FOR UPDATE SKIP LOCKED))
  RETURNING o.id, o.kind::text AS kind, o.payload, o.attempts)
SELECT id, kind, payload, attempts,
       set_config('bench.cursor', (SELECT l.id::text FROM d AS l ORDER BY l.id DESC LIMIT 1), false)
  FROM d ORDER BY id;
