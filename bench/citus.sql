-- bench/citus.sql: scenario 9's objects on the Citus cluster (tools/bench
-- s9), run on the coordinator after okno_distribute_tables().  The slot
-- functions the create scripts need (bench/pgbench/create_okno.sql,
-- create_floor_citus.sql) are bench/slots.sql's, as setup.sql's are
-- (setup.sql's tables and loops are one server's).  Citus propagates the
-- schema and the functions to the workers (a create made on a worker needs
-- them there).
\set ON_ERROR_STOP 1

CREATE SCHEMA bench;

\ir slots.sql

-- n pending events written with okno_emit, in transactions of 1,000 (a
-- procedure: on the cluster each COMMIT commits its shards' writes): half
-- keyed over 2,000 keys (five events a key when n is 20,000), half without
-- a key (each its own bucket), as docs/citus/DRAINS.md §3.4 filled them
CREATE PROCEDURE bench.emit_fill(n integer) LANGUAGE plpgsql AS $$
BEGIN
  FOR c IN 0..(n - 1) / 1000 LOOP
    PERFORM okno_emit('bench.event', jsonb_build_object('n', g),
                      CASE WHEN g % 2 = 0 THEN 'k' || (g / 2) % 2000 END)
       FROM generate_series(c * 1000 + 1, least((c + 1) * 1000, n)) AS g;
    COMMIT;
  END LOOP;
END $$;

-- one drainer: okno_drain(batch) until a call hands out nothing, each call
-- its own transaction; when it began and ended (epoch seconds, the
-- server's clock), its calls and the events they handed out.  by_hand: the
-- same drainer as a user without okno would write one that Citus runs,
-- the first batch pending events by id, marked delivered and returned
-- (Citus plans the subquery on its own, across the shards, and the UPDATE
-- then on each shard); what it leaves out, Citus could not plan across
-- shards: FOR UPDATE SKIP LOCKED (two such drainers at once hand the same
-- events out twice, or wait for each other) and the rule that holds a
-- key's later events back while an earlier one is pending.
CREATE PROCEDURE bench.drain_all(batch integer, by_hand boolean DEFAULT false,
                                 INOUT t_start float8 DEFAULT NULL,
                                 INOUT t_end float8 DEFAULT NULL, INOUT calls integer DEFAULT NULL,
                                 INOUT events bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
  k bigint;
  r record;
BEGIN
  t_start := extract(epoch FROM clock_timestamp());
  calls := 0;
  events := 0;
  LOOP
    IF by_hand THEN
      k := 0;
      FOR r IN UPDATE public.outbox SET delivered_at = now()
                WHERE (bucket, id) IN (SELECT p.bucket, p.id FROM public.outbox AS p
                                        WHERE p.delivered_at IS NULL ORDER BY p.id LIMIT batch)
               RETURNING id, kind, payload, attempts
      LOOP
        k := k + 1;
      END LOOP;
    ELSE
      SELECT count(*) INTO k FROM okno_drain(batch);
    END IF;
    COMMIT;
    calls := calls + 1;
    events := events + k;
    EXIT WHEN k = 0;
  END LOOP;
  t_end := extract(epoch FROM clock_timestamp());
END $$;
