-- One key, any node (issue 39): two sessions on two nodes sending one
-- request with one key give one booking and the same card to both.  The
-- key's row in its shard is the arbiter (README, "Scaling out with
-- Citus"): the second request's claim waits for the first's transaction,
-- on whichever node each runs, then replays.  Sessions are dblink
-- connections from here (the coordinator) to the coordinator and the
-- workers; a wait is a condition polled with a deadline.
SET client_min_messages = warning;
\i test/citus/races.psql
INSERT INTO actors (id, name) VALUES (20, 'carol'), (21, 'dave'), (22, 'erin');
INSERT INTO resources (id, name)
  SELECT g, 'race room ' || g FROM generate_series(20, 23) AS g;

SELECT race.open('s1', 'coordinator'), race.open('s2', 'worker1'),
       race.open('s3', 'worker2');

\set p '{"resource_id":20,"starts_at":"2031-01-01T10:00:00Z","ends_at":"2031-01-01T11:00:00Z"}'
\set q '{"resource_id":20,"starts_at":"2031-01-02T10:00:00Z","ends_at":"2031-01-02T11:00:00Z"}'
\set r '{"resource_id":21,"starts_at":"2031-01-03T10:00:00Z","ends_at":"2031-01-03T11:00:00Z"}'

-- READ COMMITTED: s1 on the coordinator creates and stays open; s2 on a
-- worker sends the same request, waits for s1's key, and after s1's
-- commit replays s1's card
SELECT dblink_exec('s1', 'BEGIN');
SELECT card ->> 'status' AS s1_status
  FROM dblink('s1', format('SELECT card FROM public.okno_create_booking_result(1, %L, %L)',
                           'race-rc', :'p')) AS t (card jsonb);
SELECT dblink_send_query('s2', format('SELECT card, replayed FROM public.okno_create_booking_result(1, %L, %L)',
                                      'race-rc', :'p'));
SELECT race.wait_for_waiter();
SELECT dblink_exec('s1', 'COMMIT');
SELECT replayed, coalesce(error, 'none') AS error, response AS card FROM race.answer('s2') \gset rc_
SELECT :'rc_replayed' AS replayed, :'rc_error' AS error;
-- (a query of its own: Citus would run a call in a query of a shard there)
SELECT response_body = :'rc_card'::jsonb AS same_card
  FROM idempotency WHERE actor_id = 1 AND request_key = 'race-rc';
SELECT count(*) AS bookings_of_the_slot
  FROM bookings WHERE resource_id = 20 AND starts_at = '2031-01-01 10:00+00';

-- a different request with the key, waiting the same way: key_reused
SELECT dblink_exec('s2', 'BEGIN');
SELECT card ->> 'status' AS s2_status
  FROM dblink('s2', format('SELECT card FROM public.okno_create_booking_result(2, %L, %L)',
                           'race-reused', :'q')) AS t (card jsonb);
SELECT dblink_send_query('s3', format('SELECT card, replayed FROM public.okno_create_booking_result(2, %L, %L)',
                                      'race-reused', :'r'));
SELECT race.wait_for_waiter();
SELECT dblink_exec('s2', 'COMMIT');
SELECT replayed, error FROM race.answer('s3');

-- REPEATABLE READ: s2's transaction has its snapshot before s1 commits the
-- key; it can neither see the key nor run the request again:
-- concurrent_request (40001), as on one server
\set p '{"resource_id":21,"starts_at":"2031-02-01T10:00:00Z","ends_at":"2031-02-01T11:00:00Z"}'
SELECT dblink_exec('s1', 'BEGIN');
SELECT card ->> 'status' AS s1_status
  FROM dblink('s1', format('SELECT card FROM public.okno_create_booking_result(20, %L, %L)',
                           'race-rr', :'p')) AS t (card jsonb);
SELECT dblink_exec('s2', 'BEGIN ISOLATION LEVEL REPEATABLE READ');
SELECT count(*) AS s2_sees_the_key
  FROM dblink('s2', $$SELECT 1 FROM public.idempotency WHERE actor_id = 20 AND request_key = 'race-rr'$$)
       AS t (one int);
SELECT dblink_send_query('s2', format('SELECT card, replayed FROM public.okno_create_booking_result(20, %L, %L)',
                                      'race-rr', :'p'));
SELECT race.wait_for_waiter();
SELECT dblink_exec('s1', 'COMMIT');
SELECT replayed, error FROM race.answer('s2');
SELECT dblink_exec('s2', 'ROLLBACK');
-- its retry replays
SELECT replayed
  FROM dblink('s2', format('SELECT replayed FROM public.okno_create_booking_result(20, %L, %L)',
                           'race-rr', :'p')) AS t (replayed bool);
SELECT count(*) AS bookings_of_the_slot
  FROM bookings WHERE resource_id = 21 AND starts_at = '2031-02-01 10:00+00';

-- okno.key_wait = off on both nodes: the second request is refused at
-- once (request_in_progress), not made to wait: it tried the key's lock on
-- the node of the key's shard, which the first holds; once the first has
-- committed, a retry replays (a deadline on the second: were it made to
-- wait, it would wait for a commit that comes only after its answer)
\set p '{"resource_id":21,"starts_at":"2031-02-02T10:00:00Z","ends_at":"2031-02-02T11:00:00Z"}'
SELECT dblink_exec('s1', 'BEGIN');
SELECT dblink_exec('s1', 'SET LOCAL okno.key_wait = off');
SELECT card ->> 'status' AS s1_status
  FROM dblink('s1', format('SELECT card FROM public.okno_create_booking_result(21, %L, %L)',
                           'race-nowait', :'p')) AS t (card jsonb);
SELECT dblink_exec('s3', 'SET okno.key_wait = off'), dblink_exec('s3', 'SET statement_timeout = ''60s''');
SELECT dblink_send_query('s3', format('SELECT card, replayed FROM public.okno_create_booking_result(21, %L, %L)',
                                      'race-nowait', :'p'));
SELECT replayed, error FROM race.answer('s3');
SELECT dblink_exec('s1', 'COMMIT');
SELECT replayed
  FROM dblink('s3', format('SELECT replayed FROM public.okno_create_booking_result(21, %L, %L)',
                           'race-nowait', :'p')) AS t (replayed bool);
SELECT dblink_exec('s3', 'RESET okno.key_wait'), dblink_exec('s3', 'RESET statement_timeout');

-- Counted races: each round a new key and a free slot, the same request
-- sent at once from two nodes, in autocommit, as a client's retry would
-- be.  Either may come first; in every round exactly one creates and the
-- other replays its card, and the slot has one booking.
CREATE TABLE one_key_rounds (pair text, round int, a_replayed bool, a_error text,
                             b_replayed bool, b_error text, same_card bool);
CREATE FUNCTION one_key_race(pair text, a text, b text, rounds int, room int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  sql text;
  ra record;
  rb record;
BEGIN
  FOR i IN 1 .. rounds LOOP
    sql := format('SELECT card, replayed FROM public.okno_create_booking_result(%s, %L, %L)',
                  20 + i % 3, pair || '-' || i,
                  json_build_object('resource_id', room,
                                    'starts_at', to_char((timestamptz '2031-03-01 00:00+00' + i * interval '1 h')
                                                         AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                    'ends_at', to_char((timestamptz '2031-03-01 00:30+00' + i * interval '1 h')
                                                       AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')));
    PERFORM dblink_send_query(a, sql);
    PERFORM dblink_send_query(b, sql);
    SELECT * INTO ra FROM race.answer(a);
    SELECT * INTO rb FROM race.answer(b);
    INSERT INTO one_key_rounds
      VALUES (pair, i, ra.replayed, ra.error, rb.replayed, rb.error, ra.response = rb.response);
  END LOOP;
END $$;
SELECT one_key_race('coord-w1', 's1', 's2', 30, 22);
SELECT one_key_race('w1-w2', 's2', 's3', 30, 23);
SELECT pair, count(*) AS rounds,
       count(*) FILTER (WHERE a_error IS NULL AND b_error IS NULL) AS both_answered,
       count(*) FILTER (WHERE a_replayed <> b_replayed) AS one_created_one_replayed,
       count(*) FILTER (WHERE same_card) AS same_card
  FROM one_key_rounds GROUP BY pair ORDER BY pair;
-- (any error, to see it in a failure's diff)
SELECT pair, round, a_error, b_error FROM one_key_rounds
 WHERE a_error IS NOT NULL OR b_error IS NOT NULL ORDER BY pair, round;
SELECT resource_id, count(*) AS bookings, count(DISTINCT starts_at) AS slots
  FROM bookings WHERE resource_id IN (22, 23) GROUP BY resource_id ORDER BY resource_id;
SELECT count(*) AS keys_of_the_races
  FROM idempotency WHERE request_key LIKE 'coord-w1-%' OR request_key LIKE 'w1-w2-%';

SELECT dblink_disconnect('s1'), dblink_disconnect('s2'), dblink_disconnect('s3');
DROP FUNCTION one_key_race(text, text, text, int, int);
DROP TABLE one_key_rounds;
DROP SCHEMA race CASCADE;
