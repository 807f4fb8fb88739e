-- bench/setup.sql: the benchmark's own objects, in schema bench of the
-- benchmark database (okno is installed in public, PgQ in pgq, the PL/pgSQL
-- baseline in plp).  Nothing here is part of the extension.
\set ON_ERROR_STOP 1

CREATE SCHEMA bench;

-- CPU time this backend has spent on a CPU so far, in nanoseconds (Linux
-- schedstat: exact, unlike the 10 ms ticks of /proc/self/stat).  Other
-- processes on the machine do not count, only this backend's own work.
CREATE FUNCTION bench.cpu_ns() RETURNS bigint LANGUAGE sql VOLATILE AS $$
  SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint
$$;

\ir slots.sql

-- ---------------------------------------------------------------------
-- Scenario 1 and 4: CPU per call inside one transaction.
--
-- The arguments of every call are made beforehand (bench.args, one set per
-- measurement); each loop walks its set in the same way (reps times), so the
-- loops differ only in the one statement they run per row, and the empty
-- loop (bench.loop_empty) is the same walk with a trivial call: its cost per
-- call is subtracted.  bench.cpu_ns() moves in scheduler ticks (a few ms),
-- so the cheapest calls (the empty loop, okno_canonical) walk their set 10
-- times to keep that error small.
CREATE UNLOGGED TABLE bench.args (
  set_id integer, i integer, actor integer, key text, payload jsonb,
  resource_id integer, starts_at timestamptz, ends_at timestamptz,
  starts_txt text, ends_txt text, fingerprint text,
  PRIMARY KEY (set_id, i));

-- n calls for actor 1, keys prefix.1 .. prefix.n, resource res, slots slot0 + 1 ..
CREATE FUNCTION bench.make_args(s integer, n integer, prefix text, res integer, slot0 bigint)
RETURNS void LANGUAGE sql AS $$
  DELETE FROM bench.args WHERE set_id = s;
  INSERT INTO bench.args
  SELECT s, g, 1, prefix || '.' || g, bench.payload(res, slot0 + g), res,
         bench.slot_start(slot0 + g), bench.slot_start(slot0 + g) + interval '1 minute',
         bench.slot_text(slot0 + g), to_char(bench.slot_utc(slot0 + g) + interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
         okno_fingerprint(bench.payload(res, slot0 + g))
    FROM generate_series(1, n) AS g;
$$;

CREATE TYPE bench.timing AS (calls integer, cpu_ns bigint, wall_ns bigint);

CREATE FUNCTION bench.loop_empty(s integer, reps integer DEFAULT 1) RETURNS bench.timing LANGUAGE plpgsql AS $$
DECLARE r bench.args; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR pass IN 1..reps LOOP
  FOR r IN SELECT * FROM bench.args WHERE set_id = s ORDER BY i LOOP
    PERFORM r.i;
    n := n + 1;
  END LOOP;
  END LOOP;
  RETURN (n, bench.cpu_ns() - c0, (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint);
END $$;

CREATE FUNCTION bench.loop_okno(s integer, reps integer DEFAULT 1) RETURNS bench.timing LANGUAGE plpgsql AS $$
DECLARE r bench.args; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR pass IN 1..reps LOOP
  FOR r IN SELECT * FROM bench.args WHERE set_id = s ORDER BY i LOOP
    PERFORM okno_create_booking(r.actor, r.key, r.payload);
    n := n + 1;
  END LOOP;
  END LOOP;
  RETURN (n, bench.cpu_ns() - c0, (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint);
END $$;

CREATE FUNCTION bench.loop_plpgsql(s integer, reps integer DEFAULT 1) RETURNS bench.timing LANGUAGE plpgsql AS $$
DECLARE r bench.args; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR pass IN 1..reps LOOP
  FOR r IN SELECT * FROM bench.args WHERE set_id = s ORDER BY i LOOP
    PERFORM plp.create_booking(r.actor, r.key, r.payload);
    n := n + 1;
  END LOOP;
  END LOOP;
  RETURN (n, bench.cpu_ns() - c0, (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint);
END $$;

-- The floor: the same three rows (booking; key with the precomputed
-- fingerprint and the card; event) in ONE statement, no checks, no lock,
-- no NOTIFY.  PL/pgSQL keeps its plan, so it is parsed and planned once.
CREATE FUNCTION bench.loop_floor(s integer, reps integer DEFAULT 1) RETURNS bench.timing LANGUAGE plpgsql AS $$
DECLARE r bench.args; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR pass IN 1..reps LOOP
  FOR r IN SELECT * FROM bench.args WHERE set_id = s ORDER BY i LOOP
    WITH b AS (
      INSERT INTO public.bookings (resource_id, actor_id, starts_at, ends_at)
      VALUES (r.resource_id, r.actor, r.starts_at, r.ends_at) RETURNING id),
    k AS (
      INSERT INTO public.idempotency (actor_id, request_key, fingerprint, response_body)
      SELECT r.actor, r.key, r.fingerprint,
             jsonb_build_object('id', b.id, 'resource_id', r.resource_id, 'actor_id', r.actor,
                                'starts_at', r.starts_txt, 'ends_at', r.ends_txt, 'status', 'confirmed')
        FROM b)
    INSERT INTO public.outbox (id, kind, payload)
    SELECT gen_random_uuid(), 'booking_created', jsonb_build_object('booking_id', b.id) FROM b;
    n := n + 1;
  END LOOP;
  END LOOP;
  RETURN (n, bench.cpu_ns() - c0, (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint);
END $$;

CREATE FUNCTION bench.loop_okno_canonical(s integer, reps integer DEFAULT 1) RETURNS bench.timing LANGUAGE plpgsql AS $$
DECLARE r bench.args; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR pass IN 1..reps LOOP
  FOR r IN SELECT * FROM bench.args WHERE set_id = s ORDER BY i LOOP
    PERFORM okno_canonical(r.payload);
    n := n + 1;
  END LOOP;
  END LOOP;
  RETURN (n, bench.cpu_ns() - c0, (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint);
END $$;

CREATE FUNCTION bench.loop_plpgsql_canonical(s integer, reps integer DEFAULT 1) RETURNS bench.timing LANGUAGE plpgsql AS $$
DECLARE r bench.args; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR pass IN 1..reps LOOP
  FOR r IN SELECT * FROM bench.args WHERE set_id = s ORDER BY i LOOP
    PERFORM plp.canonical(r.payload);
    n := n + 1;
  END LOOP;
  END LOOP;
  RETURN (n, bench.cpu_ns() - c0, (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint);
END $$;

-- ---------------------------------------------------------------------
-- Scenario 2: key_reused is an error; these wrappers catch it (one
-- subtransaction per call, for both implementations) so pgbench goes on.
CREATE FUNCTION bench.reuse_okno(actor integer, key text, payload jsonb) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM okno_create_booking(actor, key, payload);
  RAISE EXCEPTION 'key % was not rejected', key;
EXCEPTION WHEN SQLSTATE 'OKB04' THEN
  RETURN 'key_reused';
END $$;

CREATE FUNCTION bench.reuse_plpgsql(actor integer, key text, payload jsonb) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM plp.create_booking(actor, key, payload);
  RAISE EXCEPTION 'key % was not rejected', key;
EXCEPTION WHEN SQLSTATE 'OKB04' THEN
  RETURN 'key_reused';
END $$;

-- Pending outbox events written straight into the table (ids: UUID v7 of
-- now, in order), n of them: what a drain finds after n creates and some
-- cancellations.  Every tenth event is the cancellation of the booking
-- created five events before, so that a batch holds some of them back
-- behind their booking_created (okno delivers each booking's events in
-- order; PgQ's queue, bench.pgq_fill, has no order to keep).
CREATE FUNCTION bench.outbox_fill(n integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO public.outbox (id, kind, payload)
  SELECT (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
          || '7000' || '8' || lpad(to_hex(g), 15, '0'))::uuid,
         CASE WHEN g % 10 = 0 THEN 'booking_cancelled' ELSE 'booking_created' END,
         -- booking ids of this fill's own (a real outbox never sees a
         -- booking's events again after they were delivered)
         jsonb_build_object('booking_id', b.base + CASE WHEN g % 10 = 0 THEN g - 5 ELSE g END)
    FROM generate_series(1, n) AS g,
         (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint * 1000000 AS base) AS b;
$$;

-- n more delivered events that went through the pending index, as a relay
-- leaves them: inserted pending, then marked delivered (autovacuum is off,
-- so their old versions and index entries stay: the worst case).
CREATE FUNCTION bench.outbox_history(n integer) RETURNS void LANGUAGE sql AS $$
  SELECT bench.outbox_fill(n);
  UPDATE public.outbox SET delivered_at = clock_timestamp() WHERE delivered_at IS NULL;
$$;

-- ---------------------------------------------------------------------
-- Scenario 4: bookings and their keys, n_from+1 .. n_to, loaded fast:
-- resources 1000..1999 round robin, one hour each, so none overlaps; the
-- fingerprint an md5-like hex string, the response a real card.  Foreign-key
-- triggers are off meanwhile (the rows are consistent by construction);
-- the exclusion constraint and every index are maintained as usual.
CREATE FUNCTION bench.grow(n_from bigint, n_to bigint) RETURNS void LANGUAGE sql AS $$
  WITH b AS (
    INSERT INTO public.bookings (resource_id, actor_id, starts_at, ends_at)
    SELECT 1000 + g % 1000, 1 + g % 100,
           timestamptz '2100-01-01 00:00Z' + (g / 1000) * interval '1 hour',
           timestamptz '2100-01-01 01:00Z' + (g / 1000) * interval '1 hour'
      FROM generate_series(n_from + 1, n_to) AS g
    RETURNING id, resource_id, actor_id, starts_at, ends_at)
  INSERT INTO public.idempotency (actor_id, request_key, fingerprint, response_body, created_at)
  SELECT actor_id, 'g.' || lpad(id::text, 10, '0'), md5(id::text) || md5((-id)::text),
         jsonb_build_object('id', id, 'resource_id', resource_id, 'actor_id', actor_id,
           'starts_at', to_char(starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'ends_at', to_char(ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'status', 'confirmed'), now()
    FROM b;
$$;

-- ---------------------------------------------------------------------
-- PgQ, the dedicated-queue reference: queue bq is read in batches by
-- consumer c1; queue bq_ins only takes inserts.
CREATE PROCEDURE bench.pgq_reset() LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT FROM pgq.queue WHERE queue_name = 'bq') THEN
    PERFORM pgq.unregister_consumer('bq', 'c1');
    PERFORM pgq.drop_queue('bq');
  END IF;
  PERFORM pgq.create_queue('bq');
  PERFORM pgq.set_queue_config('bq', 'ticker_max_count', '1');
  PERFORM pgq.set_queue_config('bq', 'ticker_max_lag', '1 hour');
  PERFORM pgq.set_queue_config('bq', 'ticker_idle_period', '1 hour');
  COMMIT;
  PERFORM pgq.ticker('bq');
  COMMIT;
  PERFORM pgq.register_consumer('bq', 'c1');
  COMMIT;
END $$;

-- nbatches batches of 1000 events, each closed by a tick (the work pgqd
-- would do), so that pgq.next_batch finds them ready.
CREATE PROCEDURE bench.pgq_fill(nbatches integer) LANGUAGE plpgsql AS $$
BEGIN
  FOR b IN 1..nbatches LOOP
    PERFORM pgq.insert_event('bq', 'booking_created', '{"booking_id": ' || g || '}')
       FROM generate_series(1, 1000) AS g;
    COMMIT;
    IF pgq.ticker('bq') IS NULL THEN
      RAISE EXCEPTION 'pgq.ticker did not tick after batch %', b;
    END IF;
    COMMIT;
  END LOOP;
END $$;

-- ---------------------------------------------------------------------
-- Scenario 6: subscribers.  n events (as outbox_fill writes them) in
-- transactions of 1000 each, as many writers would commit them (a
-- subscriber's drain copies the events of whole transactions).
CREATE PROCEDURE bench.outbox_fill_tx(n integer) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. n / 1000 LOOP
    PERFORM bench.outbox_fill(1000);
    COMMIT;
  END LOOP;
END $$;

-- exactly the subscribers s1 .. sn, each with nothing to deliver
CREATE PROCEDURE bench.subscribers(n integer) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM public.okno_unsubscribe(name) FROM public.okno_subscriber;
  COMMIT;
  PERFORM public.okno_subscribe('s' || g) FROM generate_series(1, n) AS g;
  COMMIT;
END $$;

-- s1's history: n more events that it (and the default subscriber) has
-- delivered, as its drains leave them: handed out as they were copied, so
-- with no row of okno_delivery.  The snapshot moves past them afterwards,
-- as the drain's copy would.
CREATE PROCEDURE bench.subscriber_history(n integer) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bench.outbox_fill(n);
  COMMIT;
  UPDATE public.outbox SET delivered_at = clock_timestamp() WHERE delivered_at IS NULL;
  COMMIT;
  UPDATE public.okno_subscriber SET copied_snapshot = pg_current_snapshot() WHERE name = 's1';
  COMMIT;
END $$;

-- ---------------------------------------------------------------------
-- Scenario 7: what writing delivered_at costs.  A copy of the outbox's
-- columns with only a primary key, and room on every page (fillfactor
-- 50), where marking an event delivered is a HOT update; and for the
-- second layout a table of the pending events' ids beside it, which a
-- drain deletes from.
CREATE TABLE bench.hot_outbox (LIKE public.outbox INCLUDING DEFAULTS, PRIMARY KEY (id))
  WITH (fillfactor = 50);
CREATE TABLE bench.hot_pending (id uuid PRIMARY KEY);

-- n pending events (as outbox_fill writes them) in the outbox (layout
-- 'outbox'), in bench.hot_outbox ('hot'), or there with their ids in
-- bench.hot_pending ('pending')
CREATE PROCEDURE bench.bound_fill(n integer, layout text) LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE public.outbox, bench.hot_outbox, bench.hot_pending;
  PERFORM bench.outbox_fill(n);
  IF layout IN ('hot', 'pending') THEN
    INSERT INTO bench.hot_outbox SELECT * FROM public.outbox;
    TRUNCATE public.outbox;
  END IF;
  IF layout = 'pending' THEN
    INSERT INTO bench.hot_pending SELECT id FROM bench.hot_outbox;
  END IF;
END $$;
