-- test/stress/load.sql: the test database of load.sh.
--
-- Installs okno, seeds four actors and six resources, and creates schema
-- "lt" with one PL/pgSQL wrapper per kind of request that the pgbench
-- scripts (test/stress/*.pgbench) send.  A wrapper calls okno in a
-- subtransaction, catches only okno's documented SQLSTATEs, and writes one
-- row into lt.outcomes in the caller's transaction: what happened, or
-- 'UNEXPLAINED: ...' when a documented outcome is not one this kind of
-- request can have (a replay that does not return the stored response, a
-- new key that is key_reused, 40001 under READ COMMITTED ...).  Any other
-- SQLSTATE is not caught: it aborts the pgbench client and load.sh reports
-- it.
--
-- Besides the outcomes, the wrappers log what a verifier needs to account
-- for every event: lt.requests (every stored request, to replay it),
-- lt.deliveries (every event a drain handed out), lt.failures and
-- lt.releases (every recorded failure and release).

\set ON_ERROR_STOP 1
SET client_min_messages = warning;

CREATE EXTENSION okno CASCADE;
DO $$ BEGIN PERFORM okno_create_tables(); END $$;
INSERT INTO public.actors (id, name) VALUES (1, 'ann'), (2, 'boris'), (3, 'clara'), (4, 'dmitri');
-- 1-4: the general grid; 5: contested by everyone; 6: the same-key race
INSERT INTO public.resources (id, name)
SELECT g, 'room ' || g FROM generate_series(1, 6) AS g;

CREATE SCHEMA lt;

CREATE UNLOGGED TABLE lt.outcomes (
    script text NOT NULL,
    fn text NOT NULL,
    outcome text NOT NULL,
    n integer NOT NULL DEFAULT 1          -- for drains: events handed out
);
CREATE TABLE lt.requests (
    id bigserial PRIMARY KEY,
    actor integer NOT NULL,
    key text NOT NULL,
    resource integer NOT NULL,
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL,
    response jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()   -- = the key's created_at
);
CREATE TABLE lt.deliveries (event_id uuid NOT NULL, kind text NOT NULL, booking_id bigint NOT NULL);
CREATE TABLE lt.failures (event_id uuid NOT NULL);
CREATE TABLE lt.releases (event_id uuid NOT NULL);
CREATE SEQUENCE lt.keys;

CREATE FUNCTION lt.note(script text, fn text, outcome text, n integer DEFAULT 1) RETURNS void
LANGUAGE sql AS $$ INSERT INTO lt.outcomes VALUES (script, fn, outcome, n) $$;

-- the session's last booking id, or 0 (an okno create that inserts a
-- booking draws from this sequence; a replay does not)
CREATE FUNCTION lt.last_booking_id() RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  RETURN currval('public.bookings_id_seq');
EXCEPTION WHEN object_not_in_prerequisite_state THEN
  RETURN 0;
END $$;

-- RFC 3339 text of an instant, written with a random offset (the same
-- instant every time: only the form changes)
CREATE FUNCTION lt.rfc3339(t timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE off integer := (ARRAY[0, 180, -300, 330, -1439, 1439, 60])[1 + floor(random() * 7)::int];
BEGIN
  RETURN to_char((t AT TIME ZONE 'UTC') + off * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS')
         || CASE WHEN off = 0 THEN 'Z'
                 ELSE CASE WHEN off > 0 THEN '+' ELSE '-' END
                      || lpad((abs(off) / 60)::text, 2, '0') || ':' || lpad((abs(off) % 60)::text, 2, '0') END;
END $$;

CREATE FUNCTION lt.payload(resource integer, s timestamptz, e timestamptz) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('resource_id', resource, 'starts_at', lt.rfc3339(s), 'ends_at', lt.rfc3339(e))
$$;

-- One create.  Returns the outcome: 'created', 'replayed' or the SQLSTATE
-- of a documented error; *res the response.  Undocumented errors propagate.
CREATE FUNCTION lt.create(actor integer, key text, payload jsonb, OUT outcome text, OUT res jsonb)
LANGUAGE plpgsql AS $$
DECLARE before bigint := lt.last_booking_id();
BEGIN
  BEGIN
    res := public.okno_create_booking(actor, key, payload);
    outcome := CASE WHEN lt.last_booking_id() <> before AND (res ->> 'id')::bigint = lt.last_booking_id()
                    THEN 'created' ELSE 'replayed' END;
  EXCEPTION
    WHEN SQLSTATE 'OKB01' OR SQLSTATE 'OKB02' OR SQLSTATE 'OKB03' OR SQLSTATE 'OKB04'
      OR SQLSTATE 'OKB05' OR SQLSTATE 'OKB06' OR SQLSTATE 'OKB07' OR SQLSTATE 'OKB08'
      OR SQLSTATE 'OKB11' OR SQLSTATE 'OKB12'
      OR SQLSTATE '22023' OR SQLSTATE '22004' OR SQLSTATE '40001' OR SQLSTATE '25006' THEN
    outcome := SQLSTATE;
  END;
END $$;

-- new.pgbench / contested.pgbench: a new key for a slot of the grid
CREATE FUNCTION lt.new_booking(script text, actor integer, resource integer, day integer, hour integer, hours integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  key text := 'n-' || nextval('lt.keys');
  s timestamptz := timestamptz '2027-01-01 00:00Z' + day * interval '1 day' + hour * interval '1 hour';
  e timestamptz := s + hours * interval '1 hour';
  c record;
BEGIN
  c := lt.create(actor, key, lt.payload(resource, s, e));
  IF c.outcome = 'created' THEN
    INSERT INTO lt.requests (actor, key, resource, starts_at, ends_at, response)
    VALUES (actor, key, resource, s, e, c.res);
  END IF;
  PERFORM lt.note(script, 'okno_create_booking',
                  CASE WHEN c.outcome IN ('created', 'OKB05') THEN c.outcome
                       ELSE 'UNEXPLAINED: a new key got ' || c.outcome END);
END $$;

-- a stored request, picked by r: one of the 300 latest 4 times in 5 (most
-- keys older than a few seconds are purged by purge.pgbench), any otherwise
CREATE FUNCTION lt.pick_request(r bigint) RETURNS lt.requests
LANGUAGE plpgsql AS $$
DECLARE top bigint := coalesce((SELECT max(x.id) FROM lt.requests AS x), 1); q lt.requests;
BEGIN
  SELECT * INTO q FROM lt.requests AS x
   WHERE x.id >= CASE WHEN r % 5 = 0 THEN 1 + (r / 5) % top ELSE top - r % 300 END
   ORDER BY x.id LIMIT 1;
  RETURN q;
END $$;

-- was the key of this request purged? (okno_purge records its horizon in
-- the transaction that deletes; read after the call, under READ COMMITTED)
CREATE FUNCTION lt.purged(q lt.requests) RETURNS boolean
LANGUAGE sql AS $$
  SELECT coalesce((SELECT q.created_at < h.keys_purged_before FROM public.okno_purge_horizon AS h), false)
$$;

-- replay.pgbench: a stored request again, written in another form
CREATE FUNCTION lt.replay(r bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE q lt.requests := lt.pick_request(r); c record; o text;
BEGIN
  IF q.id IS NULL THEN PERFORM lt.note('replay', 'okno_create_booking', 'nothing to replay yet'); RETURN; END IF;
  c := lt.create(q.actor, q.key, lt.payload(q.resource, q.starts_at, q.ends_at));
  IF c.outcome = 'replayed' AND c.res = q.response THEN
    o := 'replayed';
  ELSIF c.outcome = 'OKB11' AND lt.purged(q) THEN
    -- the key was purged: its tombstone answers (0.7.0)
    o := 'OKB11 after purge';
  ELSIF c.outcome IN ('created', 'OKB05', 'replayed', 'OKB04') AND lt.purged(q)
        AND current_setting('okno.key_tombstone_age') = '0' THEN
    -- without tombstones the key is forgotten: this is a new request now
    -- (or a replay of, or a conflict with, the other client's new request
    -- with this key)
    o := c.outcome || ' after purge';
    IF c.outcome = 'created' THEN
      UPDATE lt.requests SET response = c.res, created_at = now() WHERE id = q.id;
    END IF;
  ELSE
    o := 'UNEXPLAINED: a replay got ' || c.outcome;
  END IF;
  PERFORM lt.note('replay', 'okno_create_booking', o);
END $$;

-- reuse.pgbench: a stored key with other data (a week later)
CREATE FUNCTION lt.reuse(r bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE q lt.requests := lt.pick_request(r); c record; o text;
BEGIN
  IF q.id IS NULL THEN PERFORM lt.note('reuse', 'okno_create_booking', 'nothing to reuse yet'); RETURN; END IF;
  c := lt.create(q.actor, q.key, lt.payload(q.resource, q.starts_at + interval '7 days', q.ends_at + interval '7 days'));
  IF c.outcome = 'OKB04' THEN
    o := 'OKB04';
  ELSIF c.outcome = 'OKB11' AND lt.purged(q) THEN
    o := 'OKB11 after purge';
  ELSIF c.outcome IN ('created', 'OKB05', 'replayed') AND lt.purged(q)
        AND current_setting('okno.key_tombstone_age') = '0' THEN
    o := c.outcome || ' after purge';
    IF c.outcome = 'created' THEN
      UPDATE lt.requests SET response = c.res, created_at = now(),
             starts_at = q.starts_at + interval '7 days', ends_at = q.ends_at + interval '7 days'
       WHERE id = q.id;
    END IF;
  ELSE
    o := 'UNEXPLAINED: other data under a stored key got ' || c.outcome;
  END IF;
  PERFORM lt.note('reuse', 'okno_create_booking', o);
END $$;

-- race_rc.pgbench / race_rr.pgbench: both clients send the same new key
-- and data within the same 10 ms; one creates, the other replays (READ
-- COMMITTED) or gets 40001 (REPEATABLE READ, when the other committed
-- after its snapshot).  race_rr takes its snapshot and its 10 ms bucket
-- first (lt.bucket()), waits 3 ms, then sends the bucket's key.
CREATE FUNCTION lt.bucket() RETURNS bigint
LANGUAGE sql AS $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 100)::bigint $$;

CREATE FUNCTION lt.race(script text, bucket bigint DEFAULT lt.bucket()) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s timestamptz := timestamptz '2030-01-01 00:00Z' + (bucket % 5000000) * interval '1 minute';
  c record;
  rr boolean := current_setting('transaction_isolation') <> 'read committed';
BEGIN
  c := lt.create(1, 'race-' || bucket, jsonb_build_object('resource_id', 6, 'starts_at', lt.rfc3339(s),
                                                           'ends_at', lt.rfc3339(s + interval '1 minute')));
  PERFORM lt.note(script, 'okno_create_booking',
                  CASE WHEN c.outcome IN ('created', 'replayed') OR (c.outcome = '40001' AND rr) THEN c.outcome
                       ELSE 'UNEXPLAINED: a same-key race got ' || c.outcome END);
END $$;

-- a booking picked by r, with its owner
CREATE FUNCTION lt.pick_booking(r bigint, OUT id bigint, OUT actor integer)
LANGUAGE plpgsql AS $$
DECLARE top bigint := coalesce((SELECT max(x.id) FROM public.bookings AS x), 1);
BEGIN
  SELECT b.id, b.actor_id INTO id, actor FROM public.bookings AS b
   WHERE b.id >= 1 + r % top ORDER BY b.id LIMIT 1;
END $$;

-- cancel.pgbench / get.pgbench: by the owner, or by another actor
CREATE FUNCTION lt.booking(script text, r bigint, cancel boolean, wrong_actor boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  b record;
  actor integer;
  res jsonb;
  o text;
  fn text := CASE WHEN cancel THEN 'okno_cancel_booking' ELSE 'okno_get_booking' END;
BEGIN
  SELECT p.id, p.actor INTO b FROM lt.pick_booking(r) AS p;
  IF b.id IS NULL THEN PERFORM lt.note(script, fn, 'nothing to pick yet'); RETURN; END IF;
  actor := CASE WHEN wrong_actor THEN b.actor % 4 + 1 ELSE b.actor END;
  BEGIN
    IF cancel THEN res := public.okno_cancel_booking(actor, b.id);
    ELSE res := public.okno_get_booking(actor, b.id); END IF;
    o := 'ok';
  EXCEPTION
    WHEN SQLSTATE 'OKB01' OR SQLSTATE 'OKB02' OR SQLSTATE 'OKB03' OR SQLSTATE 'OKB04'
      OR SQLSTATE 'OKB05' OR SQLSTATE 'OKB06' OR SQLSTATE 'OKB07' OR SQLSTATE 'OKB08'
      OR SQLSTATE 'OKB11' OR SQLSTATE 'OKB12'
      OR SQLSTATE '22023' OR SQLSTATE '22004' OR SQLSTATE '40001' OR SQLSTATE '25006' THEN
    o := SQLSTATE;
  END;
  IF wrong_actor THEN
    IF o <> 'OKB07' THEN o := 'UNEXPLAINED: another actor''s booking got ' || o; END IF;
  ELSIF o <> 'ok' THEN
    o := 'UNEXPLAINED: the owner got ' || o;
  ELSIF (res ->> 'id')::bigint <> b.id OR (cancel AND res ->> 'status' <> 'cancelled') THEN
    o := 'UNEXPLAINED: wrong card ' || res::text;
  ELSE
    o := 'ok ' || (res ->> 'status');
  END IF;
  PERFORM lt.note(script, fn, o);
END $$;

-- drain.pgbench: up to n events; sometimes a failure recorded for the
-- first, sometimes the second handed back (as a relay stopping would)
CREATE FUNCTION lt.drain(n integer, fail boolean, release boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
  ok boolean;
  rowcount integer;
BEGIN
  WITH d AS (SELECT * FROM public.okno_drain(n)),
       logged AS (INSERT INTO lt.deliveries
                  SELECT d.event_id, d.kind, (d.payload ->> 'booking_id')::bigint FROM d
                  RETURNING event_id)
  SELECT array_agg(event_id) INTO ids FROM logged;
  rowcount := coalesce(cardinality(ids), 0);
  PERFORM lt.note('drain', 'okno_drain', 'ok', rowcount);
  IF fail AND rowcount >= 1 THEN
    PERFORM public.okno_record_failure(ids[1], 'stress: the recipient failed');
    INSERT INTO lt.failures VALUES (ids[1]);
    PERFORM lt.note('drain', 'okno_record_failure', 'ok');
  END IF;
  IF release AND rowcount >= 2 THEN
    ok := public.okno_release(ids[2]);
    IF ok THEN
      INSERT INTO lt.releases VALUES (ids[2]);
      PERFORM lt.note('drain', 'okno_release', 'ok true');
    ELSE
      PERFORM lt.note('drain', 'okno_release', 'UNEXPLAINED: a drained event could not be released');
    END IF;
  END IF;
END $$;

-- requeue.pgbench: unpark a parked event, if any
CREATE FUNCTION lt.requeue() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE id uuid; ok boolean;
BEGIN
  SELECT o.id INTO id FROM public.outbox AS o
   WHERE o.parked_at IS NOT NULL AND o.delivered_at IS NULL LIMIT 1;
  IF id IS NULL THEN PERFORM lt.note('requeue', 'okno_requeue', 'nothing parked'); RETURN; END IF;
  ok := public.okno_requeue(id);
  PERFORM lt.note('requeue', 'okno_requeue', 'ok ' || ok);
END $$;

-- purge.pgbench: short ages, so keys expire during the run (0.7.0: their
-- tombstones answer a retry with OKB11)
CREATE FUNCTION lt.purge() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE k bigint; e bigint;
BEGIN
  SELECT p.keys_deleted, p.events_deleted INTO k, e FROM public.okno_purge('4 seconds', '2 seconds') AS p;
  PERFORM lt.note('purge', 'okno_purge', 'ok', (k + e)::integer);
END $$;
