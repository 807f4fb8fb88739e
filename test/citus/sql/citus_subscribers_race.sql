-- Subscribing against writers on a cluster (outbox/fan_out.c): a writer
-- reads the subscribers' list on its node after its key's turn, in the
-- latest snapshot, holding the list's ROW SHARE lock on its node from the
-- start of its call; okno_subscribe and okno_unsubscribe lock the list on
-- every node (EXCLUSIVE).  So a subscription waits for the writers open on
-- any node and writers wait for it, and a REPEATABLE READ writer still
-- sees a subscription committed after its snapshot.  Sessions are dblink
-- connections from here (the coordinator) to the coordinator and the
-- workers; a wait is a condition polled with a deadline.
SET client_min_messages = warning;
\i test/citus/races.psql

SELECT race.open('s1', 'worker1'), race.open('s2', 'coordinator'),
       race.open('s3', 'worker2');

-- the answer of a call sent with dblink_send_query, one boolean (or its
-- error's message)
CREATE FUNCTION race.answer_bool(name text, OUT answer bool, OUT error text)
LANGUAGE plpgsql AS $$
BEGIN
  SELECT r.answer INTO answer FROM dblink_get_result(name, false) AS r (answer bool);
  IF answer IS NULL THEN
    error := dblink_error_message(name);
  END IF;
  PERFORM * FROM dblink_get_result(name, false) AS r (answer bool);
END $$;

-- the subscribers that have a row of event id
CREATE FUNCTION race.rows_of(id uuid) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT coalesce(string_agg(d.subscriber, ',' ORDER BY d.subscriber), '(none)')
            FROM public.okno_delivery AS d WHERE d.event_id = id);
END $$;

SELECT okno_subscribe('race-0') AS subscribed;

-- A REPEATABLE READ writer whose snapshot predates a subscription writes
-- the new subscriber's row too: the list is read in the latest snapshot
SELECT dblink_exec('s1', 'BEGIN ISOLATION LEVEL REPEATABLE READ');
SELECT * FROM dblink('s1', 'SELECT count(*) FROM public.okno_subscriber') AS r (subscribers bigint);
SELECT okno_subscribe('race-rr') AS subscribed;
SELECT id AS rr_event
  FROM dblink('s1', $$SELECT public.okno_emit('race.rr', '{}', 'race-k1')$$) AS r (id uuid) \gset
SELECT dblink_exec('s1', 'COMMIT');
SELECT race.rows_of(:'rr_event') AS rr_rows;

-- A subscription waits for a writer open on another node; that writer's
-- event is not the subscriber's (written before it), the next one is
SELECT dblink_exec('s1', 'BEGIN');
SELECT id AS before_event
  FROM dblink('s1', $$SELECT public.okno_emit('race.sub', '{}', 'race-k2')$$) AS r (id uuid) \gset
SELECT dblink_send_query('s2', $$SELECT public.okno_subscribe('race-late')$$);
SELECT race.wait_for_waiter();
SELECT dblink_exec('s1', 'COMMIT');
SELECT * FROM race.answer_bool('s2');
SELECT race.rows_of(:'before_event') AS before_rows;
SELECT id AS after_event
  FROM dblink('s3', $$SELECT public.okno_emit('race.sub', '{}', 'race-k2')$$) AS r (id uuid) \gset
SELECT race.rows_of(:'after_event') AS after_rows;

-- A writer waits for a subscription open on another node, then writes the
-- new subscriber's row
SELECT dblink_exec('s2', 'BEGIN');
SELECT * FROM dblink('s2', $$SELECT public.okno_subscribe('race-open')$$) AS r (subscribed bool);
SELECT dblink_send_query('s3', $$SELECT public.okno_emit('race.sub', '{}', 'race-k3')$$);
SELECT race.wait_for_waiter();
SELECT dblink_exec('s2', 'COMMIT');
SELECT id AS waited_event FROM dblink_get_result('s3', false) AS r (id uuid) \gset
SELECT count(*) AS end_of_result FROM dblink_get_result('s3', false) AS r (id uuid);
SELECT race.rows_of(:'waited_event') AS waited_rows;

-- okno_unsubscribe waits for an open writer too; subscribing the name
-- again starts with no row of the old subscription's
SELECT dblink_exec('s1', 'BEGIN');
SELECT * FROM dblink('s1', $$SELECT public.okno_emit('race.sub', '{}', 'race-k4') IS NOT NULL$$) AS r (emitted bool);
SELECT dblink_send_query('s2', $$SELECT public.okno_unsubscribe('race-late')$$);
SELECT race.wait_for_waiter();
SELECT dblink_exec('s1', 'COMMIT');
SELECT * FROM race.answer_bool('s2');
SELECT okno_subscribe('race-late') AS subscribed_again;
SELECT count(*) AS rows_of_the_old_subscription
  FROM okno_delivery WHERE subscriber = 'race-late';

-- each written event's rows, by subscriber
SELECT d.subscriber, count(*) AS rows_written
  FROM okno_delivery AS d
  JOIN outbox AS e ON e.bucket = d.bucket AND e.id = d.event_id
 WHERE e.kind LIKE 'race.%'
 GROUP BY d.subscriber ORDER BY d.subscriber;

SELECT okno_unsubscribe(s) FROM unnest(ARRAY['race-0', 'race-rr', 'race-late', 'race-open']) AS s;
SELECT count(*) AS rows_left FROM okno_delivery WHERE subscriber LIKE 'race-%';
SELECT dblink_disconnect('s1'), dblink_disconnect('s2'), dblink_disconnect('s3');
DROP SCHEMA race CASCADE;
