--
-- citus_op_keys: okno_idempotent, okno_key_claim and okno_key_store, and
-- key_expired, with okno_key and okno_key_tombstone distributed
-- (okno_distribute_own_tables(), citus_layout), called on the coordinator
-- and on both workers over dblink: a key is the cluster's, one request per
-- key runs, and a retry on any node replays it.  Run last, from the
-- coordinator (a race group, as citus_one_key).  Waits are polled with a
-- deadline.
--
SET client_min_messages = warning;
\i test/citus/races.psql

-- what a handler ran: one row per run that committed, in a distributed
-- table (a handler may write anything the caller may).  PL/pgSQL: a SQL
-- function whose INSERT into a distributed table returns a stable
-- function's value crashes Citus 13.2.2's planner, okno or not.
CREATE TABLE op_runs (k text NOT NULL, n int NOT NULL);
SELECT create_distributed_table('op_runs', 'k', colocate_with => 'none');
CREATE FUNCTION op_run(r jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.op_runs (k, n) VALUES (r ->> 'k', (r ->> 'n')::int);
  RETURN jsonb_build_object('k', r ->> 'k', 'n', (r ->> 'n')::int, 'ran', true);
END $$;

-- a call of okno_idempotent_result, as SQL text
CREATE FUNCTION op_call(k text, n int) RETURNS text
LANGUAGE sql AS $$
  SELECT format('SELECT response, replayed FROM public.okno_idempotent_result(%L, %L, %L, %L, %L)',
                'citus-op', 'tests', k, jsonb_build_object('k', k, 'n', n), 'public.op_run(jsonb)')
$$;

SELECT race.open('s1', 'coordinator'), race.open('s2', 'worker1'), race.open('s3', 'worker2');

-- one key, one node after another: run on worker 1, replayed on worker 2
-- and on the coordinator; another request with the key is key_reused
SELECT response, replayed FROM dblink('s2', op_call('seq', 1)) AS t (response jsonb, replayed bool);
SELECT response, replayed FROM dblink('s3', op_call('seq', 1)) AS t (response jsonb, replayed bool);
SELECT response, replayed FROM dblink('s1', op_call('seq', 1)) AS t (response jsonb, replayed bool);
SELECT dblink_send_query('s3', op_call('seq', 2));
SELECT replayed, error FROM race.answer('s3');
SELECT count(*) AS runs FROM op_runs WHERE k = 'seq';

-- READ COMMITTED, two nodes at once: the second waits for the first's
-- key in its shard, then replays its response; the handler ran once
SELECT dblink_exec('s1', 'BEGIN');
SELECT response FROM dblink('s1', op_call('rc', 1)) AS t (response jsonb, replayed bool);
SELECT dblink_send_query('s2', op_call('rc', 1));
SELECT race.wait_for_waiter();
SELECT dblink_exec('s1', 'COMMIT');
SELECT response, replayed, coalesce(error, 'none') AS error FROM race.answer('s2');
SELECT count(*) AS runs FROM op_runs WHERE k = 'rc';

-- the first rolls back: the second's request is new, and runs
SELECT dblink_exec('s2', 'BEGIN');
SELECT response FROM dblink('s2', op_call('rollback', 1)) AS t (response jsonb, replayed bool);
SELECT dblink_send_query('s3', op_call('rollback', 1));
SELECT race.wait_for_waiter();
SELECT dblink_exec('s2', 'ROLLBACK');
SELECT response, replayed, coalesce(error, 'none') AS error FROM race.answer('s3');
SELECT count(*) AS runs FROM op_runs WHERE k = 'rollback';

-- another request with the key, waiting: key_reused once the first commits
SELECT dblink_exec('s3', 'BEGIN');
SELECT response FROM dblink('s3', op_call('reused', 1)) AS t (response jsonb, replayed bool);
SELECT dblink_send_query('s1', op_call('reused', 2));
SELECT race.wait_for_waiter();
SELECT dblink_exec('s3', 'COMMIT');
SELECT replayed, error FROM race.answer('s1');

-- REPEATABLE READ: the key committed after the waiter's snapshot is
-- concurrent_request (40001); its retry replays
SELECT dblink_exec('s1', 'BEGIN');
SELECT response FROM dblink('s1', op_call('rr', 1)) AS t (response jsonb, replayed bool);
SELECT dblink_exec('s2', 'BEGIN ISOLATION LEVEL REPEATABLE READ');
SELECT count(*) AS s2_sees_the_key
  FROM dblink('s2', $$SELECT 1 FROM public.okno_key WHERE request_key = 'rr'$$) AS t (one int);
SELECT dblink_send_query('s2', op_call('rr', 1));
SELECT race.wait_for_waiter();
SELECT dblink_exec('s1', 'COMMIT');
SELECT replayed, error FROM race.answer('s2');
SELECT dblink_exec('s2', 'ROLLBACK');
SELECT replayed FROM dblink('s2', op_call('rr', 1)) AS t (response jsonb, replayed bool);
SELECT count(*) AS runs FROM op_runs WHERE k = 'rr';

-- okno.key_wait = off on both nodes: the second is refused at once
-- (request_in_progress, the key's lock tried on its shard's node); its
-- retry after the first's commit replays (a deadline on the second, as in
-- citus_one_key)
SELECT dblink_exec('s2', 'BEGIN');
SELECT dblink_exec('s2', 'SET LOCAL okno.key_wait = off');
SELECT response FROM dblink('s2', op_call('nowait', 1)) AS t (response jsonb, replayed bool);
SELECT dblink_exec('s1', 'SET okno.key_wait = off'), dblink_exec('s1', 'SET statement_timeout = ''60s''');
SELECT dblink_send_query('s1', op_call('nowait', 1));
SELECT replayed, error FROM race.answer('s1');
SELECT dblink_exec('s2', 'COMMIT');
SELECT replayed FROM dblink('s1', op_call('nowait', 1)) AS t (response jsonb, replayed bool);
SELECT dblink_exec('s1', 'RESET okno.key_wait'), dblink_exec('s1', 'RESET statement_timeout');
SELECT count(*) AS runs FROM op_runs WHERE k = 'nowait';
-- in autocommit too, the first's lock on its key's shard's node lasts
-- until its statement ends: the first on worker 1 (its key's shard on
-- worker 2), kept in its statement by a lock that a session on worker 1
-- holds; the second, on the coordinator, is refused at once
-- (citus_shards lists no shard of an extension's table)
SELECT c.k AS nowait_key
  FROM (SELECT 'nowait-auto-' || g AS k FROM generate_series(1, 200) AS g) AS c
 WHERE (SELECT pl.groupid FROM pg_dist_placement AS pl
         WHERE pl.shardid = get_shard_id_for_distribution_column('okno_key', c.k)) = 2
 LIMIT 1 \gset
SELECT race.open('s4', 'worker1');
SELECT held FROM dblink('s4', 'SELECT pg_advisory_lock(4243) IS NULL') AS t (held bool);
SELECT dblink_exec('s2', 'SET okno.key_wait = off');
SELECT dblink_send_query('s2', op_call(:'nowait_key', 1) || ' WHERE pg_advisory_lock_shared(4243) IS NOT NULL');
SELECT race.wait_for_waiter();
SELECT dblink_exec('s1', 'SET okno.key_wait = off'), dblink_exec('s1', 'SET statement_timeout = ''60s''');
SELECT dblink_send_query('s1', op_call(:'nowait_key', 1));
SELECT replayed, error FROM race.answer('s1');
SELECT released FROM dblink('s4', 'SELECT pg_advisory_unlock(4243)') AS t (released bool);
SELECT replayed, error FROM race.answer('s2');
SELECT replayed FROM dblink('s1', op_call(:'nowait_key', 1)) AS t (response jsonb, replayed bool);
SELECT dblink_exec('s1', 'RESET okno.key_wait'), dblink_exec('s1', 'RESET statement_timeout');
SELECT dblink_exec('s2', 'RESET okno.key_wait');
SELECT dblink_disconnect('s4');
SELECT count(*) AS runs FROM op_runs WHERE k = :'nowait_key';

-- okno_key_claim and okno_key_store, the caller's own work between them:
-- a claim on worker 2 waits for worker 1's, then returns its stored
-- response
SELECT dblink_exec('s2', 'BEGIN');
SELECT claimed FROM dblink('s2', $$SELECT public.okno_key_claim('citus-claim', 'tests', 'c1', '{"x":1}')$$)
       AS t (claimed jsonb);
SELECT dblink_exec('s2', $$INSERT INTO public.op_runs VALUES ('c1', 1)$$);
SELECT dblink_send_query('s3', $$SELECT public.okno_key_claim('citus-claim', 'tests', 'c1', '{"x":1}'), true$$);
SELECT race.wait_for_waiter();
SELECT stored FROM dblink('s2', $$SELECT public.okno_key_store('citus-claim', 'tests', 'c1', '{"done":1}')$$)
       AS t (stored jsonb);
SELECT dblink_exec('s2', 'COMMIT');
SELECT response, error FROM race.answer('s3');
-- a claim not stored fails the commit, and leaves no key
SELECT dblink_exec('s1', 'BEGIN');
SELECT claimed FROM dblink('s1', $$SELECT public.okno_key_claim('citus-claim', 'tests', 'c2', '{}')$$)
       AS t (claimed jsonb);
SELECT dblink_exec('s1', 'COMMIT');
SELECT count(*) AS keys FROM okno_key WHERE operation = 'citus-claim' AND request_key = 'c2';
-- the key's row is never seen with the claim's placeholder
SELECT count(*) AS placeholders FROM okno_key WHERE response = 'null';

-- a tombstone written on the coordinator expires the key on every node
INSERT INTO okno_key_tombstone
VALUES (sha256(convert_to('citus-op:gone:tests', 'UTF8')), now());
SELECT dblink_send_query('s3', op_call('gone', 1));
SELECT replayed, error FROM race.answer('s3');
SELECT dblink_send_query('s2', op_call('gone', 1));
SELECT replayed, error FROM race.answer('s2');
-- a booking's key too
INSERT INTO okno_key_tombstone VALUES (sha256(convert_to(':expired-booking:1', 'UTF8')), now());
SELECT dblink_send_query('s3', $$SELECT public.okno_create_booking(1, 'expired-booking', '{"resource_id":1,"starts_at":"2031-05-01T10:00:00Z","ends_at":"2031-05-01T11:00:00Z"}'), true$$);
SELECT replayed, error FROM race.answer('s3');
-- and the tombstone citus_layout wrote before the table was distributed
SELECT dblink_send_query('s1', $$SELECT public.okno_idempotent('layout', '', 'expired', '{}', 'public.op_run(jsonb)'), true$$);
SELECT replayed, error FROM race.answer('s1');
SELECT count(*) AS runs FROM op_runs WHERE k = 'gone';

-- okno_emit's order key on two nodes: the second writer of a key waits
-- for the first's transaction (the key's turn, taken on the node of its
-- bucket's shard), so the key's events commit in the order of their ids
SELECT dblink_exec('s1', 'BEGIN');
SELECT id IS NOT NULL AS emitted
  FROM dblink('s1', $$SELECT public.okno_emit('turn.test', '{"n":1}', 'turn-key')$$) AS t (id uuid);
SELECT dblink_send_query('s3', $$SELECT to_jsonb(public.okno_emit('turn.test', '{"n":2}', 'turn-key')), true$$);
SELECT race.wait_for_waiter();
SELECT dblink_exec('s1', 'COMMIT');
SELECT error IS NULL AS emitted FROM race.answer('s3');
SELECT payload ->> 'n' AS n FROM outbox WHERE order_key = 'turn-key' ORDER BY id;
-- in autocommit too, the turn taken on the node of the key's shard is
-- held until the writer's statement ends (Citus sends a read-only
-- statement outside a transaction block unless it locks rows): a writer on
-- worker 1 with a key whose shard is on worker 2, kept in its statement by
-- a lock that a session on worker 1 holds
SELECT c.k AS auto_key
  FROM (SELECT 'turn-auto-' || g AS k FROM generate_series(1, 200) AS g) AS c
 WHERE (SELECT s.nodeport FROM citus_shards AS s
         WHERE s.shardid = get_shard_id_for_distribution_column('outbox', okno_outbox_bucket(c.k)))
       = (SELECT nodeport FROM pg_dist_node WHERE groupid = 2)
 LIMIT 1 \gset
SELECT race.open('s4', 'worker1');
SELECT held FROM dblink('s4', 'SELECT pg_advisory_lock(4242) IS NULL') AS t (held bool);
SELECT dblink_send_query('s2', format($$SELECT to_jsonb(public.okno_emit('turn.test', '{"n":3}', %L)),
                                             pg_advisory_lock_shared(4242) IS NULL$$, :'auto_key'));
SELECT race.wait_for_waiter();
SELECT result::int > 0 AS turn_held_on_shard_node
  FROM run_command_on_workers($$SELECT count(*) FROM pg_locks
                                WHERE locktype = 'advisory' AND objsubid = 1 AND granted$$)
 WHERE nodeport = (SELECT nodeport FROM pg_dist_node WHERE groupid = 2);
SELECT released FROM dblink('s4', 'SELECT pg_advisory_unlock(4242)') AS t (released bool);
SELECT error IS NULL AS emitted FROM race.answer('s2');
SELECT result AS turn_locks_after
  FROM run_command_on_workers($$SELECT count(*) FROM pg_locks
                                WHERE locktype = 'advisory' AND objsubid = 1$$)
 WHERE nodeport = (SELECT nodeport FROM pg_dist_node WHERE groupid = 2);
SELECT dblink_disconnect('s4');

-- races: both requests of a key sent at once, 30 rounds coordinator vs
-- worker 1 and 30 worker 1 vs worker 2: one ran and one replayed, the
-- same response, one run per key
CREATE TABLE op_rounds (pair text, round int, a_replayed bool, a_error text,
                        b_replayed bool, b_error text, same_response bool);
CREATE FUNCTION op_race(pair text, a text, b text, rounds int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  ra record;
  rb record;
BEGIN
  FOR i IN 1 .. rounds LOOP
    PERFORM dblink_send_query(a, public.op_call(pair || '-' || i, i));
    PERFORM dblink_send_query(b, public.op_call(pair || '-' || i, i));
    SELECT * INTO ra FROM race.answer(a);
    SELECT * INTO rb FROM race.answer(b);
    INSERT INTO public.op_rounds
      VALUES (pair, i, ra.replayed, ra.error, rb.replayed, rb.error, ra.response = rb.response);
  END LOOP;
END $$;
SELECT op_race('coord-w1', 's1', 's2', 30);
SELECT op_race('w1-w2', 's2', 's3', 30);
SELECT pair, count(*) AS rounds,
       count(*) FILTER (WHERE a_error IS NULL AND b_error IS NULL) AS both_answered,
       count(*) FILTER (WHERE a_replayed <> b_replayed) AS one_ran_one_replayed,
       count(*) FILTER (WHERE same_response) AS same_response
  FROM op_rounds GROUP BY pair ORDER BY pair;
-- (what went wrong, if anything did)
SELECT pair, round, a_error, b_error FROM op_rounds
 WHERE a_error IS NOT NULL OR b_error IS NOT NULL ORDER BY pair, round;
SELECT count(*) AS keys_raced, count(DISTINCT k) AS distinct_keys
  FROM op_runs WHERE k LIKE 'coord-w1-%' OR k LIKE 'w1-w2-%';

-- okno read and wrote no shell of its own tables on any node
SELECT count(*) AS nodes, count(*) FILTER (WHERE result = '0') AS shells_empty
  FROM run_command_on_all_nodes($$SELECT pg_relation_size('public.okno_key') + pg_relation_size('public.okno_key_tombstone')$$);

SELECT dblink_disconnect('s1'), dblink_disconnect('s2'), dblink_disconnect('s3');
DROP FUNCTION op_race(text, text, text, int);
DROP TABLE op_rounds;
DROP FUNCTION op_call(text, int);
DROP SCHEMA race CASCADE;
DROP FUNCTION op_run(jsonb);
DROP TABLE op_runs;
