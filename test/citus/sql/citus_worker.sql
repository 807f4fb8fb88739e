-- The cluster as a worker sees it, after citus_layout laid the tables out
-- on the coordinator (tools/citus runs this suite on a worker).
SET client_min_messages = warning;

-- Citus's metadata is on this node: the coordinator and two workers
SELECT count(*) AS active_workers
  FROM pg_dist_node
 WHERE noderole = 'primary' AND isactive AND groupid <> 0;
SELECT bool_and(hasmetadata AND metadatasynced) AS synced
  FROM pg_dist_node
 WHERE groupid <> 0;

-- okno is installed here too
SELECT extname FROM pg_extension WHERE extname IN ('citus', 'okno', 'btree_gist') ORDER BY 1;

-- the layout, as this node's metadata has it
SELECT table_name, citus_table_type, distribution_column
  FROM citus_tables
 ORDER BY table_name::text;

-- okno_distribute_tables() runs on the coordinator only
\set SHOW_CONTEXT never
SELECT * FROM okno_distribute_tables();

-- okno's own tables are this node's own
SELECT relname
  FROM pg_class
 WHERE relname LIKE 'okno\_%' AND relkind = 'r'
 ORDER BY relname;
-- okno's tables of keys are distributed (citus_layout), the others not
SELECT logicalrelid::regclass AS okno_table_in_citus
  FROM pg_dist_partition
 WHERE logicalrelid::regclass::text LIKE 'okno\_%'
 ORDER BY 1;

-- distributed queries from the worker: the coordinator's rows
SELECT resource_id, actor_id, status FROM bookings ORDER BY resource_id, actor_id, status, starts_at;
SELECT count(*) AS actors FROM actors;
