--
-- citus_schema: schema mode (README, "Scaling out with Citus"), in a
-- database of its own (tools/citus makes it another cluster of the same
-- servers).  okno's schema is a distributed schema (schema-based
-- sharding): made one before CREATE EXTENSION, its tables created by the
-- course's migrations, so all five lie in one shard each, colocated on one
-- worker.  Bookings, their replay and errors, operations' keys and the
-- default subscriber's delivery work there as on one server, called on
-- the coordinator and on both workers.  Waits are polled with a deadline.
--
SET client_min_messages = warning;
\set VERBOSITY terse
CREATE EXTENSION dblink;

-- okno's schema a distributed schema: made so before okno is installed in
-- it (Citus refuses to distribute an extension's schema afterwards)
CREATE SCHEMA booking;
SELECT citus_schema_distribute('booking');
CREATE EXTENSION okno SCHEMA booking CASCADE;
SELECT schema_name FROM citus_schemas;
SET search_path = booking, public;

-- okno_create_tables() would create its tables inside a function, which
-- Citus does not make a distributed schema's tables (they would stay this
-- node's own): refused, nothing created
SELECT count(*) AS created FROM okno_create_tables();
SELECT count(*) AS tables_made FROM pg_class
 WHERE relnamespace = 'booking'::regnamespace
   AND relname IN ('actors', 'resources', 'bookings', 'idempotency', 'outbox');

-- the course's migrations, run as they are (top-level CREATE TABLEs), make
-- the five the schema's, in one colocation group on one node
\i test/course/migrations/001_actors_resources.sql
\i test/course/migrations/002_bookings.sql
\i test/course/migrations/003_idempotency.sql
\i test/course/migrations/005_outbox.sql
SELECT table_name, citus_table_type FROM citus_tables ORDER BY table_name::text;
SELECT count(DISTINCT nodeport) AS nodes, count(*) AS shards FROM citus_shards;
SELECT count(*) AS changes FROM okno_prepare_tables();

INSERT INTO actors (id, name) VALUES (1, 'alice'), (2, 'bob');
INSERT INTO resources (id, name) VALUES (1, 'room 1'), (2, 'room 2');

-- sessions on each node: the coordinator, the worker that holds the
-- schema's shards, the other worker
CREATE FUNCTION schema_open(name text, here bool) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  conn text;
BEGIN
  SELECT format('host=%s port=%s dbname=%s', n.nodename, n.nodeport, current_database())
    INTO STRICT conn
    FROM pg_dist_node AS n
   WHERE n.noderole = 'primary' AND n.groupid <> 0
     AND (n.nodeport IN (SELECT s.nodeport FROM citus_shards AS s
                          WHERE s.table_name = 'booking.outbox'::regclass)) = here;
  PERFORM dblink_connect(name, conn);
  PERFORM dblink_exec(name, 'SET search_path = booking, public');
END $$;
SELECT schema_open('shard', true), schema_open('other', false);

-- bookings: created, replayed, and every error, on each node
\set p '{"resource_id":1,"starts_at":"2031-01-01T10:00:00Z","ends_at":"2031-01-01T11:00:00Z"}'
SELECT okno_create_booking(1, 's-1', :'p') ->> 'status' AS coordinator;
SELECT replayed FROM okno_create_booking_result(1, 's-1', :'p');
SELECT r FROM dblink('shard', format('SELECT (okno_create_booking_result(1, %L, %L)).replayed', 's-1', :'p'))
       AS t (r bool);
SELECT r FROM dblink('other', format('SELECT (okno_create_booking_result(1, %L, %L)).replayed', 's-1', :'p'))
       AS t (r bool);
SELECT okno_create_booking(1, 's-1', '{"resource_id":2,"starts_at":"2031-01-01T10:00:00Z","ends_at":"2031-01-01T11:00:00Z"}');
SELECT okno_create_booking(2, 's-2', :'p');
SELECT okno_create_booking(9, 's-3', :'p');
SELECT okno_create_booking(1, 's-4', '{"resource_id":9,"starts_at":"2031-01-01T10:00:00Z","ends_at":"2031-01-01T11:00:00Z"}');
SELECT s FROM dblink('shard', $$SELECT okno_create_booking(2, 'w-1', '{"resource_id":2,"starts_at":"2031-01-02T10:00:00Z","ends_at":"2031-01-02T11:00:00Z"}') ->> 'status'$$)
       AS t (s text);
SELECT s FROM dblink('other', $$SELECT okno_create_booking(2, 'w-2', '{"resource_id":2,"starts_at":"2031-01-03T10:00:00Z","ends_at":"2031-01-03T11:00:00Z"}') ->> 'status'$$)
       AS t (s text);
SELECT id AS w1 FROM bookings WHERE actor_id = 2 ORDER BY id LIMIT 1 \gset
SELECT okno_cancel_booking(2, :w1) ->> 'status' AS cancelled;
SELECT okno_get_booking(2, :w1) ->> 'status' AS got;
SELECT status, count(*) FROM bookings GROUP BY status ORDER BY status;

-- an operation's key (okno_key is each node's own here: README)
CREATE FUNCTION schema_handler(r jsonb) RETURNS jsonb
LANGUAGE sql AS $$ SELECT jsonb_build_object('done', r) $$;
SELECT okno_idempotent('schema-op', 't', 'k1', '{"a":1}', 'schema_handler(jsonb)');
SELECT replayed FROM okno_idempotent_result('schema-op', 't', 'k1', '{"a":1}', 'schema_handler(jsonb)');

-- the default subscriber's delivery: events of four keys written on each
-- node, drained in batches on the coordinator, each once, every key's in
-- order
SELECT count(okno_emit('schema.test', jsonb_build_object('n', g), 'k' || g % 4)) AS emitted
  FROM generate_series(1, 12) AS g;
SELECT n FROM dblink('shard', $$SELECT count(okno_emit('schema.test', jsonb_build_object('n', g), 'k' || g % 4))
                                 FROM generate_series(13, 20) AS g$$) AS t (n bigint);
SELECT n FROM dblink('other', $$SELECT count(okno_emit('schema.test', jsonb_build_object('n', g), 'k' || g % 4))
                                 FROM generate_series(21, 28) AS g$$) AS t (n bigint);
SELECT pending, due_now, held_back, parked FROM okno_outbox_status;
SELECT subscriber, pending, due_now, held_back FROM okno_subscribers;
CALL okno_wait(0, NULL);
-- a batch rolled back is handed out again
BEGIN;
SELECT count(*) AS drained_then_rolled_back FROM okno_drain(10);
ROLLBACK;
SELECT count(*) AS once FROM okno_drain_once();
CREATE TABLE schema_handed (batch int, event_id uuid, kind text, payload jsonb);
DO $$
DECLARE
  b int := 0;
BEGIN
  LOOP
    b := b + 1;
    INSERT INTO schema_handed SELECT b, d.event_id, d.kind, d.payload FROM okno_drain(5) AS d;
    EXIT WHEN NOT FOUND OR b > 100;
    COMMIT;
  END LOOP;
END $$;
-- every event handed out once (the one of okno_drain_once before), none
-- left, each key's in the order written
SELECT count(*) AS handed, count(DISTINCT event_id) AS distinct_events FROM schema_handed;
SELECT count(*) AS out_of_order
  FROM (SELECT payload ->> 'n' AS n, (payload ->> 'n')::int % 4 AS k,
               lag((payload ->> 'n')::int) OVER (PARTITION BY (payload ->> 'n')::int % 4
                                                 ORDER BY batch, event_id) AS before
          FROM schema_handed WHERE kind = 'schema.test') AS x
 WHERE before > n::int;
SELECT pending, due_now, held_back FROM okno_outbox_status;
CALL okno_wait(0, NULL);
-- drains on the workers: on the one that holds the shard, Citus runs the
-- statements there; on the other, it sends them there
SELECT count(okno_emit('schema.worker', jsonb_build_object('n', g))) AS emitted
  FROM generate_series(1, 6) AS g;
SELECT n FROM dblink('shard', 'SELECT count(*) FROM okno_drain(3)') AS t (n bigint);
SELECT n FROM dblink('other', 'SELECT count(*) FROM okno_drain(10)') AS t (n bigint);
SELECT pending FROM okno_outbox_status;

-- a failure, parked, requeued in bulk, drained; released; discarded
SELECT okno_emit('schema.fail', '{"n":1}') AS ev \gset
BEGIN;
SELECT count(*) FROM okno_drain(10);
SELECT attempts, parked_at IS NOT NULL AS parked FROM okno_record_failure(:'ev', 'boom');
COMMIT;
UPDATE outbox SET parked_at = now(), available_at = NULL WHERE id = :'ev';
SELECT parked FROM okno_outbox_status;
SELECT okno_requeue_parked() AS requeued;
SELECT count(*) AS drained FROM okno_drain(10);
SELECT okno_release(:'ev') AS released;
SELECT count(*) AS drained_again FROM okno_drain(10);
UPDATE outbox SET parked_at = now(), delivered_at = NULL WHERE id = :'ev';
SELECT okno_discard(:'ev', 'default') AS discarded;
SELECT pending, parked FROM okno_outbox_status;

-- okno_verify: nothing wrong; a lost key found
SELECT * FROM okno_verify();
DELETE FROM idempotency WHERE actor_id = 1 AND request_key = 's-1';
SELECT * FROM okno_verify();

-- okno_purge: a key forgotten in two purges, as in row mode (its row in
-- the schema's shard, its tombstone in this node's own okno_key_tombstone)
UPDATE idempotency SET created_at = now() - interval '60 days'
 WHERE actor_id = 2 AND request_key = 'w-1';
UPDATE bookings SET created_at = now() - interval '60 days'
 WHERE actor_id = 2 AND starts_at = '2031-01-02T10:00:00Z';
SELECT * FROM okno_purge(interval '30 days', interval '30 days');
SELECT count(*) AS keys_left FROM idempotency WHERE actor_id = 2 AND request_key = 'w-1';
SELECT count(*) AS pending FROM okno_key_tombstone WHERE expired_at = 'infinity';
SELECT * FROM okno_purge(interval '30 days', interval '30 days');
SELECT count(*) AS keys_left FROM idempotency WHERE actor_id = 2 AND request_key = 'w-1';
SELECT count(*) AS pending FROM okno_key_tombstone WHERE expired_at = 'infinity';
SELECT okno_create_booking(2, 'w-1', '{"resource_id":2,"starts_at":"2031-01-02T10:00:00Z","ends_at":"2031-01-02T11:00:00Z"}');
SELECT * FROM okno_verify() WHERE detail LIKE '% of actor 2';

-- not served here yet, refused with one error: named subscribers, and
-- okno's own tables laid out for them (okno_delivery goes with an outbox
-- distributed by bucket; here it is the schema's, in one shard)
SELECT okno_subscribe('journal');
\set VERBOSITY default
SELECT * FROM okno_distribute_own_tables();
\set VERBOSITY terse

-- okno read and wrote no shell: the rows are in the shards
SELECT c.relname, pg_relation_size(c.oid) AS shell_bytes
  FROM pg_class AS c
 WHERE c.relname IN ('actors', 'resources', 'bookings', 'idempotency', 'outbox')
   AND c.relnamespace = 'booking'::regnamespace
 ORDER BY c.relname;

SELECT dblink_disconnect('shard'), dblink_disconnect('other');
