-- okno's tables laid out on a Citus cluster the way issue 39 documents,
-- with plain Citus calls, on the coordinator of tools/citus (a coordinator
-- and two workers, okno installed by CREATE EXTENSION on the coordinator).
-- Nothing here calls okno on the distributed tables yet: what each call
-- does on this layout is being worked out (okno's binding refuses it:
-- bookings has no primary key on (id) alone).
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

-- bookings by resource_id: Citus wants the distribution column in every
-- unique and exclusion constraint, so the primary key becomes
-- (resource_id, id); bookings_no_overlap has resource_id WITH = already.
-- The foreign keys go first and come back after: with them, making
-- actors and resources reference tables would add bookings and idempotency
-- to Citus's metadata as local tables, and Citus cannot convert a table
-- with an identity column from there ("cannot complete operation on a
-- table with identity column").  Citus adds a constraint only alone in
-- its ALTER TABLE.
ALTER TABLE bookings DROP CONSTRAINT bookings_actor_id_fkey;
ALTER TABLE bookings DROP CONSTRAINT bookings_resource_id_fkey;
ALTER TABLE idempotency DROP CONSTRAINT idempotency_actor_id_fkey;
ALTER TABLE bookings DROP CONSTRAINT bookings_pkey;
ALTER TABLE bookings ADD CONSTRAINT bookings_pkey PRIMARY KEY (resource_id, id);

SELECT create_reference_table('actors');
SELECT create_reference_table('resources');
SELECT create_distributed_table('bookings', 'resource_id');
SELECT create_distributed_table('idempotency', 'actor_id');
-- outbox by its primary key (id uuid): no other column is in a unique
-- constraint
SELECT create_distributed_table('outbox', 'id');

ALTER TABLE bookings ADD CONSTRAINT bookings_actor_id_fkey FOREIGN KEY (actor_id) REFERENCES actors (id);
ALTER TABLE bookings ADD CONSTRAINT bookings_resource_id_fkey FOREIGN KEY (resource_id) REFERENCES resources (id);
ALTER TABLE idempotency ADD CONSTRAINT idempotency_actor_id_fkey FOREIGN KEY (actor_id) REFERENCES actors (id);

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

-- okno's own tables stay local: on each node its own, none in Citus's
-- metadata
SELECT count(*) AS okno_tables_in_citus
  FROM pg_dist_partition
 WHERE logicalrelid::regclass::text LIKE 'okno\_%';
SELECT success, result
  FROM run_command_on_workers($$SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class
                                WHERE relname LIKE 'okno\_%' AND relkind = 'r'$$)
 ORDER BY nodeport;

-- plain SQL through the layout: rows routed to the shards
INSERT INTO actors (name) VALUES ('alice'), ('bob');
INSERT INTO resources (name) VALUES ('room 1'), ('room 2');
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
VALUES (1, 1, '2030-01-01 10:00+00', '2030-01-01 11:00+00');
-- the exclusion constraint holds within the shard of a resource (the
-- SQLSTATE only: the constraint's name on the shard has the shard's id)
\set VERBOSITY sqlstate
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
VALUES (1, 2, '2030-01-01 10:30+00', '2030-01-01 11:30+00');
\set VERBOSITY default
SELECT resource_id, actor_id, status FROM bookings ORDER BY resource_id;
