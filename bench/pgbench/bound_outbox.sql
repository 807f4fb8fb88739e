-- Scenario 7, a lower bound of any drain that writes delivered_at: the
-- smallest statement that hands out 1000 due events and marks them
-- delivered, from a cursor (this session's bench.cursor), in no order per
-- booking; on okno's outbox with its indexes.
WITH d AS (
  UPDATE public.outbox AS o SET delivered_at = clock_timestamp()
   WHERE o.id = ANY (ARRAY(
     SELECT p.id FROM public.outbox AS p
      WHERE p.delivered_at IS NULL AND p.parked_at IS NULL
        AND (p.available_at IS NULL OR p.available_at <= clock_timestamp())
        AND p.id > coalesce(nullif(current_setting('bench.cursor', true), ''),
                            '00000000-0000-0000-0000-000000000000')::uuid
      ORDER BY p.id LIMIT 1000 FOR UPDATE SKIP LOCKED))
  RETURNING o.id, o.kind::text AS kind, o.payload, o.attempts)
SELECT id, kind, payload, attempts,
       set_config('bench.cursor', (SELECT l.id::text FROM d AS l ORDER BY l.id DESC LIMIT 1), false)
  FROM d ORDER BY id;
