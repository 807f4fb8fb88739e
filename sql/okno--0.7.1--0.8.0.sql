/* okno--0.7.1--0.8.0.sql: okno_distribute_tables(), okno_distribute_own_tables(), okno_outbox_bucket() and okno_delivery.bucket, okno's tables on a Citus cluster */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.8.0'" to load this file. \quit

-- Functions, granted to PUBLIC as every function is (pure or SECURITY
-- INVOKER), and a column of okno's own okno_delivery (at the end); the
-- application's tables are neither read nor altered by the update.

-- Where Citus distributes outbox, it is by an integer column bucket, a
-- function of the event's order key (its id as text for an event without
-- one), so that one key's events lie in one shard: okno writes it for its
-- own events, an application that writes outbox rows itself writes
-- okno_outbox_bucket(COALESCE(order key, id::text)).

CREATE FUNCTION @extschema@.okno_outbox_bucket(order_key text)
RETURNS integer
AS 'MODULE_PATHNAME', 'okno_outbox_bucket'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_outbox_bucket(text) IS
'the outbox bucket (0 to 1023) of an order key: where Citus distributes outbox by bucket, an event''s is that of COALESCE(its order key, its id as text)';

-- okno_distribute_tables() lays the five tables out on a Citus cluster,
-- on the coordinator, as README's "Scaling out with Citus" shows:
-- actors and resources reference tables, bookings distributed by
-- resource_id (its primary key becomes (resource_id, id)), idempotency by
-- actor_id, outbox by bucket, a function of the event's order key, so that
-- one key's events lie in one shard (outbox gets the integer column bucket
-- where it lacks it, each row its bucket, and its primary key (id) becomes
-- (bucket, id)).  PL/pgSQL, SECURITY INVOKER like the two above: Citus's
-- functions and the ALTER TABLEs run with the caller's rights, in the
-- caller's transaction.  It checks every table first and changes nothing
-- while one cannot be laid out; a table already laid out so is left as it
-- is.  okno's own tables stay each node's own.
CREATE FUNCTION @extschema@.okno_distribute_tables()
RETURNS TABLE (table_name text, layout text, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $okno$
#variable_conflict use_column
DECLARE
    -- the five tables in the order they are laid out, and the column each
    -- is distributed by (NULL: a reference table)
    names pg_catalog.text[] := ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'];
    -- >>> the outbox's distribution column: this line is the only place
    -- that names it (outbox's checks and its step below take it from here)
    columns pg_catalog.text[] := ARRAY[NULL, NULL, 'resource_id', 'actor_id', 'bucket'];
    -- <<<
    schema_oid pg_catalog.oid;
    schema_name pg_catalog.text;
    rels pg_catalog.oid[] := '{}';
    wants pg_catalog.text[] := '{}';
    todo pg_catalog.bool[] := '{}';
    missing pg_catalog.text[] := '{}';
    problems pg_catalog.text[] := '{}';
    fkey_tables pg_catalog.text[] := '{}';   -- the foreign keys dropped and added again:
    fkey_names pg_catalog.text[] := '{}';    -- table, name and definition
    fkey_defs pg_catalog.text[] := '{}';
    rel pg_catalog.oid;
    qname pg_catalog.text;
    cur pg_catalog.text;
    want pg_catalog.text;
    kind "char";
    pkey_cols pg_catalog.text[];
    pkey_name pg_catalog.text;
    id_pkeys pg_catalog.text[] := '{}';      -- a table's primary key on (id) alone, by name,
                                             -- to become (its distribution column, id)
    has_bucket boolean;                      -- whether outbox has the column columns[5],
    bucket_unfit pg_catalog.text;            -- and what keeps that from serving
    bucket_expr pg_catalog.text;             -- an event's bucket, in SQL
    r record;
    i integer;
    any_todo boolean := false;
    mode pg_catalog.text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) 'citus') THEN
        RAISE EXCEPTION 'okno_distribute_tables() needs Citus'
            USING ERRCODE = '0A000',
                  DETAIL = pg_catalog.format('The extension citus is not installed in database %I.',
                                             pg_catalog.current_database()),
                  HINT = 'Load Citus on every node (shared_preload_libraries = citus), run CREATE EXTENSION citus '
                         'in this database on the coordinator and add the workers, then call okno_distribute_tables() there.';
    END IF;
    IF NOT pg_catalog.citus_is_coordinator() THEN
        RAISE EXCEPTION 'okno_distribute_tables() runs on the Citus coordinator only'
            USING ERRCODE = '0A000',
                  DETAIL = 'This node is not the coordinator of its Citus cluster: only the coordinator distributes tables.',
                  HINT = 'Connect to the coordinator and call okno_distribute_tables() there.';
    END IF;

    SELECT n.oid, n.nspname INTO schema_oid, schema_name
      FROM pg_catalog.pg_extension AS e
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
     WHERE e.extname OPERATOR(pg_catalog.=) 'okno';

    -- the tables, and what Citus has of each
    FOR i IN 1 .. 5 LOOP
        SELECT c.oid, c.relkind INTO rel, kind
          FROM pg_catalog.pg_class AS c
         WHERE c.relname OPERATOR(pg_catalog.=) names[i] AND c.relnamespace OPERATOR(pg_catalog.=) schema_oid;
        IF rel IS NULL THEN
            missing := missing || pg_catalog.format('%s: missing', names[i]);
        ELSIF kind NOT IN ('r', 'p') THEN
            missing := missing || pg_catalog.format('%s: not a table (relkind %s)', names[i], kind);
        END IF;
        rels := rels || rel;
        want := CASE WHEN columns[i] IS NULL THEN 'reference table'
                     ELSE pg_catalog.format('distributed by %s', columns[i]) END;
        wants := wants || want;
        SELECT CASE WHEN p.partmethod OPERATOR(pg_catalog.=) 'h'
                    THEN pg_catalog.format('distributed by %s',
                                           pg_catalog.column_to_column_name(p.logicalrelid, p.partkey))
                    WHEN p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.repmodel OPERATOR(pg_catalog.=) 't'
                    THEN 'reference table'
                    WHEN p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.colocationid OPERATOR(pg_catalog.=) 0
                    THEN 'a Citus local table'
                    WHEN p.partmethod OPERATOR(pg_catalog.=) 'n'
                    THEN 'a single-shard distributed table'
                    ELSE pg_catalog.format('distributed by %s (partition method %s)',
                                           pg_catalog.column_to_column_name(p.logicalrelid, p.partkey), p.partmethod)
               END INTO cur
          FROM pg_catalog.pg_dist_partition AS p
         WHERE p.logicalrelid OPERATOR(pg_catalog.=) rel;
        todo := todo || (rel IS NOT NULL AND cur IS NULL);
        IF rel IS NOT NULL AND cur IS NULL THEN
            any_todo := true;
        ELSIF cur IS NOT NULL AND cur OPERATOR(pg_catalog.<>) want THEN
            problems := problems || pg_catalog.format(
                '%s is %s, where okno''s layout has it %s; fix: SELECT undistribute_table(%L), then call okno_distribute_tables() again',
                names[i], CASE WHEN cur OPERATOR(pg_catalog.=) 'reference table' THEN 'a reference table' ELSE cur END,
                CASE WHEN columns[i] IS NULL THEN 'a ' || want ELSE want END,
                pg_catalog.format('%I.%I', schema_name, names[i]));
        END IF;
        cur := NULL;
        rel := NULL;
    END LOOP;

    IF pg_catalog.cardinality(missing) OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'okno''s tables in schema % cannot be distributed', pg_catalog.quote_ident(schema_name)
            USING ERRCODE = 'OKB10',
                  DETAIL = pg_catalog.array_to_string(missing, E'\n'),
                  HINT = 'Create the missing tables with SELECT okno_create_tables(), as the role that is to own them, '
                         'then call okno_distribute_tables() again.';
    END IF;

    -- outbox's column bucket, where it has one already, is a plain
    -- integer: okno writes each event's where Citus distributes outbox by
    -- it, and its rows' are written here before Citus copies them
    qname := pg_catalog.format('%I.%I', schema_name, names[5]);
    SELECT true,
           CASE WHEN a.attgenerated OPERATOR(pg_catalog.<>) '' THEN 'a generated column'
                WHEN a.attidentity OPERATOR(pg_catalog.<>) '' THEN 'an identity column'
                WHEN a.atttypid OPERATOR(pg_catalog.<>) 'pg_catalog.int4'::pg_catalog.regtype::pg_catalog.oid
                THEN pg_catalog.format('of type %s', pg_catalog.format_type(a.atttypid, a.atttypmod))
           END
      INTO has_bucket, bucket_unfit
      FROM pg_catalog.pg_attribute AS a
     WHERE a.attrelid OPERATOR(pg_catalog.=) rels[5] AND a.attname OPERATOR(pg_catalog.=) columns[5]
       AND NOT a.attisdropped;
    has_bucket := COALESCE(has_bucket, false);
    IF bucket_unfit IS NOT NULL THEN
        problems := problems || pg_catalog.format(
            'outbox''s column %s is %s, where okno''s layout has it a plain integer; fix: %sALTER TABLE %s DROP COLUMN %I (okno_distribute_tables() adds it)',
            columns[5], bucket_unfit,
            CASE WHEN todo[5] THEN '' ELSE pg_catalog.format('SELECT undistribute_table(%L), then ', qname) END,
            qname, columns[5]);
    END IF;

    -- what a table to be distributed must be: its unique constraints and
    -- indexes hold its distribution column (bookings' primary key (id)
    -- becomes (resource_id, id) here, outbox's (bucket, id)), its primary
    -- key is what okno's calls look rows up by, and no foreign key points
    -- at it; outbox has order_key, of which an event's bucket is a function
    FOR i IN 1 .. 5 LOOP
        CONTINUE WHEN NOT todo[i];
        qname := pg_catalog.format('%I.%I', schema_name, names[i]);
        -- the owner itself, not a role that may act as it: a superuser's
        -- call would otherwise run the owner's code as a superuser (a CHECK
        -- constraint's function, evaluated as Citus copies the rows into
        -- the shards)
        IF (SELECT c.relowner FROM pg_catalog.pg_class AS c
             WHERE c.oid OPERATOR(pg_catalog.=) rels[i])
           OPERATOR(pg_catalog.<>) (SELECT r.oid FROM pg_catalog.pg_roles AS r
                                     WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
            RAISE EXCEPTION 'okno_distribute_tables() must be called by the owner of table %', names[i]
                USING ERRCODE = '42501',
                      DETAIL = pg_catalog.format('Table %s is owned by role %s; okno_distribute_tables() runs with the caller''s rights (SECURITY INVOKER) and changes nothing until it may change every table it has to as their owner.',
                                                 qname, (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class AS c
                                                          WHERE c.oid OPERATOR(pg_catalog.=) rels[i])),
                      HINT = 'Call it as the owner of okno''s tables (SET ROLE to it first, as a superuser).';
        END IF;
        CONTINUE WHEN columns[i] IS NULL;
        SELECT pg_catalog.array_agg(a.attname::pg_catalog.text ORDER BY a.attname), k.conname
          INTO pkey_cols, pkey_name
          FROM pg_catalog.pg_constraint AS k
          JOIN pg_catalog.pg_attribute AS a
            ON a.attrelid OPERATOR(pg_catalog.=) k.conrelid AND a.attnum OPERATOR(pg_catalog.=) ANY (k.conkey)
         WHERE k.conrelid OPERATOR(pg_catalog.=) rels[i] AND k.contype OPERATOR(pg_catalog.=) 'p'
         GROUP BY k.conname;
        IF pkey_cols OPERATOR(pg_catalog.=) ARRAY['id'] THEN
            id_pkeys[i] := pkey_name;
        END IF;
        IF names[i] OPERATOR(pg_catalog.=) 'bookings'
           AND (pkey_cols IS NULL OR pkey_cols NOT IN (ARRAY['id'], ARRAY['id', 'resource_id'])) THEN
            problems := problems || pg_catalog.format(
                'bookings'' primary key is %s, neither (id) nor (resource_id, id); fix: ALTER TABLE %s DROP CONSTRAINT ..., ADD PRIMARY KEY (resource_id, id)',
                COALESCE('(' || pg_catalog.array_to_string(pkey_cols, ', ') || ')', 'missing'), qname);
        ELSIF names[i] OPERATOR(pg_catalog.=) 'idempotency'
           AND (pkey_cols IS NULL OR pkey_cols OPERATOR(pg_catalog.<>) ARRAY['actor_id', 'request_key']) THEN
            problems := problems || pg_catalog.format(
                'idempotency''s primary key is %s, not (actor_id, request_key); fix: ALTER TABLE %s DROP CONSTRAINT ..., ADD PRIMARY KEY (actor_id, request_key)',
                COALESCE('(' || pg_catalog.array_to_string(pkey_cols, ', ') || ')', 'missing'), qname);
        ELSIF names[i] OPERATOR(pg_catalog.=) 'outbox' THEN
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                            WHERE a.attrelid OPERATOR(pg_catalog.=) rels[i]
                              AND a.attname OPERATOR(pg_catalog.=) 'order_key' AND NOT a.attisdropped) THEN
                problems := problems || pg_catalog.format(
                    'outbox has no column order_key (tables prepared for okno 0.7.0 or later have it), of which an event''s %s is a function; fix: SELECT * FROM okno_prepare_tables()',
                    columns[i]);
            END IF;
            -- (pkey_cols is in name order: either order of the two)
            IF pkey_cols IS NULL OR pkey_cols NOT IN (ARRAY['id'], ARRAY[columns[i], 'id'], ARRAY['id', columns[i]]) THEN
                problems := problems || pg_catalog.format(
                    'outbox''s primary key is %s, neither (id) nor (%s, id); fix: ALTER TABLE %s DROP CONSTRAINT ..., ADD PRIMARY KEY (id)',
                    COALESCE('(' || pg_catalog.array_to_string(pkey_cols, ', ') || ')', 'missing'), columns[i], qname);
            END IF;
        END IF;
        -- every other unique or exclusion index holds the distribution
        -- column (the primary keys of bookings and outbox are checked above,
        -- and made to hold it below)
        FOR r IN
            SELECT x.indexrelid::pg_catalog.regclass::pg_catalog.text AS index_name
              FROM pg_catalog.pg_index AS x
             WHERE x.indrelid OPERATOR(pg_catalog.=) rels[i]
               AND (x.indisunique OR x.indisexclusion)
               AND NOT (names[i] OPERATOR(pg_catalog.=) ANY (ARRAY['bookings', 'outbox']) AND x.indisprimary)
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                                WHERE a.attrelid OPERATOR(pg_catalog.=) rels[i]
                                  AND a.attname OPERATOR(pg_catalog.=) columns[i]
                                  AND a.attnum OPERATOR(pg_catalog.=) ANY (x.indkey::pg_catalog.int2[]))
             ORDER BY 1
        LOOP
            problems := problems || pg_catalog.format(
                '%s: the unique index %s does not hold %s, the column it is distributed by; fix: drop it, or add %s to it',
                names[i], r.index_name, columns[i], columns[i]);
        END LOOP;
    END LOOP;

    -- foreign keys: those between the five are dropped and added again
    -- after; one from another table onto a table to be distributed, or
    -- from a table to be laid out onto a table Citus does not have, is
    -- refused (Citus keeps neither)
    FOR r IN
        SELECT k.conname::pg_catalog.text AS conname, k.conrelid, k.confrelid,
               k.conrelid::pg_catalog.regclass::pg_catalog.text AS from_table,
               k.confrelid::pg_catalog.regclass::pg_catalog.text AS to_table,
               pg_catalog.pg_get_constraintdef(k.oid) AS definition
          FROM pg_catalog.pg_constraint AS k
         WHERE k.contype OPERATOR(pg_catalog.=) 'f'
           AND (k.conrelid OPERATOR(pg_catalog.=) ANY (rels) OR k.confrelid OPERATOR(pg_catalog.=) ANY (rels))
         ORDER BY k.conrelid, k.conname
    LOOP
        IF r.conrelid OPERATOR(pg_catalog.=) ANY (rels[1:2]) AND r.confrelid OPERATOR(pg_catalog.=) ANY (rels[1:2]) THEN
            CONTINUE;                        -- between reference tables: Citus keeps it
        ELSIF r.conrelid OPERATOR(pg_catalog.=) ANY (rels[3:5]) AND r.confrelid OPERATOR(pg_catalog.=) ANY (rels[1:2]) THEN
            -- onto actors or resources (bookings', idempotency's): dropped
            -- and added again where either side is to be laid out
            IF todo[pg_catalog.array_position(rels, r.conrelid)] OR todo[pg_catalog.array_position(rels, r.confrelid)] THEN
                fkey_tables := fkey_tables || r.from_table;
                fkey_names := fkey_names || r.conname;
                fkey_defs := fkey_defs || r.definition;
            END IF;
        ELSIF r.confrelid OPERATOR(pg_catalog.=) ANY (rels[3:5])
              AND todo[pg_catalog.array_position(rels, r.confrelid)] THEN
            problems := problems || pg_catalog.format(
                'the foreign key %s of %s references %s, which is to be distributed: Citus cannot keep it; fix: ALTER TABLE %s DROP CONSTRAINT %I',
                r.conname, r.from_table, r.to_table, r.from_table, r.conname);
        ELSIF r.conrelid OPERATOR(pg_catalog.=) ANY (rels) AND todo[pg_catalog.array_position(rels, r.conrelid)]
              AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition AS p
                               WHERE p.logicalrelid OPERATOR(pg_catalog.=) r.confrelid
                                 AND p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.repmodel OPERATOR(pg_catalog.=) 't') THEN
            problems := problems || pg_catalog.format(
                'the foreign key %s of %s references %s, which is not a reference table: Citus cannot keep it; fix: ALTER TABLE %s DROP CONSTRAINT %I',
                r.conname, r.from_table, r.to_table, r.from_table, r.conname);
        ELSIF r.confrelid OPERATOR(pg_catalog.=) ANY (rels[1:2]) AND todo[pg_catalog.array_position(rels, r.confrelid)]
              AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition AS p
                               WHERE p.logicalrelid OPERATOR(pg_catalog.=) r.conrelid) THEN
            problems := problems || pg_catalog.format(
                'the foreign key %s of %s references %s, which is to be a reference table: Citus would add %s to its metadata; fix: distribute %s first, or ALTER TABLE %s DROP CONSTRAINT %I',
                r.conname, r.from_table, r.to_table, r.from_table, r.from_table, r.from_table, r.conname);
        END IF;
    END LOOP;

    IF pg_catalog.cardinality(problems) OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'okno''s tables in schema % cannot be distributed as they are', pg_catalog.quote_ident(schema_name)
            USING ERRCODE = '55000',
                  DETAIL = pg_catalog.array_to_string(problems, E'\n'),
                  HINT = 'Change the tables as listed, as their owner, then call okno_distribute_tables() again: it changed nothing.';
    END IF;

    IF any_todo THEN
        -- Citus adds a foreign key onto a reference table only where the
        -- transaction made no parallel connections to the shards: all of it
        -- over one connection per node (sequential mode), the caller's
        -- setting back at the end
        mode := pg_catalog.current_setting('citus.multi_shard_modify_mode');
        PERFORM pg_catalog.set_config('citus.multi_shard_modify_mode', 'sequential', true);
        -- the foreign keys go first and come back last: with them, making
        -- actors and resources reference tables would add bookings and
        -- idempotency to Citus's metadata as local tables, which Citus then
        -- cannot distribute (an identity column)
        FOR i IN 1 .. pg_catalog.cardinality(fkey_names) LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s DROP CONSTRAINT %I', fkey_tables[i], fkey_names[i]);
        END LOOP;
        -- >>> the outbox's column columns[5], bucket, a function of the
        -- event's order key (its id as text for an event without one), so
        -- that one key's events lie in one shard: added where it is
        -- missing, and every row's bucket written before Citus copies the
        -- rows (okno writes it on its inserts from then on)
        IF todo[5] THEN
            IF NOT has_bucket THEN
                EXECUTE pg_catalog.format('ALTER TABLE %I.outbox ADD COLUMN %I integer', schema_name, columns[5]);
            END IF;
            -- okno_outbox_bucket(COALESCE(order key, id::text)), the order
            -- key as okno's index outbox_order_key has it
            bucket_expr := pg_catalog.format(
                '%I.okno_outbox_bucket(COALESCE(CASE WHEN kind OPERATOR(pg_catalog.=) ''booking_created'' '
                'OR kind OPERATOR(pg_catalog.=) ''booking_cancelled'' THEN payload OPERATOR(pg_catalog.->>) ''booking_id'' '
                'ELSE order_key END, id::pg_catalog.text))',
                schema_name);
            EXECUTE pg_catalog.format('UPDATE %I.outbox SET %I = %s WHERE %I IS DISTINCT FROM %s',
                                      schema_name, columns[5], bucket_expr, columns[5], bucket_expr);
            EXECUTE pg_catalog.format('ALTER TABLE %I.outbox ALTER COLUMN %I SET NOT NULL', schema_name, columns[5]);
        END IF;
        -- <<<
        -- a distributed table's unique constraints hold its distribution
        -- column: bookings' and outbox's primary key (id) becomes
        -- (resource_id, id) and (bucket, id), under its own name
        FOR i IN 1 .. 5 LOOP
            IF todo[i] AND id_pkeys[i] IS NOT NULL THEN
                EXECUTE pg_catalog.format('ALTER TABLE %I.%I DROP CONSTRAINT %I, ADD CONSTRAINT %I PRIMARY KEY (%I, id)',
                                          schema_name, names[i], id_pkeys[i], id_pkeys[i], columns[i]);
            END IF;
        END LOOP;
        IF todo[1] THEN
            PERFORM pg_catalog.create_reference_table(rels[1]::pg_catalog.regclass);
        END IF;
        IF todo[2] THEN
            PERFORM pg_catalog.create_reference_table(rels[2]::pg_catalog.regclass);
        END IF;
        IF todo[3] THEN
            PERFORM pg_catalog.create_distributed_table(rels[3]::pg_catalog.regclass, columns[3]);
        END IF;
        -- idempotency in a colocation group of its own: its shards hold
        -- actors' keys, bookings' hold resources' bookings; no statement
        -- joins the two on their distribution columns, so Citus need not
        -- keep equal hash ranges on one node (and can move each alone)
        IF todo[4] THEN
            PERFORM pg_catalog.create_distributed_table(rels[4]::pg_catalog.regclass, columns[4],
                                                        colocate_with => 'none');
        END IF;
        -- >>> the outbox: distributed by columns[5], bucket, in a colocation
        -- group of its own, as idempotency's: no statement joins outbox to
        -- another table on its bucket
        IF todo[5] THEN
            PERFORM pg_catalog.create_distributed_table(rels[5]::pg_catalog.regclass, columns[5],
                                                        colocate_with => 'none');
        END IF;
        -- <<<
        -- one constraint per ALTER TABLE: Citus adds a foreign key only alone
        FOR i IN 1 .. pg_catalog.cardinality(fkey_names) LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT %I %s', fkey_tables[i], fkey_names[i], fkey_defs[i]);
        END LOOP;
        -- Citus copied each table's rows into its shards and left them in
        -- the table itself, unseen: removed, so that no stale copy stays on
        -- the coordinator's disk (the five are distributed now, so the
        -- truncation's cascade along their foreign keys stays among them)
        FOR i IN 1 .. 5 LOOP
            IF todo[i] THEN
                PERFORM pg_catalog.truncate_local_data_after_distributing_table(rels[i]::pg_catalog.regclass);
            END IF;
        END LOOP;
        PERFORM pg_catalog.set_config('citus.multi_shard_modify_mode', mode, true);
    END IF;

    FOR i IN 1 .. 5 LOOP
        table_name := names[i];
        layout := wants[i];
        action := CASE WHEN todo[i] THEN 'distributed' ELSE 'already' END;
        RETURN NEXT;
    END LOOP;
END
$okno$;

COMMENT ON FUNCTION @extschema@.okno_distribute_tables() IS
'lay the application''s tables out on a Citus cluster, on the coordinator: actors and resources reference tables, bookings distributed by resource_id, idempotency by actor_id, outbox by bucket, a function of the event''s order key, so that one key''s events lie in one shard';

-- okno_distribute_own_tables() lays okno's own tables out on a Citus
-- cluster, on the coordinator: okno_key distributed by request_key,
-- okno_key_tombstone a reference table (a copy on every node: every new
-- request reads it, on the node it runs on), so that an operation's key
-- and a key's tombstone are the cluster's instead of each node's (okno's
-- lock of a key excludes requests on its own node only; the key's row in
-- its shard is then the arbiter), okno_purge_horizon a reference table
-- too (okno_purge records it, okno_verify reads it, on any node), and the
-- named subscribers' tables: okno_subscriber a reference table (every
-- writer reads it on its node), okno_delivery distributed by bucket with
-- outbox (an event's rows of delivery state in its shard), which needs
-- outbox distributed by bucket first (okno_distribute_tables()) and no
-- named subscriber yet (a subscriber of one server keeps a snapshot of
-- its copy, which means nothing on a cluster).  PL/pgSQL, SECURITY
-- INVOKER: Citus distributes a table as its owner, and these are okno's,
-- owned by the superuser that installed okno, so a superuser (or that
-- owner) calls it; it touches okno's objects only.  A table already
-- distributed so is left as it is.  okno_discarded stays each node's own.
CREATE FUNCTION @extschema@.okno_distribute_own_tables()
RETURNS TABLE (table_name text, layout text, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $okno$
#variable_conflict use_column
DECLARE
    names pg_catalog.text[] := ARRAY['okno_key', 'okno_key_tombstone', 'okno_purge_horizon',
                                     'okno_subscriber', 'okno_delivery'];
    -- the column each is distributed by (NULL: a reference table), and the
    -- table it is colocated with (NULL: none)
    columns pg_catalog.text[] := ARRAY['request_key', NULL, NULL, NULL, 'bucket'];
    colocated pg_catalog.text[] := ARRAY[NULL, NULL, NULL, NULL, 'outbox'];
    outbox_layout pg_catalog.text;
    want pg_catalog.text;
    schema_oid pg_catalog.oid;
    schema_name pg_catalog.text;
    rels pg_catalog.oid[] := '{}';
    todo pg_catalog.bool[] := '{}';
    problems pg_catalog.text[] := '{}';
    rel pg_catalog.oid;
    owner pg_catalog.oid;
    cur pg_catalog.text;
    mode pg_catalog.text;
    i integer;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) 'citus') THEN
        RAISE EXCEPTION 'okno_distribute_own_tables() needs Citus'
            USING ERRCODE = '0A000',
                  DETAIL = pg_catalog.format('The extension citus is not installed in database %I.',
                                             pg_catalog.current_database()),
                  HINT = 'Load Citus on every node (shared_preload_libraries = citus), run CREATE EXTENSION citus '
                         'in this database on the coordinator and add the workers, then call okno_distribute_own_tables() there.';
    END IF;
    IF NOT pg_catalog.citus_is_coordinator() THEN
        RAISE EXCEPTION 'okno_distribute_own_tables() runs on the Citus coordinator only'
            USING ERRCODE = '0A000',
                  DETAIL = 'This node is not the coordinator of its Citus cluster: only the coordinator distributes tables.',
                  HINT = 'Connect to the coordinator and call okno_distribute_own_tables() there.';
    END IF;

    SELECT n.oid, n.nspname INTO schema_oid, schema_name
      FROM pg_catalog.pg_extension AS e
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
     WHERE e.extname OPERATOR(pg_catalog.=) 'okno';

    FOR i IN 1 .. pg_catalog.cardinality(names) LOOP
        SELECT c.oid, c.relowner INTO rel, owner
          FROM pg_catalog.pg_class AS c
         WHERE c.relname OPERATOR(pg_catalog.=) names[i] AND c.relnamespace OPERATOR(pg_catalog.=) schema_oid;
        IF rel IS NULL THEN
            RAISE EXCEPTION 'okno''s table %.% does not exist', pg_catalog.quote_ident(schema_name), names[i]
                USING ERRCODE = '55000',
                      HINT = 'Update okno to its current version with ALTER EXTENSION okno UPDATE.';
        END IF;
        -- okno's tables belong to the superuser that installed okno: a role
        -- that is neither it nor a superuser may not change them
        IF owner OPERATOR(pg_catalog.<>) (SELECT r.oid FROM pg_catalog.pg_roles AS r
                                           WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
           AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r
                     WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
            RAISE EXCEPTION 'okno_distribute_own_tables() must be called by a superuser'
                USING ERRCODE = '42501',
                      DETAIL = pg_catalog.format('okno''s table %s is owned by role %s, which installed okno; '
                                                 'Citus distributes a table as its owner.',
                                                 names[i], pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(owner))),
                      HINT = pg_catalog.format('Connect as %s and call okno_distribute_own_tables() again.',
                                               pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(owner)));
        END IF;
        rels := rels || rel;
        SELECT CASE WHEN p.partmethod OPERATOR(pg_catalog.=) 'h'
                    THEN pg_catalog.format('distributed by %s',
                                           pg_catalog.column_to_column_name(p.logicalrelid, p.partkey))
                    WHEN p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.repmodel OPERATOR(pg_catalog.=) 't'
                    THEN 'a reference table'
                    ELSE pg_catalog.format('a Citus table of partition method %s', p.partmethod)
               END INTO cur
          FROM pg_catalog.pg_dist_partition AS p
         WHERE p.logicalrelid OPERATOR(pg_catalog.=) rel;
        todo := todo || (cur IS NULL);
        want := CASE WHEN columns[i] IS NULL THEN 'a reference table'
                     ELSE pg_catalog.format('distributed by %s', columns[i]) END;
        IF cur IS NOT NULL AND cur OPERATOR(pg_catalog.<>) want THEN
            problems := problems || pg_catalog.format(
                '%s is %s, where okno''s layout has it %s; fix: SELECT undistribute_table(%L), then call okno_distribute_own_tables() again',
                names[i], cur, want, pg_catalog.format('%I.%I', schema_name, names[i]));
        END IF;
        cur := NULL;
        rel := NULL;
    END LOOP;
    -- okno_delivery goes with outbox: an event's rows in its shard
    IF todo[5] THEN
        SELECT pg_catalog.column_to_column_name(p.logicalrelid, p.partkey) INTO outbox_layout
          FROM pg_catalog.pg_class AS c
          JOIN pg_catalog.pg_dist_partition AS p ON p.logicalrelid OPERATOR(pg_catalog.=) c.oid
         WHERE c.relname OPERATOR(pg_catalog.=) 'outbox' AND c.relnamespace OPERATOR(pg_catalog.=) schema_oid
           AND p.partmethod OPERATOR(pg_catalog.=) 'h';
        IF outbox_layout IS DISTINCT FROM 'bucket' THEN
            problems := problems || pg_catalog.format(
                'okno_delivery is distributed with outbox, by bucket, and %s.outbox is not distributed by bucket; fix: SELECT * FROM okno_distribute_tables() as outbox''s owner, then call okno_distribute_own_tables() again',
                pg_catalog.quote_ident(schema_name));
        END IF;
    END IF;
    IF todo[4] AND EXISTS (SELECT FROM @extschema@.okno_subscriber) THEN
        problems := problems || pg_catalog.format(
            'okno_subscriber has the subscribers %s, whose delivery state is one server''s (a snapshot of what each copied); fix: drain them, okno_unsubscribe() each, then call okno_distribute_own_tables() again and okno_subscribe() them',
            (SELECT pg_catalog.string_agg(u.name, ', ' ORDER BY u.name) FROM @extschema@.okno_subscriber AS u));
    ELSIF todo[5] AND EXISTS (SELECT FROM @extschema@.okno_delivery) THEN
        problems := problems || 'okno_delivery has rows of subscribers that are gone; fix: TRUNCATE okno_delivery, then call okno_distribute_own_tables() again';
    END IF;
    IF pg_catalog.cardinality(problems) OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'okno''s own tables in schema % cannot be distributed', pg_catalog.quote_ident(schema_name)
            USING ERRCODE = '55000',
                  DETAIL = pg_catalog.array_to_string(problems, E'\n'),
                  HINT = 'Change the tables as listed, then call okno_distribute_own_tables() again: it changed nothing.';
    END IF;

    IF true = ANY (todo) THEN
        -- the rows copied into the shards in the caller's transaction, over
        -- one connection per node, as okno_distribute_tables() does
        mode := pg_catalog.current_setting('citus.multi_shard_modify_mode');
        PERFORM pg_catalog.set_config('citus.multi_shard_modify_mode', 'sequential', true);
        FOR i IN 1 .. pg_catalog.cardinality(names) LOOP
            CONTINUE WHEN NOT todo[i];
            IF columns[i] IS NULL THEN
                PERFORM pg_catalog.create_reference_table(rels[i]::pg_catalog.regclass);
            ELSE
                PERFORM pg_catalog.create_distributed_table(rels[i]::pg_catalog.regclass, columns[i],
                                                            colocate_with => CASE WHEN colocated[i] IS NULL THEN 'none'
                                                                ELSE pg_catalog.format('%I.%I', schema_name, colocated[i]) END);
            END IF;
            PERFORM pg_catalog.truncate_local_data_after_distributing_table(rels[i]::pg_catalog.regclass);
        END LOOP;
        PERFORM pg_catalog.set_config('citus.multi_shard_modify_mode', mode, true);
    END IF;

    FOR i IN 1 .. pg_catalog.cardinality(names) LOOP
        table_name := names[i];
        layout := CASE WHEN columns[i] IS NULL THEN 'reference table'
                       ELSE pg_catalog.format('distributed by %s', columns[i]) END;
        action := CASE WHEN todo[i] THEN 'distributed' ELSE 'already' END;
        RETURN NEXT;
    END LOOP;
END
$okno$;

COMMENT ON FUNCTION @extschema@.okno_distribute_own_tables() IS
'lay okno''s own tables out on a Citus cluster, on the coordinator, as a superuser: okno_key distributed by request_key, okno_delivery by bucket with outbox, okno_key_tombstone, okno_purge_horizon and okno_subscriber reference tables, so that operations'' keys, tombstones, the purge horizon and named subscribers are the cluster''s';

-- Named subscribers on a Citus cluster (okno_distribute_own_tables()
-- distributes okno_delivery by bucket with outbox): each row of delivery
-- state carries its event's bucket, 0 on one server.  Distribution needs
-- the column in every node's table, so it is added here, where every node
-- runs it; okno_delivery is okno's own table.
ALTER TABLE @extschema@.okno_delivery ADD COLUMN bucket integer NOT NULL DEFAULT 0;
ALTER TABLE @extschema@.okno_delivery DROP CONSTRAINT okno_delivery_pkey,
    ADD CONSTRAINT okno_delivery_pkey PRIMARY KEY (subscriber, event_id, bucket);
