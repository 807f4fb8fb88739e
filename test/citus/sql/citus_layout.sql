-- okno's tables laid out on a Citus cluster the way issue 39 documents,
-- by okno_distribute_tables(), on the coordinator of tools/citus (a
-- coordinator and two workers, okno installed by CREATE EXTENSION on the
-- coordinator): its refusals first, each in a transaction rolled back,
-- then the layout, then a second call that finds it done.
SET client_min_messages = warning;

-- Citus on every node: two active workers, each with the metadata
SELECT count(*) AS active_workers
  FROM pg_dist_node
 WHERE noderole = 'primary' AND isactive AND groupid <> 0;
SELECT success, result
  FROM run_command_on_workers($$SELECT count(*) FROM pg_dist_node
                                WHERE hasmetadata AND metadatasynced$$)
 ORDER BY nodeport;

-- okno on every node: Citus propagated CREATE EXTENSION to the workers,
-- with btree_gist, which okno requires
SELECT extname FROM pg_extension WHERE extname IN ('citus', 'okno', 'btree_gist') ORDER BY 1;
SELECT success, result
  FROM run_command_on_workers($$SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension
                                WHERE extname IN ('citus', 'okno', 'btree_gist')$$)
 ORDER BY nodeport;

-- the application's tables, as okno makes them (local to the coordinator)
SELECT * FROM okno_create_tables();

-- okno on the tables while they are local: two actors, two rooms, a
-- booking (its booking_created event), an event with an order key and one
-- without; the layout writes their buckets
INSERT INTO actors (name) VALUES ('alice'), ('bob');
INSERT INTO resources (name) VALUES ('room 1'), ('room 2');
SELECT okno_create_booking(1, 'local-1',
    '{"resource_id":2,"starts_at":"2030-01-02T10:00:00Z","ends_at":"2030-01-02T11:00:00Z"}') ->> 'status' AS status;
SELECT okno_emit('thing', '{}', 'k1') IS NOT NULL AS emitted;
SELECT okno_emit('thing', '{}') IS NOT NULL AS emitted;
SELECT kind, payload, order_key FROM outbox ORDER BY id;

-- Refused before anything changes: okno_distribute_tables() checks every
-- table first.  Each case is made in a transaction that is rolled back.
\set VERBOSITY default
\set SHOW_CONTEXT never
-- tables laid out otherwise: idempotency distributed by request_key,
-- outbox by id
BEGIN;
ALTER TABLE idempotency DROP CONSTRAINT idempotency_actor_id_fkey;
SELECT create_distributed_table('idempotency', 'request_key');
SELECT create_distributed_table('outbox', 'id');
SELECT * FROM okno_distribute_tables();
ROLLBACK;
-- okno's delivery refuses an outbox distributed otherwise, saying what to
-- do, before Citus would refuse its statements
BEGIN;
SELECT create_distributed_table('outbox', 'id');
SELECT * FROM okno_drain(1);
ROLLBACK;
-- tables that cannot be distributed as they are, every problem at once:
-- bookings' primary key neither (id) nor (resource_id, id), outbox's
-- neither (id) nor (bucket, id), a unique index on outbox without bucket,
-- a foreign key from another table onto bookings
BEGIN;
ALTER TABLE bookings DROP CONSTRAINT bookings_pkey, ADD CONSTRAINT bookings_pkey PRIMARY KEY (id, starts_at);
ALTER TABLE outbox DROP CONSTRAINT outbox_pkey, ADD CONSTRAINT outbox_pkey PRIMARY KEY (id, created_at);
CREATE UNIQUE INDEX outbox_kind_once ON outbox (kind, created_at);
CREATE TABLE booking_notes (booking_id bigint, booking_starts timestamptz, note text,
    FOREIGN KEY (booking_id, booking_starts) REFERENCES bookings (id, starts_at));
SELECT * FROM okno_distribute_tables();
ROLLBACK;
-- outbox without order_key (tables not prepared for okno 0.7.0): an
-- event's bucket is a function of its order key
BEGIN;
ALTER TABLE outbox DROP COLUMN order_key;
SELECT * FROM okno_distribute_tables();
ROLLBACK;
-- outbox with a column bucket that is not an integer; and outbox
-- distributed by such a column, which okno would not write
BEGIN;
ALTER TABLE outbox ADD COLUMN bucket text;
SELECT * FROM okno_distribute_tables();
ROLLBACK;
BEGIN;
ALTER TABLE outbox ADD COLUMN bucket text;
UPDATE outbox SET bucket = order_key;
UPDATE outbox SET bucket = 'none' WHERE bucket IS NULL;
ALTER TABLE outbox DROP CONSTRAINT outbox_pkey, ADD CONSTRAINT outbox_pkey PRIMARY KEY (bucket, id);
SELECT create_distributed_table('outbox', 'bucket');
SELECT * FROM okno_distribute_tables();
ROLLBACK;
-- a missing table
BEGIN;
ALTER TABLE outbox RENAME TO outbox_elsewhere;
SELECT * FROM okno_distribute_tables();
ROLLBACK;
-- a caller that is not the tables' owner, a superuser included: it would
-- run the owner's code (a CHECK constraint's function, as Citus copies the
-- rows) with its own rights
BEGIN;
CREATE ROLE regress_okno_citus_owner NOLOGIN;
ALTER TABLE resources OWNER TO regress_okno_citus_owner;
SELECT * FROM okno_distribute_tables();
ROLLBACK;
-- nothing changed: no table in Citus's metadata, bookings' key (id),
-- outbox's key (id) and no column bucket
SELECT count(*) AS tables_in_citus FROM pg_dist_partition;
SELECT conname, pg_get_constraintdef(oid) AS definition
  FROM pg_constraint WHERE conrelid IN ('bookings'::regclass, 'outbox'::regclass) AND contype IN ('p', 'f')
 ORDER BY conname;
SELECT count(*) AS outbox_bucket_columns
  FROM pg_attribute WHERE attrelid = 'outbox'::regclass AND attname = 'bucket' AND NOT attisdropped;

-- The layout README documents, by okno_distribute_tables() (the same
-- steps as the plain Citus calls README gives as the alternative): the
-- foreign keys onto actors and resources dropped, bookings' primary key
-- made (resource_id, id) under its name, actors and resources reference
-- tables, bookings distributed by resource_id, idempotency by actor_id,
-- outbox given its column bucket, each row's written, its primary key made
-- (bucket, id), and outbox distributed by bucket, the foreign keys added
-- again.
SELECT * FROM okno_distribute_tables();
-- a second call: everything is laid out already, nothing changes
SELECT * FROM okno_distribute_tables();
-- Citus copied the rows the tables had into the shards; the copies it
-- left in the tables themselves were removed (citus_contract checks that
-- okno writes none there)
SELECT t AS table_name, pg_relation_size(t::regclass) AS shell_bytes
  FROM unnest(ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox']) AS t
 ORDER BY t;

-- the layout as Citus's metadata has it, on the coordinator and a worker
SELECT table_name, citus_table_type, distribution_column
  FROM citus_tables
 ORDER BY table_name::text;
SELECT logicalrelid::regclass AS table_name, partmethod,
       column_to_column_name(logicalrelid, partkey) AS distribution_column
  FROM pg_dist_partition
 ORDER BY logicalrelid::regclass::text;
SELECT success, result
  FROM run_command_on_workers($$SELECT string_agg(format('%s %s %s', table_name, citus_table_type,
                                distribution_column), '; ' ORDER BY table_name::text) FROM citus_tables$$)
 ORDER BY nodeport;

-- bookings' constraints after the change
SELECT conname, contype, pg_get_constraintdef(oid) AS definition
  FROM pg_constraint
 WHERE conrelid = 'bookings'::regclass
 ORDER BY conname;

-- outbox's column bucket and primary key after the change
SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull
  FROM pg_attribute
 WHERE attrelid = 'outbox'::regclass AND attname = 'bucket';
SELECT conname, contype, pg_get_constraintdef(oid) AS definition
  FROM pg_constraint
 WHERE conrelid = 'outbox'::regclass
 ORDER BY conname;
-- every event written before the layout is in the bucket of its order key
-- (its id as text for an event without one)
SELECT count(*) AS events,
       count(*) FILTER (WHERE bucket IS DISTINCT FROM okno_outbox_bucket(COALESCE(
           CASE WHEN kind = 'booking_created' OR kind = 'booking_cancelled'
                THEN payload ->> 'booking_id' ELSE order_key END, id::text))) AS wrong_bucket
  FROM outbox;

-- okno_purge needs okno's own tables laid out first: a purged key's
-- tombstone must be found from every node
SELECT * FROM okno_purge(interval '30 days', interval '30 days');

-- named subscribers need okno's own tables laid out: refused until then
\set VERBOSITY terse
SELECT okno_subscribe('layout-journal');
\set VERBOSITY default
-- and okno's own tables are not laid out while a subscriber of one
-- server exists (written by hand here), nothing changed
BEGIN;
INSERT INTO okno_subscriber (name, subscribed_at, since, copied_snapshot, copied_system, copied_at)
VALUES ('layout-journal', now(), now(), pg_current_snapshot(), 1, now());
SELECT * FROM okno_distribute_own_tables();
ROLLBACK;

-- okno's own tables of keys: distributed by okno_distribute_own_tables(),
-- by a superuser (they are okno's, owned by the superuser that installed
-- it); a role that is not one is refused before anything changes
CREATE ROLE okno_layout_app;
SET ROLE okno_layout_app;
SELECT * FROM okno_distribute_own_tables();
RESET ROLE;
DROP ROLE okno_layout_app;
-- a key and a tombstone written before: Citus copies them into the shards
INSERT INTO okno_key (operation, scope, request_key, fingerprint, response)
VALUES ('layout', '', 'before', sha256('{}'), '{"before": true}');
INSERT INTO okno_key_tombstone VALUES (sha256(convert_to('layout:expired:', 'UTF8')), now());
SELECT * FROM okno_distribute_own_tables();
-- a second call: nothing changes
SELECT * FROM okno_distribute_own_tables();
SELECT logicalrelid::regclass AS table_name, partmethod,
       column_to_column_name(logicalrelid, partkey) AS distribution_column
  FROM pg_dist_partition
 WHERE logicalrelid::regclass::text LIKE 'okno\_%'
 ORDER BY 1;
SELECT (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'okno_delivery'::regclass)
     = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'outbox'::regclass)
       AS delivery_colocated_with_outbox;
SELECT request_key, response FROM okno_key;
SELECT count(*) AS tombstones FROM okno_key_tombstone;
SELECT t AS table_name, pg_relation_size(t::regclass) AS shell_bytes
  FROM unnest(ARRAY['okno_key', 'okno_key_tombstone', 'okno_purge_horizon', 'okno_subscriber', 'okno_delivery']) AS t
 ORDER BY t;
-- okno's other tables stay each node's own
SELECT success, result
  FROM run_command_on_workers($$SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class AS c
                                WHERE relname LIKE 'okno\_%' AND relkind = 'r' AND relname !~ '_[0-9]+$'
                                  AND NOT EXISTS (SELECT FROM pg_dist_partition AS p
                                                   WHERE p.logicalrelid = c.oid)$$)
 ORDER BY nodeport;

-- plain SQL through the layout: rows routed to the shards
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
VALUES (1, 1, '2030-01-01 10:00+00', '2030-01-01 11:00+00');
-- the exclusion constraint holds within the shard of a resource (the
-- SQLSTATE only: the constraint's name on the shard has the shard's id)
\set VERBOSITY sqlstate
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
VALUES (1, 2, '2030-01-01 10:30+00', '2030-01-01 11:30+00');
\set VERBOSITY default
SELECT resource_id, actor_id, status FROM bookings ORDER BY resource_id;
