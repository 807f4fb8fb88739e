-- Scenario 7, a layout in which delivering is a HOT update: the pending
-- events' ids in a table of their own (bench.hot_pending, written at
-- create), deleted at delivery, and the outbox copy with only its primary
-- key and fillfactor 50 (bench.hot_outbox).  Same cursor as
-- bound_outbox.sql; no due or parked checks (they would live in the
-- pending table).
WITH p AS (
  DELETE FROM bench.hot_pending AS h
   WHERE h.id = ANY (ARRAY(
     SELECT c.id FROM bench.hot_pending AS c
      WHERE c.id > coalesce(nullif(current_setting('bench.cursor', true), ''),
                            '00000000-0000-0000-0000-000000000000')::uuid
      ORDER BY c.id LIMIT 1000 FOR UPDATE SKIP LOCKED))
  RETURNING h.id),
d AS (
  UPDATE bench.hot_outbox AS o SET delivered_at = clock_timestamp()
    FROM p WHERE o.id = p.id
  RETURNING o.id, o.kind::text AS kind, o.payload, o.attempts)
SELECT id, kind, payload, attempts,
       set_config('bench.cursor', (SELECT l.id::text FROM d AS l ORDER BY l.id DESC LIMIT 1), false)
  FROM d ORDER BY id;
