/* okno--0.5.0.sql: the booking lab's schema and okno's functions */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION okno CASCADE" to load this file. \quit

-- Every name below is qualified with @extschema@ or pg_catalog, so nothing
-- resolves through the installing user's search_path (okno is trusted).

-- Adoption (0.5.0).  A database that followed the course "Окно" already has
-- the course's tables, made by its migrations and filled by its Python
-- service.  CREATE EXTENSION okno in the schema that holds them takes them
-- over in place instead of failing: every row stays as it is, what okno
-- needs and a table lacks is added without rewriting it, and the tables
-- become okno's, owned and granted as a fresh install's.  The missing ones
-- are created as in a fresh install.
--
-- First everything is checked, and anything that cannot serve fails the
-- whole CREATE EXTENSION with one error listing every difference; nothing
-- is changed before that.  Two helpers do the work and are dropped at the
-- end of this script.

-- What okno needs of a column of the course's: its type (one of those the
-- course's migrations and their common variants use), NOT NULL or not, and
-- whether okno adds it when it is missing.
CREATE FUNCTION @extschema@.okno_adoption_column(tab text, col text,
    OUT accepted text, OUT required boolean, OUT add_as text)
LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
  SELECT c.accepted, c.required, c.add_as
    FROM (VALUES
      ('actors', 'id', 'integer', true, NULL::text),
      ('resources', 'id', 'integer', true, NULL),
      ('bookings', 'id', 'integer|bigint', true, NULL),
      ('bookings', 'resource_id', 'integer', true, NULL),
      ('bookings', 'actor_id', 'integer', true, NULL),
      ('bookings', 'starts_at', 'timestamp with time zone', true, NULL),
      ('bookings', 'ends_at', 'timestamp with time zone', true, NULL),
      ('bookings', 'status', 'text|character varying', true,
       'text NOT NULL DEFAULT ''confirmed'''),
      ('bookings', 'created_at', 'timestamp with time zone', true,
       'timestamptz NOT NULL DEFAULT pg_catalog.now()'),
      ('idempotency', 'actor_id', 'integer', true, NULL),
      ('idempotency', 'request_key', 'character varying|text', true, NULL),
      ('idempotency', 'fingerprint', 'character|character varying|text', true, NULL),
      ('idempotency', 'response_body', 'jsonb', true, NULL),
      -- keys the course stored are of the course's form, version 0; and so
      -- are those its service may still store beside okno, which leaves the
      -- column out (okno writes its own version, 1)
      ('idempotency', 'fingerprint_version', 'smallint', true,
       'smallint NOT NULL DEFAULT 0'),
      ('idempotency', 'created_at', 'timestamp with time zone', true,
       'timestamptz NOT NULL DEFAULT pg_catalog.now()'),
      ('outbox', 'id', 'uuid', true, NULL),
      ('outbox', 'kind', 'character varying|text', true, NULL),
      ('outbox', 'payload', 'jsonb', true, NULL),
      ('outbox', 'created_at', 'timestamp with time zone', true,
       'timestamptz NOT NULL DEFAULT pg_catalog.now()'),
      ('outbox', 'delivered_at', 'timestamp with time zone', false, 'timestamptz'),
      ('outbox', 'attempts', 'integer', true, 'integer NOT NULL DEFAULT 0'),
      ('outbox', 'last_error', 'text', false, 'text'),
      ('outbox', 'available_at', 'timestamp with time zone', false, 'timestamptz'),
      ('outbox', 'parked_at', 'timestamp with time zone', false, 'timestamptz'),
      -- 0.5.0: the transaction that wrote the event (subscribers); the
      -- events already there have none
      ('outbox', 'created_xid', 'xid8', false, 'xid8')
    ) AS c(tab, col, accepted, required, add_as)
   WHERE c.tab OPERATOR(pg_catalog.=) okno_adoption_column.tab
     AND c.col OPERATOR(pg_catalog.=) okno_adoption_column.col;
END;

-- Every reason the course's tables in this schema cannot serve okno, one
-- row each, "table.column: what" (none: they can).  Changes nothing.
CREATE FUNCTION @extschema@.okno_adoption_problems()
RETURNS SETOF text
LANGUAGE plpgsql
AS $okno$
DECLARE
    nsp oid := pg_catalog.to_regnamespace('@extschema@');
    tabs text[] := ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'];
    t text;
    rel oid;
    r record;
    n bigint;
    spec record;
BEGIN
    FOREACH t IN ARRAY tabs LOOP
        SELECT c.oid INTO rel FROM pg_catalog.pg_class AS c
         WHERE c.relnamespace OPERATOR(pg_catalog.=) nsp AND c.relname OPERATOR(pg_catalog.=) t;
        CONTINUE WHEN rel IS NULL;

        -- a plain table, alone
        IF (SELECT c.relkind FROM pg_catalog.pg_class AS c WHERE c.oid OPERATOR(pg_catalog.=) rel)
           OPERATOR(pg_catalog.<>) 'r' THEN
            RETURN NEXT pg_catalog.format('%s: is a %s, not a table', t,
                (SELECT CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                        WHEN 'p' THEN 'partitioned table' WHEN 'f' THEN 'foreign table'
                        WHEN 'S' THEN 'sequence' WHEN 'i' THEN 'index' ELSE 'relation' END
                   FROM pg_catalog.pg_class AS c WHERE c.oid OPERATOR(pg_catalog.=) rel));
            CONTINUE;
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_inherits AS i
                    WHERE i.inhrelid OPERATOR(pg_catalog.=) rel OR i.inhparent OPERATOR(pg_catalog.=) rel) THEN
            RETURN NEXT pg_catalog.format('%s: inherits or is inherited from (okno''s tables stand alone)', t);
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_depend AS d
                    WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                      AND d.objid OPERATOR(pg_catalog.=) rel AND d.deptype OPERATOR(pg_catalog.=) 'e') THEN
            RETURN NEXT pg_catalog.format('%s: belongs to another extension', t);
        END IF;

        -- okno's columns, of the types okno can use
        FOR r IN
            SELECT c.col,
                   a.attnum IS NOT NULL AS present,
                   pg_catalog.format_type(a.atttypid, NULL) AS typ,
                   a.atttypmod, a.attnotnull, a.attgenerated,
                   (SELECT s.accepted FROM @extschema@.okno_adoption_column(t, c.col) AS s) AS accepted,
                   (SELECT s.add_as FROM @extschema@.okno_adoption_column(t, c.col) AS s) AS add_as
              FROM pg_catalog.unnest(CASE t
                       WHEN 'actors' THEN ARRAY['id']
                       WHEN 'resources' THEN ARRAY['id']
                       WHEN 'bookings' THEN ARRAY['id', 'resource_id', 'actor_id', 'starts_at', 'ends_at', 'status', 'created_at']
                       WHEN 'idempotency' THEN ARRAY['actor_id', 'request_key', 'fingerprint', 'response_body', 'fingerprint_version', 'created_at']
                       ELSE ARRAY['id', 'kind', 'payload', 'created_at', 'delivered_at', 'attempts', 'last_error', 'available_at', 'parked_at', 'created_xid']
                   END) WITH ORDINALITY AS c(col, ord)
              LEFT JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) c.col
               AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
             ORDER BY c.ord
        LOOP
            IF NOT r.present THEN
                IF r.add_as IS NULL THEN
                    RETURN NEXT pg_catalog.format('%s.%s: missing', t, r.col);
                END IF;
                CONTINUE;
            END IF;
            IF r.typ OPERATOR(pg_catalog.<>) ALL (pg_catalog.string_to_array(r.accepted, '|')) THEN
                RETURN NEXT pg_catalog.format('%s.%s: type %s, okno needs %s', t, r.col, r.typ,
                                              pg_catalog.replace(r.accepted, '|', ' or '));
                CONTINUE;
            END IF;
            -- long enough for what okno writes
            IF r.atttypmod OPERATOR(pg_catalog.>=) 0 AND (
                (t OPERATOR(pg_catalog.=) 'idempotency' AND r.col OPERATOR(pg_catalog.=) 'request_key'
                 AND r.atttypmod OPERATOR(pg_catalog.-) 4 OPERATOR(pg_catalog.<) 80) OR
                (t OPERATOR(pg_catalog.=) 'idempotency' AND r.col OPERATOR(pg_catalog.=) 'fingerprint'
                 AND (r.atttypmod OPERATOR(pg_catalog.-) 4 OPERATOR(pg_catalog.<) 64 OR
                      (r.typ OPERATOR(pg_catalog.=) 'character' AND r.atttypmod OPERATOR(pg_catalog.-) 4 OPERATOR(pg_catalog.<>) 64))) OR
                (t OPERATOR(pg_catalog.=) 'outbox' AND r.col OPERATOR(pg_catalog.=) 'kind'
                 AND r.atttypmod OPERATOR(pg_catalog.-) 4 OPERATOR(pg_catalog.<) 17) OR
                (t OPERATOR(pg_catalog.=) 'bookings' AND r.col OPERATOR(pg_catalog.=) 'status'
                 AND r.atttypmod OPERATOR(pg_catalog.-) 4 OPERATOR(pg_catalog.<) 9)) THEN
                RETURN NEXT pg_catalog.format('%s.%s: type %s is too short for what okno writes', t, r.col,
                                              (SELECT pg_catalog.format_type(a.atttypid, a.atttypmod)
                                                 FROM pg_catalog.pg_attribute AS a
                                                WHERE a.attrelid OPERATOR(pg_catalog.=) rel
                                                  AND a.attname OPERATOR(pg_catalog.=) r.col));
            END IF;
            IF r.attgenerated OPERATOR(pg_catalog.<>) '' THEN
                RETURN NEXT pg_catalog.format('%s.%s: is a generated column', t, r.col);
            END IF;
        END LOOP;

        -- primary keys on okno's columns
        IF NOT EXISTS (
            SELECT FROM pg_catalog.pg_constraint AS k
             WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.contype OPERATOR(pg_catalog.=) 'p'
               AND (SELECT pg_catalog.array_agg(a.attname::text ORDER BY u.ord)
                      FROM pg_catalog.unnest(k.conkey) WITH ORDINALITY AS u(attnum, ord)
                      JOIN pg_catalog.pg_attribute AS a
                        ON a.attrelid OPERATOR(pg_catalog.=) rel AND a.attnum OPERATOR(pg_catalog.=) u.attnum)
                   OPERATOR(pg_catalog.=) CASE t WHEN 'idempotency' THEN ARRAY['actor_id', 'request_key']
                                                 ELSE ARRAY['id'] END) THEN
            RETURN NEXT pg_catalog.format('%s: no primary key on (%s)', t,
                CASE t WHEN 'idempotency' THEN 'actor_id, request_key' ELSE 'id' END);
        END IF;

        -- ids are generated (okno inserts bookings, the course inserts
        -- actors and resources)
        IF t OPERATOR(pg_catalog.=) 'bookings' AND NOT EXISTS (
            SELECT FROM pg_catalog.pg_attribute AS a
             WHERE a.attrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) 'id'
               AND (a.atthasdef OR a.attidentity OPERATOR(pg_catalog.<>) '')) THEN
            RETURN NEXT 'bookings.id: has no default (okno needs serial, bigserial or an identity)';
        END IF;

        -- the one constraint okno cannot add without changing what the
        -- course's service meant: no two confirmed bookings of a resource
        -- overlap
        IF t OPERATOR(pg_catalog.=) 'bookings' AND NOT EXISTS (
            SELECT FROM pg_catalog.pg_constraint AS k
             WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.conname OPERATOR(pg_catalog.=) 'bookings_no_overlap'
               AND k.contype OPERATOR(pg_catalog.=) 'x'
               AND pg_catalog.regexp_replace(pg_catalog.pg_get_constraintdef(k.oid), '\s+', ' ', 'g')
                   OPERATOR(pg_catalog.~)
                   ('^EXCLUDE USING gist \(resource_id WITH =, tstzrange\(starts_at, ends_at(, ''\[\)''::text)?\) WITH &&\)'
                    ' WHERE \(\(?\(?status\)?(::text)? = ''confirmed''::(text|character varying)\)\)?$')) THEN
            RETURN NEXT 'bookings: constraint bookings_no_overlap is missing or different '
                        '(okno needs EXCLUDE USING gist (resource_id WITH =, tstzrange(starts_at, ends_at) WITH &&) '
                        'WHERE (status = ''confirmed''))';
        END IF;

        -- data okno's added constraints would refuse
        IF t OPERATOR(pg_catalog.=) 'bookings' AND EXISTS (
            SELECT FROM pg_catalog.pg_attribute AS a
             WHERE a.attrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) 'starts_at') THEN
            EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s WHERE NOT (starts_at OPERATOR(pg_catalog.<) ends_at)',
                                      rel::pg_catalog.regclass) INTO n;
            IF n OPERATOR(pg_catalog.>) 0 THEN
                RETURN NEXT pg_catalog.format('bookings: %s rows do not start before they end', n);
            END IF;
            IF EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                        WHERE a.attrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) 'status') THEN
                EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s WHERE status::pg_catalog.text'
                                          ' OPERATOR(pg_catalog.<>) ALL (ARRAY[''confirmed'', ''cancelled''])',
                                          rel::pg_catalog.regclass) INTO n;
                IF n OPERATOR(pg_catalog.>) 0 THEN
                    RETURN NEXT pg_catalog.format('bookings.status: %s rows are neither confirmed nor cancelled', n);
                END IF;
            END IF;
        END IF;

        -- references between okno's tables: the parents must be there too
        FOR r IN
            SELECT v.col, v.parent
              FROM (VALUES ('bookings', 'resource_id', 'resources'), ('bookings', 'actor_id', 'actors'),
                           ('idempotency', 'actor_id', 'actors')) AS v(tab, col, parent)
             WHERE v.tab OPERATOR(pg_catalog.=) t
        LOOP
            IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', '@extschema@', r.parent)) IS NULL
               AND EXISTS (SELECT FROM pg_catalog.pg_class AS c
                            WHERE c.relnamespace OPERATOR(pg_catalog.=) nsp
                              AND c.relname OPERATOR(pg_catalog.=) r.parent) IS NOT TRUE THEN
                EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s', rel::pg_catalog.regclass) INTO n;
                IF n OPERATOR(pg_catalog.>) 0 THEN
                    RETURN NEXT pg_catalog.format('%s.%s: refers to table %s, which does not exist', t, r.col, r.parent);
                END IF;
            END IF;
        END LOOP;
        -- and no foreign key of theirs leads anywhere else
        FOR r IN
            SELECT k.conname, k.confrelid::pg_catalog.regclass AS target
              FROM pg_catalog.pg_constraint AS k
              JOIN pg_catalog.pg_class AS p ON p.oid OPERATOR(pg_catalog.=) k.confrelid
             WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.contype OPERATOR(pg_catalog.=) 'f'
               AND (p.relnamespace OPERATOR(pg_catalog.<>) nsp OR p.relname OPERATOR(pg_catalog.<>) ALL (tabs))
             ORDER BY 1
        LOOP
            RETURN NEXT pg_catalog.format('%s: foreign key %s refers to %s, which is not one of okno''s tables',
                                          t, r.conname, r.target);
        END LOOP;

        -- nothing of the table's runs code of a role that is not a
        -- superuser (a trigger or rule of such a role is disabled instead):
        -- after adoption a superuser writes these tables
        FOR r IN
            WITH parts AS (
                SELECT 'pg_catalog.pg_class'::pg_catalog.regclass AS classid, rel AS objid
                UNION
                SELECT d.classid, d.objid FROM pg_catalog.pg_depend AS d
                 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                   AND d.refobjid OPERATOR(pg_catalog.=) rel
                   AND d.classid OPERATOR(pg_catalog.<>) ALL (ARRAY['pg_catalog.pg_trigger'::pg_catalog.regclass,
                                                                     'pg_catalog.pg_rewrite'::pg_catalog.regclass])
            )
            SELECT DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) AS what,
                   pg_catalog.pg_describe_object(d.refclassid, d.refobjid, 0) AS uses,
                   o.rolname AS owner
              FROM parts AS p
              JOIN pg_catalog.pg_depend AS d
                ON d.classid OPERATOR(pg_catalog.=) p.classid AND d.objid OPERATOR(pg_catalog.=) p.objid
              JOIN LATERAL (
                  SELECT f.proowner AS owner FROM pg_catalog.pg_proc AS f
                   WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                     AND f.oid OPERATOR(pg_catalog.=) d.refobjid
                  UNION ALL
                  SELECT op.oprowner FROM pg_catalog.pg_operator AS op
                   WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_operator'::pg_catalog.regclass
                     AND op.oid OPERATOR(pg_catalog.=) d.refobjid
                  UNION ALL
                  SELECT ty.typowner FROM pg_catalog.pg_type AS ty
                   WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass
                     AND ty.oid OPERATOR(pg_catalog.=) d.refobjid
                     AND ty.typrelid OPERATOR(pg_catalog.<>) rel
              ) AS x ON true
              JOIN pg_catalog.pg_roles AS o ON o.oid OPERATOR(pg_catalog.=) x.owner
             WHERE NOT o.rolsuper
             ORDER BY 1, 2
        LOOP
            RETURN NEXT pg_catalog.format('%s: %s uses %s of role %s, which is not a superuser',
                                          t, r.what, r.uses, r.owner);
        END LOOP;
        -- nor does a foreign key onto it, whose checks read it as its owner
        FOR r IN
            SELECT DISTINCT k.conname, k.conrelid::pg_catalog.regclass AS fromtab
              FROM pg_catalog.pg_constraint AS k
              CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(k.conkey), pg_catalog.unnest(k.conpfeqop)) AS u(fk, op)
              JOIN pg_catalog.pg_attribute AS fa
                ON fa.attrelid OPERATOR(pg_catalog.=) k.conrelid AND fa.attnum OPERATOR(pg_catalog.=) u.fk
              JOIN pg_catalog.pg_type AS ft ON ft.oid OPERATOR(pg_catalog.=) fa.atttypid
              JOIN pg_catalog.pg_operator AS op ON op.oid OPERATOR(pg_catalog.=) u.op
              JOIN pg_catalog.pg_cast AS c
                ON c.castsource OPERATOR(pg_catalog.=) ANY (ARRAY[ft.oid, ft.typbasetype])
               AND c.casttarget OPERATOR(pg_catalog.=) op.oprright
               AND c.castmethod OPERATOR(pg_catalog.=) 'f'
             WHERE k.confrelid OPERATOR(pg_catalog.=) rel AND k.contype OPERATOR(pg_catalog.=) 'f'
               AND fa.atttypid OPERATOR(pg_catalog.<>) op.oprright
             ORDER BY 1, 2
        LOOP
            RETURN NEXT pg_catalog.format('%s: foreign key %s of table %s applies a cast made of a function',
                                          t, r.conname, r.fromtab);
        END LOOP;
    END LOOP;
END
$okno$;

-- Take the course's tables over: what is missing is added (new columns
-- with constant defaults or none, so no table is rewritten; indexes and
-- constraints, each of which reads a table once), the tables become okno's
-- (members of the extension, owned as a fresh install's, no privilege left
-- but those okno grants below), triggers and rules of roles that are not
-- superusers are disabled, and the ids' sequences go on after the largest
-- id.  Returns nothing; reports what it did in WARNINGs (PostgreSQL raises
-- client_min_messages to WARNING while an extension's script runs, so a
-- NOTICE would not reach anyone).
CREATE FUNCTION @extschema@.okno_adopt()
RETURNS void
LANGUAGE plpgsql
AS $okno$
DECLARE
    nsp oid := pg_catalog.to_regnamespace('@extschema@');
    t text;
    rel oid;
    r record;
    spec record;
    seq text;
    added text[];
    former name;
    n bigint;
BEGIN
    FOREACH t IN ARRAY ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'] LOOP
        SELECT c.oid, pg_catalog.pg_get_userbyid(c.relowner) INTO rel, former
          FROM pg_catalog.pg_class AS c
         WHERE c.relnamespace OPERATOR(pg_catalog.=) nsp AND c.relname OPERATOR(pg_catalog.=) t
           AND c.relkind OPERATOR(pg_catalog.=) 'r'
           AND NOT EXISTS (SELECT FROM @extschema@.okno_adoption AS a
                            WHERE a.relation OPERATOR(pg_catalog.=) t)
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS d
                            WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                              AND d.objid OPERATOR(pg_catalog.=) c.oid AND d.deptype OPERATOR(pg_catalog.=) 'e');
        CONTINUE WHEN rel IS NULL;
        added := '{}';

        -- okno's columns that are missing
        FOR r IN
            SELECT c.col, s.add_as
              FROM pg_catalog.unnest(CASE t
                       WHEN 'bookings' THEN ARRAY['status', 'created_at']
                       WHEN 'idempotency' THEN ARRAY['fingerprint_version', 'created_at']
                       WHEN 'outbox' THEN ARRAY['created_at', 'delivered_at', 'attempts', 'last_error', 'available_at', 'parked_at', 'created_xid']
                       ELSE ARRAY[]::text[] END) WITH ORDINALITY AS c(col, ord),
                   @extschema@.okno_adoption_column(t, c.col) AS s
             WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                                WHERE a.attrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) c.col
                                  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped)
             ORDER BY c.ord
        LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s ADD COLUMN %I %s', rel::pg_catalog.regclass, r.col, r.add_as);
            added := added OPERATOR(pg_catalog.||) pg_catalog.format('column %s', r.col);
        END LOOP;
        -- okno's columns are NOT NULL where okno's are (a scan, no rewrite)
        FOR r IN
            SELECT a.attname FROM pg_catalog.pg_attribute AS a,
                   @extschema@.okno_adoption_column(t, a.attname) AS s
             WHERE a.attrelid OPERATOR(pg_catalog.=) rel AND a.attnum OPERATOR(pg_catalog.>) 0
               AND NOT a.attisdropped AND NOT a.attnotnull AND s.required
             ORDER BY a.attnum
        LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', rel::pg_catalog.regclass, r.attname);
            added := added OPERATOR(pg_catalog.||) pg_catalog.format('NOT NULL on %s', r.attname);
        END LOOP;
        IF t OPERATOR(pg_catalog.=) 'bookings' AND NOT EXISTS (
            SELECT FROM pg_catalog.pg_attribute AS a JOIN pg_catalog.pg_attrdef AS d
                ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid AND d.adnum OPERATOR(pg_catalog.=) a.attnum
             WHERE a.attrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) 'status') THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN status SET DEFAULT ''confirmed''', rel::pg_catalog.regclass);
            added := added OPERATOR(pg_catalog.||) 'default of status'::text;
        END IF;

        -- okno's names for the keys okno looks up and the errors it
        -- translates
        FOR r IN
            SELECT k.conname AS old, v.name AS new
              FROM (VALUES ('actors', 'p', NULL::text, 'actors_pkey'),
                           ('resources', 'p', NULL, 'resources_pkey'),
                           ('bookings', 'p', NULL, 'bookings_pkey'),
                           ('idempotency', 'p', NULL, 'idempotency_pkey'),
                           ('outbox', 'p', NULL, 'outbox_pkey'),
                           ('bookings', 'f', 'resource_id', 'bookings_resource_id_fkey'),
                           ('bookings', 'f', 'actor_id', 'bookings_actor_id_fkey'),
                           ('idempotency', 'f', 'actor_id', 'idempotency_actor_id_fkey')) AS v(tab, contype, col, name)
              JOIN pg_catalog.pg_constraint AS k
                ON k.conrelid OPERATOR(pg_catalog.=) rel AND k.contype OPERATOR(pg_catalog.=) v.contype::"char"
               AND (v.col IS NULL OR (pg_catalog.array_length(k.conkey, 1) OPERATOR(pg_catalog.=) 1 AND
                    k.conkey[1] OPERATOR(pg_catalog.=) (SELECT a.attnum FROM pg_catalog.pg_attribute AS a
                                        WHERE a.attrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) v.col)))
             WHERE v.tab OPERATOR(pg_catalog.=) t AND k.conname OPERATOR(pg_catalog.<>) v.name
             ORDER BY 2
        LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', rel::pg_catalog.regclass, r.old, r.new);
            added := added OPERATOR(pg_catalog.||) pg_catalog.format('name %s for constraint %s', r.new, r.old);
        END LOOP;

        -- okno's constraints that are missing
        IF t OPERATOR(pg_catalog.=) 'bookings' THEN
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_constraint AS k
                            WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.conname OPERATOR(pg_catalog.=) 'bookings_resource_id_fkey') THEN
                EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT bookings_resource_id_fkey FOREIGN KEY (resource_id) REFERENCES @extschema@.resources (id)',
                                          rel::pg_catalog.regclass);
                added := added OPERATOR(pg_catalog.||) 'constraint bookings_resource_id_fkey'::text;
            END IF;
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_constraint AS k
                            WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.conname OPERATOR(pg_catalog.=) 'bookings_actor_id_fkey') THEN
                EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT bookings_actor_id_fkey FOREIGN KEY (actor_id) REFERENCES @extschema@.actors (id)',
                                          rel::pg_catalog.regclass);
                added := added OPERATOR(pg_catalog.||) 'constraint bookings_actor_id_fkey'::text;
            END IF;
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_constraint AS k
                            WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.contype OPERATOR(pg_catalog.=) 'c'
                              AND pg_catalog.pg_get_constraintdef(k.oid) OPERATOR(pg_catalog.~) '^CHECK \(\(starts_at < ends_at\)\)$') THEN
                EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT bookings_check CHECK (starts_at OPERATOR(pg_catalog.<) ends_at)',
                                          rel::pg_catalog.regclass);
                added := added OPERATOR(pg_catalog.||) 'constraint bookings_check'::text;
            END IF;
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_constraint AS k
                            JOIN pg_catalog.pg_attribute AS a
                              ON a.attrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) 'status'
                            WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.contype OPERATOR(pg_catalog.=) 'c'
                              AND a.attnum OPERATOR(pg_catalog.=) ANY (k.conkey)) THEN
                EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT bookings_status_check CHECK (status::pg_catalog.text OPERATOR(pg_catalog.=) ANY (ARRAY[''confirmed'', ''cancelled'']::pg_catalog.text[]))',
                                          rel::pg_catalog.regclass);
                added := added OPERATOR(pg_catalog.||) 'constraint bookings_status_check'::text;
            END IF;
        ELSIF t OPERATOR(pg_catalog.=) 'idempotency' THEN
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_constraint AS k
                            WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.conname OPERATOR(pg_catalog.=) 'idempotency_actor_id_fkey') THEN
                EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT idempotency_actor_id_fkey FOREIGN KEY (actor_id) REFERENCES @extschema@.actors (id)',
                                          rel::pg_catalog.regclass);
                added := added OPERATOR(pg_catalog.||) 'constraint idempotency_actor_id_fkey'::text;
            END IF;
        ELSIF t OPERATOR(pg_catalog.=) 'outbox' THEN
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_constraint AS k
                            WHERE k.conrelid OPERATOR(pg_catalog.=) rel AND k.conname OPERATOR(pg_catalog.=) 'outbox_attempts_check') THEN
                EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT outbox_attempts_check CHECK (attempts OPERATOR(pg_catalog.>=) 0)',
                                          rel::pg_catalog.regclass);
                added := added OPERATOR(pg_catalog.||) 'constraint outbox_attempts_check'::text;
            END IF;
            -- okno's partial indexes; the course's outbox_pending had
            -- another predicate (pending meant only "not delivered")
            IF EXISTS (SELECT FROM pg_catalog.pg_class AS i
                        WHERE i.relnamespace OPERATOR(pg_catalog.=) nsp AND i.relname OPERATOR(pg_catalog.=) 'outbox_pending'
                          AND pg_catalog.pg_get_indexdef(i.oid) OPERATOR(pg_catalog.!~)
                              ' USING btree \(id\) INCLUDE \(available_at\) WHERE \(\(delivered_at IS NULL\) AND \(parked_at IS NULL\)\)$') THEN
                DROP INDEX @extschema@.outbox_pending;
                added := added OPERATOR(pg_catalog.||) 'index outbox_pending replaced'::text;
            END IF;
            IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', '@extschema@', 'outbox_pending')) IS NULL THEN
                CREATE INDEX outbox_pending ON @extschema@.outbox (id) INCLUDE (available_at)
                    WHERE delivered_at IS NULL AND parked_at IS NULL;
            END IF;
            IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', '@extschema@', 'outbox_parked')) IS NULL THEN
                CREATE INDEX outbox_parked ON @extschema@.outbox (id)
                    WHERE parked_at IS NOT NULL AND delivered_at IS NULL;
                added := added OPERATOR(pg_catalog.||) 'index outbox_parked'::text;
            END IF;
            IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', '@extschema@', 'outbox_order')) IS NULL THEN
                CREATE INDEX outbox_order ON @extschema@.outbox ((payload OPERATOR(pg_catalog.->) 'booking_id'), id)
                    WHERE delivered_at IS NULL;
                added := added OPERATOR(pg_catalog.||) 'index outbox_order'::text;
            END IF;
            IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', '@extschema@', 'outbox_later')) IS NULL THEN
                CREATE INDEX outbox_later ON @extschema@.outbox (id)
                    WHERE delivered_at IS NULL AND kind OPERATOR(pg_catalog.<>) 'booking_created';
                added := added OPERATOR(pg_catalog.||) 'index outbox_later'::text;
            END IF;
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_attrdef AS d JOIN pg_catalog.pg_attribute AS a
                             ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid AND a.attnum OPERATOR(pg_catalog.=) d.adnum
                            WHERE d.adrelid OPERATOR(pg_catalog.=) rel AND a.attname OPERATOR(pg_catalog.=) 'created_xid') THEN
                ALTER TABLE @extschema@.outbox ALTER COLUMN created_xid SET DEFAULT pg_catalog.pg_current_xact_id();
                added := added OPERATOR(pg_catalog.||) 'default of created_xid'::text;
            END IF;
            IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', '@extschema@', 'outbox_created_xid')) IS NULL THEN
                CREATE INDEX outbox_created_xid ON @extschema@.outbox (created_xid) WHERE created_xid IS NOT NULL;
                added := added OPERATOR(pg_catalog.||) 'index outbox_created_xid'::text;
            END IF;
        END IF;

        -- code of roles that are not superusers runs no more when a
        -- superuser writes the table
        FOR r IN
            SELECT g.tgname, g.tgfoid::pg_catalog.regprocedure AS func, o.rolname AS owner
              FROM pg_catalog.pg_trigger AS g
              JOIN pg_catalog.pg_proc AS f ON f.oid OPERATOR(pg_catalog.=) g.tgfoid
              JOIN pg_catalog.pg_roles AS o ON o.oid OPERATOR(pg_catalog.=) f.proowner
             WHERE g.tgrelid OPERATOR(pg_catalog.=) rel AND NOT g.tgisinternal
               AND g.tgenabled OPERATOR(pg_catalog.<>) 'D' AND NOT o.rolsuper
             ORDER BY 1
        LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s DISABLE TRIGGER %I', rel::pg_catalog.regclass, r.tgname);
            RAISE WARNING 'okno disabled trigger "%" on table %', r.tgname, t
                USING DETAIL = pg_catalog.format('Its function %s belongs to role %s, which is not a superuser.', r.func, r.owner),
                      HINT = 'A superuser may review it and enable it again with ALTER TABLE ... ENABLE TRIGGER.';
        END LOOP;
        FOR r IN
            SELECT w.rulename FROM pg_catalog.pg_rewrite AS w
             WHERE w.ev_class OPERATOR(pg_catalog.=) rel AND w.ev_enabled OPERATOR(pg_catalog.<>) 'D'
             ORDER BY 1
        LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s DISABLE RULE %I', rel::pg_catalog.regclass, r.rulename);
            RAISE WARNING 'okno disabled rule "%" on table %', r.rulename, t
                USING DETAIL = 'A rule''s actions would run as whoever writes the table, a superuser included.',
                      HINT = 'A superuser may review it and enable it again with ALTER TABLE ... ENABLE RULE.';
        END LOOP;
        IF EXISTS (SELECT FROM pg_catalog.pg_trigger AS g
                    WHERE g.tgrelid OPERATOR(pg_catalog.=) rel AND NOT g.tgisinternal AND g.tgenabled OPERATOR(pg_catalog.<>) 'D')
           OR (SELECT c.relrowsecurity FROM pg_catalog.pg_class AS c WHERE c.oid OPERATOR(pg_catalog.=) rel) THEN
            RAISE WARNING 'table % keeps triggers or row-level security of superusers', t
                USING DETAIL = 'okno creates bookings with plain INSERT statements on a table that has them, as an application would.';
        END IF;

        -- okno's own: a member, owned as a fresh install's table, with no
        -- privilege left but those granted below
        EXECUTE pg_catalog.format('ALTER EXTENSION okno ADD TABLE %s', rel::pg_catalog.regclass);
        EXECUTE pg_catalog.format('ALTER TABLE %s OWNER TO %I', rel::pg_catalog.regclass, CURRENT_USER);
        FOR r IN
            SELECT DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS grantee
              FROM pg_catalog.pg_class AS c, pg_catalog.aclexplode(c.relacl) AS a
             WHERE c.oid OPERATOR(pg_catalog.=) rel AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
             ORDER BY 1
        LOOP
            EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM %s CASCADE', rel::pg_catalog.regclass, r.grantee);
        END LOOP;
        seq := CASE WHEN t OPERATOR(pg_catalog.=) ANY (ARRAY['actors', 'resources', 'bookings'])
                    THEN pg_catalog.pg_get_serial_sequence(pg_catalog.format('%s.%I', '@extschema@', t), 'id') END;
        IF seq IS NOT NULL THEN
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS d
                            WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                              AND d.objid OPERATOR(pg_catalog.=) seq::pg_catalog.regclass
                              AND d.deptype OPERATOR(pg_catalog.=) ANY (ARRAY['e', 'i'])) THEN
                EXECUTE pg_catalog.format('ALTER EXTENSION okno ADD SEQUENCE %s', seq);
            END IF;
            FOR r IN
                SELECT DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                     ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS grantee
                  FROM pg_catalog.pg_class AS c, pg_catalog.aclexplode(c.relacl) AS a
                 WHERE c.oid OPERATOR(pg_catalog.=) seq::pg_catalog.regclass AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
                 ORDER BY 1
            LOOP
                EXECUTE pg_catalog.format('REVOKE ALL ON SEQUENCE %s FROM %s CASCADE', seq, r.grantee);
            END LOOP;
            -- ids go on after the largest one, whoever wrote it
            EXECUTE pg_catalog.format(
                'SELECT pg_catalog.setval(%L, s.v, s.called) FROM'
                ' (SELECT GREATEST(q.last_value, m.id) AS v, q.is_called OR m.id OPERATOR(pg_catalog.>) q.last_value AS called'
                '    FROM %s AS q, (SELECT COALESCE(pg_catalog.max(id), 0) AS id FROM %s) AS m) AS s',
                seq, seq, rel::pg_catalog.regclass);
        END IF;

        EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s', rel::pg_catalog.regclass) INTO n;
        INSERT INTO @extschema@.okno_adoption (relation, former_owner, adopted_at, row_count, added)
        VALUES (t, former, pg_catalog.now(), n, added);
        RAISE WARNING 'okno adopted table %.% of role %', '@extschema@', t, former
            USING DETAIL = CASE WHEN pg_catalog.cardinality(added) OPERATOR(pg_catalog.=) 0 THEN 'Nothing had to be added.'
                                ELSE 'Added: ' OPERATOR(pg_catalog.||) pg_catalog.array_to_string(added, ', ') OPERATOR(pg_catalog.||) '.' END;
    END LOOP;
END
$okno$;

-- how okno took the course's tables over, one row per table; read by
-- okno_verify (rows written before are the course's, with the course's
-- gaps) and by DROP EXTENSION (which leaves these tables in place)
CREATE TABLE @extschema@.okno_adoption (
    relation name NOT NULL,
    former_owner name NOT NULL,
    adopted_at timestamptz NOT NULL,
    row_count bigint,
    added text[] NOT NULL DEFAULT '{}',
    CONSTRAINT okno_adoption_pkey PRIMARY KEY (relation)
);
COMMENT ON TABLE @extschema@.okno_adoption IS
'the course''s tables okno took over at CREATE EXTENSION: when, from whom, and what it added';

DO $okno$
DECLARE
    problems text[] := ARRAY(SELECT @extschema@.okno_adoption_problems());
    elsewhere text;
BEGIN
    IF pg_catalog.cardinality(problems) OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'the tables in schema % cannot serve okno', '@extschema@'
            USING ERRCODE = 'invalid_table_definition',
                  DETAIL = pg_catalog.array_to_string(problems, E'\n'),
                  HINT = 'Change the tables as listed, or move them out of the schema, and run CREATE EXTENSION okno again; nothing was changed.';
    END IF;
    -- the course's tables in another schema: okno's would be a second set
    -- beside them, booking slots their bookings already hold
    SELECT pg_catalog.string_agg(DISTINCT pg_catalog.quote_ident(n.nspname), ', ') INTO elsewhere
      FROM pg_catalog.pg_constraint AS k
      JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) k.conrelid
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
     WHERE k.conname OPERATOR(pg_catalog.=) 'bookings_no_overlap' AND c.relname OPERATOR(pg_catalog.=) 'bookings'
       AND c.relnamespace OPERATOR(pg_catalog.<>) pg_catalog.to_regnamespace('@extschema@');
    IF elsewhere IS NOT NULL AND pg_catalog.to_regclass('@extschema@.bookings') IS NULL THEN
        RAISE WARNING 'okno creates its own tables in schema %, beside the course''s in schema %', '@extschema@', elsewhere
            USING DETAIL = 'okno books only in its own tables; slots the course''s bookings hold are free to it.',
                  HINT = 'To take the course''s tables over instead, DROP EXTENSION okno and CREATE EXTENSION okno SCHEMA ' OPERATOR(pg_catalog.||) elsewhere OPERATOR(pg_catalog.||) '.';
    END IF;
END
$okno$;

-- The tables a fresh install creates, each unless the course's is there
-- to be adopted.
DO $okno$
BEGIN
    IF pg_catalog.to_regclass('@extschema@.actors') IS NULL THEN
        CREATE TABLE @extschema@.actors (
            id integer GENERATED BY DEFAULT AS IDENTITY,
            name text NOT NULL,
            CONSTRAINT actors_pkey PRIMARY KEY (id)
        );
    END IF;
END
$okno$;

DO $okno$
BEGIN
    IF pg_catalog.to_regclass('@extschema@.resources') IS NULL THEN
        CREATE TABLE @extschema@.resources (
            id integer GENERATED BY DEFAULT AS IDENTITY,
            name text NOT NULL,
            CONSTRAINT resources_pkey PRIMARY KEY (id)
        );
    END IF;
END
$okno$;

DO $okno$
BEGIN
    IF pg_catalog.to_regclass('@extschema@.bookings') IS NULL THEN
        CREATE TABLE @extschema@.bookings (
            id bigint GENERATED ALWAYS AS IDENTITY,
            resource_id integer NOT NULL,
            actor_id integer NOT NULL,
            starts_at timestamptz NOT NULL,
            ends_at timestamptz NOT NULL,
            status text NOT NULL DEFAULT 'confirmed',
            created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            CONSTRAINT bookings_pkey PRIMARY KEY (id),
            CONSTRAINT bookings_resource_id_fkey FOREIGN KEY (resource_id)
                REFERENCES @extschema@.resources (id),
            CONSTRAINT bookings_actor_id_fkey FOREIGN KEY (actor_id)
                REFERENCES @extschema@.actors (id),
            CONSTRAINT bookings_status_check
                CHECK (status OPERATOR(pg_catalog.=) ANY (ARRAY['confirmed', 'cancelled']::pg_catalog.text[])),
            CONSTRAINT bookings_check CHECK (starts_at OPERATOR(pg_catalog.<) ends_at),
            CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
                resource_id WITH OPERATOR(pg_catalog.=),
                pg_catalog.tstzrange(starts_at, ends_at) WITH OPERATOR(pg_catalog.&&)
            ) WHERE (status OPERATOR(pg_catalog.=) 'confirmed')
        );
    END IF;
END
$okno$;

DO $okno$
BEGIN
    IF pg_catalog.to_regclass('@extschema@.idempotency') IS NULL THEN
        CREATE TABLE @extschema@.idempotency (
            actor_id integer NOT NULL,
            request_key varchar(80) NOT NULL,
            fingerprint char(64) NOT NULL,
            fingerprint_version smallint NOT NULL DEFAULT 1,
            response_body jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            CONSTRAINT idempotency_pkey PRIMARY KEY (actor_id, request_key),
            CONSTRAINT idempotency_actor_id_fkey FOREIGN KEY (actor_id)
                REFERENCES @extschema@.actors (id)
        );
    END IF;
END
$okno$;

DO $okno$
BEGIN
    IF pg_catalog.to_regclass('@extschema@.outbox') IS NULL THEN
        CREATE TABLE @extschema@.outbox (
            id uuid NOT NULL,
            kind varchar(40) NOT NULL,
            payload jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            delivered_at timestamptz,
            attempts integer NOT NULL DEFAULT 0,
            last_error text,
            available_at timestamptz,
            parked_at timestamptz,
            created_xid xid8 DEFAULT pg_catalog.pg_current_xact_id(),
            CONSTRAINT outbox_pkey PRIMARY KEY (id),
            CONSTRAINT outbox_attempts_check CHECK (attempts OPERATOR(pg_catalog.>=) 0)
        );
        -- pending = not delivered and not parked; available_at rides along so the
        -- status view can tell due from delayed events from the index alone
        CREATE INDEX outbox_pending ON @extschema@.outbox (id) INCLUDE (available_at)
            WHERE delivered_at IS NULL AND parked_at IS NULL;
        CREATE INDEX outbox_parked ON @extschema@.outbox (id)
            WHERE parked_at IS NOT NULL AND delivered_at IS NULL;
        -- a booking's undelivered events, for delivery in order per booking
        CREATE INDEX outbox_order ON @extschema@.outbox ((payload OPERATOR(pg_catalog.->) 'booking_id'), id)
            WHERE delivered_at IS NULL;
        -- the undelivered events that are not a booking's first (a drain's
        -- cursor must not pass one that its batch held back)
        CREATE INDEX outbox_later ON @extschema@.outbox (id)
            WHERE delivered_at IS NULL AND kind OPERATOR(pg_catalog.<>) 'booking_created';
        -- the events by the transaction that wrote them (subscribers' catch-up);
        -- the default subscriber's drain clears created_xid of the events it
        -- delivers that every subscriber has copied, and they leave the index
        CREATE INDEX outbox_created_xid ON @extschema@.outbox (created_xid) WHERE created_xid IS NOT NULL;
    END IF;
END
$okno$;

COMMENT ON TABLE @extschema@.actors IS 'who books: the owner of idempotency keys';
COMMENT ON TABLE @extschema@.resources IS 'what is booked: rooms';
COMMENT ON TABLE @extschema@.bookings IS 'bookings; confirmed ones of a resource never overlap';
COMMENT ON TABLE @extschema@.idempotency IS 'one row per (actor, Idempotency-Key): the fingerprint and the original response';
COMMENT ON TABLE @extschema@.outbox IS 'transactional outbox: events written with the booking, delivered at least once';

-- the course's tables, taken over (once the missing ones exist)
SELECT @extschema@.okno_adopt();

-- okno is trusted: a database owner who is not a superuser may create it.
-- The script runs as the bootstrap superuser, which then owns these tables;
-- the role that ran CREATE EXTENSION gets what using okno needs, with the
-- right to pass it on (to an application role, a relay role ...): reading
-- and writing rows, and on the sequences all there is.  Not TRIGGER, not
-- REFERENCES (nor MAINTAIN, where the server has it): a trigger runs as
-- whoever writes the row, and a foreign key's check reads the referenced
-- table as its owner, casts included, so either would let that role run
-- code of its own as a superuser (docs/PRIVILEGES.md).
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.actors,
    @extschema@.resources, @extschema@.bookings, @extschema@.idempotency,
    @extschema@.outbox
    TO @extowner@ WITH GRANT OPTION;
-- pg_dump dumps the rows of these tables (and the positions of the ids'
-- sequences), so a restored database goes on without id collisions.
SELECT pg_catalog.pg_extension_config_dump('@extschema@.actors', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.resources', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.bookings', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.idempotency', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.outbox', '');
-- the ids' sequences: a fresh install's identities, or an adopted table's
-- serial sequence (by whatever name it has)
DO $okno$
DECLARE
    t text;
    seq text;
BEGIN
    FOREACH t IN ARRAY ARRAY['actors', 'resources', 'bookings'] LOOP
        seq := pg_catalog.pg_get_serial_sequence(pg_catalog.format('%s.%I', '@extschema@', t), 'id');
        CONTINUE WHEN seq IS NULL;
        EXECUTE pg_catalog.format('GRANT USAGE, SELECT, UPDATE ON SEQUENCE %s TO @extowner@ WITH GRANT OPTION', seq);
        PERFORM pg_catalog.pg_extension_config_dump(seq::pg_catalog.regclass, '');
    END LOOP;
END
$okno$;

CREATE FUNCTION @extschema@.okno_create_booking(actor integer, key text, payload jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_create_booking'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_create_booking(integer, text, jsonb) IS
'book a resource idempotently under (actor, key) and queue a booking_created event, in the caller''s transaction';

CREATE FUNCTION @extschema@.okno_canonical(payload jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_canonical'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_canonical(jsonb) IS
'the canonical text (fingerprint version 1) of a booking payload';

CREATE FUNCTION @extschema@.okno_fingerprint(payload jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_fingerprint'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_fingerprint(jsonb) IS
'lowercase hex SHA-256 of okno_canonical(payload)';

-- 0.5.0: the course's form too (fingerprint version 0), for keys its
-- service stored
CREATE FUNCTION @extschema@.okno_canonical(payload jsonb, fingerprint_version smallint)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_canonical_version'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_canonical(jsonb, smallint) IS
'the canonical text of a booking payload in the given fingerprint version (1 okno''s, 0 the course''s)';

CREATE FUNCTION @extschema@.okno_fingerprint(payload jsonb, fingerprint_version smallint)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_fingerprint_version'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_fingerprint(jsonb, smallint) IS
'lowercase hex SHA-256 of okno_canonical(payload, fingerprint_version)';

CREATE FUNCTION @extschema@.okno_drain_once()
RETURNS TABLE (event_id uuid, kind text, payload jsonb)
AS 'MODULE_PATHNAME', 'okno_drain_once_0_2'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_drain_once() IS
'hand one due outbox event to the caller and mark it delivered, in the caller''s transaction';

-- 0.2.0: batch drain, failures and retries, reading and cancelling, retention, status

CREATE FUNCTION @extschema@.okno_drain(max_events integer DEFAULT 100)
RETURNS TABLE (event_id uuid, kind text, payload jsonb, attempts integer)
AS 'MODULE_PATHNAME', 'okno_drain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION @extschema@.okno_drain(integer) IS
'hand up to max_events due outbox events to the caller, in id order, and mark them delivered, in the caller''s transaction';

CREATE FUNCTION @extschema@.okno_record_failure(event_id uuid, error text)
RETURNS @extschema@.outbox
AS 'MODULE_PATHNAME', 'okno_record_failure'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_record_failure(uuid, text) IS
'record a failed delivery: pending again after a backoff, or parked after okno.max_attempts; returns the event''s row';

CREATE FUNCTION @extschema@.okno_release(event_id uuid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_release'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_release(uuid) IS
'hand a drained event back undelivered, without counting an attempt; false if unknown or not delivered';

-- 0.5.0: a relay waits inside the server for the next event (a procedure:
-- it ends the check's transaction, so no snapshot stays while it waits)
CREATE PROCEDURE @extschema@.okno_wait(timeout_ms integer, INOUT woken boolean DEFAULT NULL)
AS 'MODULE_PATHNAME', 'okno_wait'
LANGUAGE C;

COMMENT ON PROCEDURE @extschema@.okno_wait(integer, boolean) IS
'wait up to timeout_ms for an outbox event to be due; woken is true when one may be, false at the timeout';

CREATE FUNCTION @extschema@.okno_requeue(event_id uuid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_requeue'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_requeue(uuid) IS
'unpark an event: attempts reset, available now; false if unknown or delivered';

CREATE FUNCTION @extschema@.okno_get_booking(actor integer, booking_id bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_get_booking'
LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.okno_get_booking(integer, bigint) IS
'the current card of one of the actor''s bookings';

CREATE FUNCTION @extschema@.okno_cancel_booking(actor integer, booking_id bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_cancel_booking'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_cancel_booking(integer, bigint) IS
'cancel one of the actor''s bookings and queue a booking_cancelled event; a cancelled booking is returned as is';

CREATE FUNCTION @extschema@.okno_purge(keys_older_than interval, delivered_older_than interval)
RETURNS TABLE (keys_deleted bigint, events_deleted bigint)
AS 'MODULE_PATHNAME', 'okno_purge_0_5'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_purge(interval, interval) IS
'delete idempotency keys and delivered events older than the given ages, in batches; never events a subscriber still needs';

-- The outbox at a glance.  Everything but "delivered" is counted exactly
-- from the partial indexes (undelivered events only), so the view costs the
-- same however many delivered rows the table holds; "delivered" is
-- estimated from the cumulative statistics' live-row count (a fraction of a
-- second to a few seconds behind).  pending = due_now + delayed +
-- held_back: held_back counts the events that wait for an earlier event of
-- their booking, whatever their own time.
CREATE VIEW @extschema@.okno_outbox_status AS
SELECT p.pending,
       p.due_now,
       p.pending OPERATOR(pg_catalog.-) p.due_now OPERATOR(pg_catalog.-) p.held_back AS delayed,
       k.parked,
       GREATEST(0::bigint,
           pg_catalog.pg_stat_get_live_tuples('@extschema@.outbox'::pg_catalog.regclass)
           OPERATOR(pg_catalog.-) p.pending OPERATOR(pg_catalog.-) k.parked) AS delivered,
       pg_catalog.now() OPERATOR(pg_catalog.-) p.oldest_pending AS oldest_pending_age,
       pg_catalog.now() OPERATOR(pg_catalog.-) p.oldest_due AS oldest_due_age,
       p.held_back
  FROM (SELECT pg_catalog.count(*) AS pending,
               pg_catalog.count(*) FILTER (WHERE NOT o.held AND (o.available_at IS NULL
                   OR o.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS due_now,
               pg_catalog.count(*) FILTER (WHERE o.held) AS held_back,
               pg_catalog.min(o.created_at) AS oldest_pending,
               pg_catalog.min(COALESCE(o.available_at, o.created_at)) FILTER (WHERE NOT o.held AND (o.available_at IS NULL
                   OR o.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS oldest_due
          FROM (SELECT e.created_at, e.available_at,
                       e.kind OPERATOR(pg_catalog.<>) 'booking_created' AND EXISTS (SELECT FROM @extschema@.outbox AS q
                                WHERE (q.payload OPERATOR(pg_catalog.->) 'booking_id') OPERATOR(pg_catalog.=) (e.payload OPERATOR(pg_catalog.->) 'booking_id')
                                  AND q.delivered_at IS NULL
                                  AND q.id OPERATOR(pg_catalog.<>) e.id
                                  AND CASE WHEN (pg_catalog.get_byte(pg_catalog.uuid_send(q.id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7)
                                                OPERATOR(pg_catalog.=) (pg_catalog.get_byte(pg_catalog.uuid_send(e.id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7)
                                           THEN q.id OPERATOR(pg_catalog.<) e.id
                                           ELSE pg_catalog.get_byte(pg_catalog.uuid_send(e.id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7 END) AS held
                  FROM @extschema@.outbox AS e
                 WHERE e.delivered_at IS NULL AND e.parked_at IS NULL) AS o) AS p,
       (SELECT pg_catalog.count(*) AS parked
          FROM @extschema@.outbox AS o
         WHERE o.parked_at IS NOT NULL AND o.delivered_at IS NULL) AS k;

COMMENT ON VIEW @extschema@.okno_outbox_status IS
'outbox counts: pending (due_now + delayed + held_back), parked, delivered (estimated), and the oldest waits';

GRANT SELECT ON @extschema@.okno_outbox_status TO @extowner@ WITH GRANT OPTION;

-- 0.5.0: parked events given up on purpose (okno_discard, below)
CREATE TABLE @extschema@.okno_discarded (
    event_id uuid NOT NULL,
    subscriber text NOT NULL,
    kind varchar(40) NOT NULL,
    payload jsonb NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    parked_at timestamptz,
    discarded_at timestamptz NOT NULL,
    discarded_by name NOT NULL,
    CONSTRAINT okno_discarded_pkey PRIMARY KEY (event_id, subscriber, discarded_at)
);
COMMENT ON TABLE @extschema@.okno_discarded IS
'parked events given up on purpose with okno_discard: the event as it was, who discarded it and when';
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_discarded
    TO @extowner@ WITH GRANT OPTION;

-- 0.5.0: subscribers.  Each has its own delivery state: okno_drain with a
-- subscriber copies the events committed since its last look (judged by
-- the transaction that wrote them, outbox.created_xid, against the
-- snapshot it took then, as PgQ's consumers read their batches), hands out
-- at once those that nothing holds back, and keeps a row of okno_delivery
-- for each of the others (and for those that fail later), from which it
-- hands them out.  The default subscriber keeps its state in outbox
-- itself.
CREATE TABLE @extschema@.okno_subscriber (
    name text NOT NULL,
    subscribed_at timestamptz NOT NULL,
    -- no event committed after the subscription began before this (the
    -- start of the oldest writing transaction then): what a restore into
    -- another cluster copies again
    since timestamptz NOT NULL,
    -- the events that this snapshot sees are copied (or predate the
    -- subscription); taken in the cluster named by copied_system
    copied_snapshot pg_catalog.pg_snapshot NOT NULL,
    copied_system bigint NOT NULL,
    copied_at timestamptz NOT NULL,
    CONSTRAINT okno_subscriber_pkey PRIMARY KEY (name),
    CONSTRAINT okno_subscriber_name_check
        CHECK (name OPERATOR(pg_catalog.~) '^[a-z][a-z0-9_-]{0,62}$' AND name OPERATOR(pg_catalog.<>) 'default')
);
COMMENT ON TABLE @extschema@.okno_subscriber IS
'subscribers besides the default one (okno_subscribe), and how far each has copied the outbox';
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_subscriber
    TO @extowner@ WITH GRANT OPTION;

CREATE TABLE @extschema@.okno_delivery (
    subscriber text NOT NULL,
    event_id uuid NOT NULL,
    booking jsonb,              -- the order key: the event's payload -> 'booking_id'
    first boolean NOT NULL,     -- a booking_created event (first of its booking)
    delivered_at timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    available_at timestamptz,
    parked_at timestamptz,
    CONSTRAINT okno_delivery_pkey PRIMARY KEY (subscriber, event_id),
    CONSTRAINT okno_delivery_attempts_check CHECK (attempts OPERATOR(pg_catalog.>=) 0)
);
-- the same partial indexes as outbox's, per subscriber: delivered rows
-- leave them
CREATE INDEX okno_delivery_pending ON @extschema@.okno_delivery (subscriber, event_id) INCLUDE (available_at)
    WHERE delivered_at IS NULL AND parked_at IS NULL;
CREATE INDEX okno_delivery_parked ON @extschema@.okno_delivery (subscriber, event_id)
    WHERE parked_at IS NOT NULL AND delivered_at IS NULL;
CREATE INDEX okno_delivery_order ON @extschema@.okno_delivery (subscriber, booking, event_id)
    WHERE delivered_at IS NULL;
COMMENT ON TABLE @extschema@.okno_delivery IS
'each subscriber''s delivery state of the copied events it was not handed at once: pending, held back, retried, parked, or delivered since';
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_delivery
    TO @extowner@ WITH GRANT OPTION;

-- 0.3.0: the invariant checker

-- okno_purge records how far back it has purged, so that okno_verify can
-- tell a key or event purged on purpose from one that is missing.  One row
-- at most, written by okno_purge.
CREATE TABLE @extschema@.okno_purge_horizon (
    singleton boolean NOT NULL DEFAULT true,
    keys_purged_before timestamptz,
    events_purged_before timestamptz,
    CONSTRAINT okno_purge_horizon_pkey PRIMARY KEY (singleton),
    CONSTRAINT okno_purge_horizon_singleton CHECK (singleton)
);
COMMENT ON TABLE @extschema@.okno_purge_horizon IS
'how far back okno_purge has deleted keys and delivered events';
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_purge_horizon
    TO @extowner@ WITH GRANT OPTION;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_purge_horizon', '');

-- The body is parsed once, here (BEGIN ATOMIC), so every name in it is
-- bound now and no caller's search_path can change what it reads.
CREATE FUNCTION @extschema@.okno_verify()
RETURNS TABLE (problem text, detail text)
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
  WITH horizon AS (
    SELECT COALESCE((SELECT h.keys_purged_before FROM @extschema@.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS keys,
           COALESCE((SELECT h.events_purged_before FROM @extschema@.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS events,
           -- what the course's service wrote before okno adopted its
           -- tables: bookings from before keys or events existed
           COALESCE((SELECT pg_catalog.max(a.adopted_at) FROM @extschema@.okno_adoption AS a), '-infinity'::pg_catalog.timestamptz) AS adopted
  ),
  keyed AS (
    SELECT i.actor_id, i.request_key, i.fingerprint, i.response_body,
           i.fingerprint_version OPERATOR(pg_catalog.=) 0 AS course,
           CASE WHEN pg_catalog.jsonb_typeof(i.response_body OPERATOR(pg_catalog.->) 'id') OPERATOR(pg_catalog.=) 'number'
                THEN (i.response_body OPERATOR(pg_catalog.->>) 'id')::pg_catalog.numeric END AS booking_id,
           -- the instants as stored in the response, when they have okno's
           -- form (the course's service wrote them at any offset)
           CASE WHEN (i.response_body OPERATOR(pg_catalog.->>) 'starts_at') OPERATOR(pg_catalog.~)
                     CASE WHEN i.fingerprint_version OPERATOR(pg_catalog.=) 0
                          THEN '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$'
                          ELSE '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$' END
                THEN (i.response_body OPERATOR(pg_catalog.->>) 'starts_at')::pg_catalog.timestamptz END AS starts_at,
           CASE WHEN (i.response_body OPERATOR(pg_catalog.->>) 'ends_at') OPERATOR(pg_catalog.~)
                     CASE WHEN i.fingerprint_version OPERATOR(pg_catalog.=) 0
                          THEN '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$'
                          ELSE '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$' END
                THEN (i.response_body OPERATOR(pg_catalog.->>) 'ends_at')::pg_catalog.timestamptz END AS ends_at
      FROM @extschema@.idempotency AS i
  ),
  events AS (
    SELECT o.id, o.kind, o.attempts, o.last_error, o.delivered_at, o.parked_at,
           CASE WHEN pg_catalog.jsonb_typeof(o.payload OPERATOR(pg_catalog.->) 'booking_id') OPERATOR(pg_catalog.=) 'number'
                THEN (o.payload OPERATOR(pg_catalog.->>) 'booking_id')::pg_catalog.numeric END AS booking_id
      FROM @extschema@.outbox AS o
  )
  SELECT v.problem, v.detail FROM (
    SELECT 'booking without idempotency row'::pg_catalog.text AS problem,
           pg_catalog.format('booking %s of actor %s', b.id, b.actor_id) AS detail
      FROM @extschema@.bookings AS b, horizon
     WHERE b.created_at OPERATOR(pg_catalog.>=) horizon.keys
       AND b.created_at OPERATOR(pg_catalog.>) horizon.adopted
       AND NOT EXISTS (SELECT FROM keyed AS k WHERE k.booking_id OPERATOR(pg_catalog.=) b.id)
    UNION ALL
    SELECT 'idempotency row without booking',
           pg_catalog.format('key %s of actor %s names booking %s', k.request_key, k.actor_id, k.booking_id)
      FROM keyed AS k
     WHERE NOT EXISTS (SELECT FROM @extschema@.bookings AS b WHERE b.id OPERATOR(pg_catalog.=) k.booking_id)
    UNION ALL
    SELECT 'response does not match its booking',
           pg_catalog.format('key %s of actor %s, booking %s', k.request_key, k.actor_id, b.id)
      FROM keyed AS k JOIN @extschema@.bookings AS b ON b.id OPERATOR(pg_catalog.=) k.booking_id
     WHERE b.actor_id OPERATOR(pg_catalog.<>) k.actor_id
        -- (the course's cards may lack a field; what they have must match)
        OR ((NOT k.course OR k.response_body OPERATOR(pg_catalog.?) 'actor_id')
            AND (k.response_body OPERATOR(pg_catalog.->>) 'actor_id') IS DISTINCT FROM b.actor_id::pg_catalog.text)
        OR ((NOT k.course OR k.response_body OPERATOR(pg_catalog.?) 'resource_id')
            AND (k.response_body OPERATOR(pg_catalog.->>) 'resource_id') IS DISTINCT FROM b.resource_id::pg_catalog.text)
        OR k.starts_at IS DISTINCT FROM b.starts_at
        OR k.ends_at IS DISTINCT FROM b.ends_at
    UNION ALL
    SELECT 'booking without booking_created event',
           pg_catalog.format('booking %s of actor %s', b.id, b.actor_id)
      FROM @extschema@.bookings AS b, horizon
     WHERE b.created_at OPERATOR(pg_catalog.>=) horizon.events
       AND b.created_at OPERATOR(pg_catalog.>) horizon.adopted
       AND NOT EXISTS (SELECT FROM events AS e
                        WHERE e.kind OPERATOR(pg_catalog.=) 'booking_created'
                          AND e.booking_id OPERATOR(pg_catalog.=) b.id)
    UNION ALL
    SELECT 'event without booking',
           pg_catalog.format('%s event %s names booking %s', e.kind, e.id, COALESCE(e.booking_id::pg_catalog.text, '(none)'))
      FROM events AS e
     WHERE e.kind OPERATOR(pg_catalog.=) ANY (ARRAY['booking_created', 'booking_cancelled']::pg_catalog.text[])
       AND NOT EXISTS (SELECT FROM @extschema@.bookings AS b WHERE b.id OPERATOR(pg_catalog.=) e.booking_id)
    UNION ALL
    SELECT 'more than one booking_created event',
           pg_catalog.format('booking %s has %s', e.booking_id, pg_catalog.count(*))
      FROM events AS e
     WHERE e.kind OPERATOR(pg_catalog.=) 'booking_created'
     GROUP BY e.booking_id
    HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1
    UNION ALL
    SELECT 'overlapping confirmed bookings',
           pg_catalog.format('bookings %s and %s of resource %s', a.id, b.id, a.resource_id)
      FROM @extschema@.bookings AS a JOIN @extschema@.bookings AS b
        ON b.resource_id OPERATOR(pg_catalog.=) a.resource_id
       AND a.id OPERATOR(pg_catalog.<) b.id
       AND pg_catalog.tstzrange(a.starts_at, a.ends_at) OPERATOR(pg_catalog.&&) pg_catalog.tstzrange(b.starts_at, b.ends_at)
     WHERE a.status OPERATOR(pg_catalog.=) 'confirmed' AND b.status OPERATOR(pg_catalog.=) 'confirmed'
    UNION ALL
    SELECT 'failed event without last_error',
           pg_catalog.format('event %s has %s attempts', e.id, e.attempts)
      FROM events AS e
     WHERE e.attempts OPERATOR(pg_catalog.>) 0 AND e.last_error IS NULL
    UNION ALL
    SELECT 'event both delivered and parked', pg_catalog.format('event %s', e.id)
      FROM events AS e
     WHERE e.delivered_at IS NOT NULL AND e.parked_at IS NOT NULL
    UNION ALL
    SELECT 'malformed fingerprint', pg_catalog.format('key %s of actor %s', k.request_key, k.actor_id)
      FROM keyed AS k
     WHERE k.fingerprint::pg_catalog.text OPERATOR(pg_catalog.!~) '^[0-9a-f]{64}$'
    UNION ALL
    SELECT 'discarded event still pending',
           pg_catalog.format('event %s of subscriber %s', d.event_id, d.subscriber)
      FROM @extschema@.okno_discarded AS d
      JOIN @extschema@.outbox AS o ON o.id OPERATOR(pg_catalog.=) d.event_id
     WHERE d.subscriber OPERATOR(pg_catalog.=) 'default' AND o.delivered_at IS NULL
    UNION ALL
    SELECT 'discard record does not match its event',
           pg_catalog.format('event %s of subscriber %s', d.event_id, d.subscriber)
      FROM @extschema@.okno_discarded AS d
      JOIN @extschema@.outbox AS o ON o.id OPERATOR(pg_catalog.=) d.event_id
     WHERE o.kind::pg_catalog.text OPERATOR(pg_catalog.<>) d.kind::pg_catalog.text
        OR o.payload OPERATOR(pg_catalog.<>) d.payload
    UNION ALL
    SELECT 'discarded event still pending',
           pg_catalog.format('event %s of subscriber %s', d.event_id, d.subscriber)
      FROM @extschema@.okno_discarded AS d
      JOIN @extschema@.okno_delivery AS x
        ON x.subscriber OPERATOR(pg_catalog.=) d.subscriber AND x.event_id OPERATOR(pg_catalog.=) d.event_id
     WHERE x.delivered_at IS NULL
    UNION ALL
    SELECT 'delivery state of an unknown subscriber',
           pg_catalog.format('event %s of subscriber %s', x.event_id, x.subscriber)
      FROM @extschema@.okno_delivery AS x
     WHERE NOT EXISTS (SELECT FROM @extschema@.okno_subscriber AS u
                        WHERE u.name OPERATOR(pg_catalog.=) x.subscriber)
    UNION ALL
    SELECT 'delivery state of a missing event',
           pg_catalog.format('event %s of subscriber %s', x.event_id, x.subscriber)
      FROM @extschema@.okno_delivery AS x
     WHERE NOT EXISTS (SELECT FROM @extschema@.outbox AS o
                        WHERE o.id OPERATOR(pg_catalog.=) x.event_id)
    UNION ALL
    SELECT 'event both delivered and parked',
           pg_catalog.format('event %s of subscriber %s', x.event_id, x.subscriber)
      FROM @extschema@.okno_delivery AS x
     WHERE x.delivered_at IS NOT NULL AND x.parked_at IS NOT NULL
  ) AS v
  ORDER BY 1, 2;
END;

COMMENT ON FUNCTION @extschema@.okno_verify() IS
'okno''s invariants: one row per problem found, none when the data is consistent';

-- okno_create_booking, telling a replay from a creation
CREATE FUNCTION @extschema@.okno_create_booking_result(actor integer, key text, payload jsonb,
                                                      OUT card jsonb, OUT replayed boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'okno_create_booking_result'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_create_booking_result(integer, text, jsonb) IS
'okno_create_booking, also saying whether the card is a replay of a stored response';

-- okno's errors as data, for any HTTP layer to map
CREATE FUNCTION @extschema@.okno_errors()
RETURNS TABLE (code text, sqlstate text, http_status integer, message text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
  SELECT e.code, e.sqlstate, e.http_status, e.message
    FROM (VALUES
      ('invalid_key'::pg_catalog.text, 'OKB01'::pg_catalog.text, 422, 'invalid idempotency key'::pg_catalog.text),
      ('invalid_payload', 'OKB02', 422, 'invalid booking payload'),
      ('resource_missing', 'OKB03', 404, 'resource does not exist'),
      ('key_reused', 'OKB04', 409, 'idempotency key was already used with a different payload'),
      ('slot_busy', 'OKB05', 409, 'the time slot is already booked'),
      ('actor_missing', 'OKB06', 403, 'actor does not exist'),
      ('booking_missing', 'OKB07', 404, 'booking does not exist'),
      ('event_missing', 'OKB08', 404, 'outbox event does not exist'),
      ('subscriber_missing', 'OKB09', 404, 'subscriber does not exist'),
      ('concurrent_request', '40001', 503, 'could not serialize access due to a concurrent request; retry the transaction')
    ) AS e(code, sqlstate, http_status, message)
   ORDER BY e.sqlstate;
END;

COMMENT ON FUNCTION @extschema@.okno_errors() IS
'okno''s errors: code, SQLSTATE, HTTP status and message, for an HTTP layer to map';

-- Where the first due outbox event was when a drain last scanned the pending
-- index from its start: a fresh session's first drain starts there instead of
-- walking the index entries that delivered events leave behind until VACUUM.
-- Only a hint (never a bound): the high 64 bits of that event's id, sign bit
-- flipped so that bigint order is uuid order.  okno reads and writes it as
-- the sequence's owner; it is not dumped (a restored database starts
-- without a hint).
CREATE SEQUENCE @extschema@.okno_drain_hint AS bigint
    MINVALUE -9223372036854775808 START WITH -9223372036854775808 NO CYCLE;
COMMENT ON SEQUENCE @extschema@.okno_drain_hint IS
'where okno_drain''s last scan from the start found the first due event (a hint for new sessions)';
GRANT USAGE, SELECT, UPDATE ON SEQUENCE @extschema@.okno_drain_hint
    TO @extowner@ WITH GRANT OPTION;

-- 0.5.0: dead-letter tools.  A parked event is requeued, or given up on
-- purpose: okno_discard keeps a record of what was discarded, by whom and
-- when (okno_verify checks it), and the event counts as done.
CREATE FUNCTION @extschema@.okno_requeue_parked(subscriber text DEFAULT NULL, kind text DEFAULT NULL,
                                               error_like text DEFAULT NULL,
                                               parked_before timestamptz DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'okno_requeue_parked'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_requeue_parked(text, text, text, timestamptz) IS
'requeue the parked events that match every filter given (NULL: any), in id order; returns how many';

CREATE FUNCTION @extschema@.okno_discard(event_id uuid, subscriber text DEFAULT 'default')
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_discard'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_discard(uuid, text) IS
'give a parked event up: recorded in okno_discarded, never handed out again; false if it is not parked';

-- 0.5.0: the adoption's record, and what keeps adopted tables when okno
-- goes
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_adoption
    TO @extowner@ WITH GRANT OPTION;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_adoption', '');
-- (and the dead-letter tools' record and the subscribers' state, created
-- before okno_verify above)
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_discarded', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_subscriber', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_delivery', '');

-- DROP EXTENSION okno (and DROP OWNED BY its owner) first takes the tables
-- okno adopted out of the extension, so they stay with their rows
CREATE FUNCTION @extschema@.okno_drop_guard()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'okno_drop_guard'
LANGUAGE C;

COMMENT ON FUNCTION @extschema@.okno_drop_guard() IS
'releases the tables okno adopted from the extension before DROP EXTENSION okno drops it';

CREATE EVENT TRIGGER okno_drop_guard ON ddl_command_start
    WHEN TAG IN ('DROP EXTENSION', 'DROP OWNED')
    EXECUTE FUNCTION @extschema@.okno_drop_guard();

DROP FUNCTION @extschema@.okno_adopt();
DROP FUNCTION @extschema@.okno_adoption_problems();
DROP FUNCTION @extschema@.okno_adoption_column(text, text);

-- 0.5.0: subscribers (the tables are above okno_verify)
CREATE FUNCTION @extschema@.okno_subscribe(subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_subscribe'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_subscribe(text) IS
'add a subscriber: it receives every event committed after this; false if it exists already';

CREATE FUNCTION @extschema@.okno_unsubscribe(subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_unsubscribe'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_unsubscribe(text) IS
'remove a subscriber and its delivery state; false if there is no such subscriber';

CREATE FUNCTION @extschema@.okno_drain(max_events integer, subscriber text)
RETURNS TABLE (event_id uuid, kind text, payload jsonb, attempts integer)
AS 'MODULE_PATHNAME', 'okno_drain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION @extschema@.okno_drain(integer, text) IS
'hand up to max_events events due for a subscriber to the caller, in id order, and mark them delivered for it, in the caller''s transaction';

CREATE FUNCTION @extschema@.okno_drain_once(subscriber text)
RETURNS TABLE (event_id uuid, kind text, payload jsonb)
AS 'MODULE_PATHNAME', 'okno_drain_once_0_2'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_drain_once(text) IS
'hand one event due for a subscriber to the caller and mark it delivered for it, in the caller''s transaction';

CREATE PROCEDURE @extschema@.okno_wait(timeout_ms integer, INOUT woken boolean, subscriber text)
AS 'MODULE_PATHNAME', 'okno_wait'
LANGUAGE C;

COMMENT ON PROCEDURE @extschema@.okno_wait(integer, boolean, text) IS
'wait up to timeout_ms for an event to be due for a subscriber: CALL okno_wait(ms, NULL, subscriber); woken is true when one may be, false at the timeout';

CREATE FUNCTION @extschema@.okno_record_failure(event_id uuid, error text, subscriber text)
RETURNS @extschema@.okno_delivery
AS 'MODULE_PATHNAME', 'okno_record_failure'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_record_failure(uuid, text, text) IS
'record a failed delivery to a subscriber: pending again after a backoff, or parked; returns its delivery state';

CREATE FUNCTION @extschema@.okno_release(event_id uuid, subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_release'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_release(uuid, text) IS
'hand an event drained for a subscriber back undelivered, without counting an attempt; false if not delivered to it';

CREATE FUNCTION @extschema@.okno_requeue(event_id uuid, subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_requeue'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_requeue(uuid, text) IS
'unpark an event for a subscriber: attempts reset, available now; false if it has no undelivered copy';

-- Each subscriber at a glance, the default one first: what okno_outbox_status
-- counts for the default subscriber, for every subscriber.  not_copied
-- counts the events committed since its drains last looked (they are also
-- in pending and due_now).
CREATE VIEW @extschema@.okno_subscribers AS
SELECT v.* FROM (
SELECT 'default'::pg_catalog.text AS subscriber, NULL::pg_catalog.timestamptz AS subscribed_at,
       s.pending, s.due_now, s.delayed, s.parked, s.held_back, 0::bigint AS not_copied,
       s.oldest_pending_age, NULL::pg_catalog.timestamptz AS copied_at
  FROM @extschema@.okno_outbox_status AS s
UNION ALL
SELECT u.name, u.subscribed_at,
       d.pending OPERATOR(pg_catalog.+) n.not_copied,
       d.due_now OPERATOR(pg_catalog.+) n.not_copied,
       d.pending OPERATOR(pg_catalog.-) d.due_now OPERATOR(pg_catalog.-) d.held_back,
       d.parked, d.held_back, n.not_copied,
       pg_catalog.now() OPERATOR(pg_catalog.-) LEAST(d.oldest, n.oldest),
       u.copied_at
  FROM @extschema@.okno_subscriber AS u,
       LATERAL (SELECT pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL) AS pending,
                       pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL AND NOT x.held AND (x.available_at IS NULL
                           OR x.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS due_now,
                       pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL AND x.held) AS held_back,
                       pg_catalog.count(*) FILTER (WHERE x.parked_at IS NOT NULL) AS parked,
                       pg_catalog.min(x.created_at) FILTER (WHERE x.parked_at IS NULL) AS oldest
                  FROM (SELECT e.created_at, p.available_at, p.parked_at,
                               NOT p.first AND EXISTS (SELECT FROM @extschema@.okno_delivery AS q
                                        WHERE q.subscriber OPERATOR(pg_catalog.=) p.subscriber
                                          AND q.booking OPERATOR(pg_catalog.=) p.booking
                                          AND q.delivered_at IS NULL
                                          AND q.event_id OPERATOR(pg_catalog.<>) p.event_id
                                          AND CASE WHEN (pg_catalog.get_byte(pg_catalog.uuid_send(q.event_id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7)
                                                        OPERATOR(pg_catalog.=) (pg_catalog.get_byte(pg_catalog.uuid_send(p.event_id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7)
                                                   THEN q.event_id OPERATOR(pg_catalog.<) p.event_id
                                                   ELSE pg_catalog.get_byte(pg_catalog.uuid_send(p.event_id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7 END) AS held
                          FROM @extschema@.okno_delivery AS p
                          JOIN @extschema@.outbox AS e ON e.id OPERATOR(pg_catalog.=) p.event_id
                         WHERE p.subscriber OPERATOR(pg_catalog.=) u.name AND p.delivered_at IS NULL) AS x) AS d,
       LATERAL (SELECT pg_catalog.count(*) AS not_copied, pg_catalog.min(e.created_at) AS oldest
                  FROM @extschema@.outbox AS e
                 WHERE e.created_xid OPERATOR(pg_catalog.>=) pg_catalog.pg_snapshot_xmin(u.copied_snapshot)
                   AND NOT pg_catalog.pg_visible_in_snapshot(e.created_xid, u.copied_snapshot)) AS n
) AS v
ORDER BY v.subscriber OPERATOR(pg_catalog.<>) 'default', v.subscriber;

COMMENT ON VIEW @extschema@.okno_subscribers IS
'each subscriber''s counts (the default one first): pending (due_now + delayed + held_back), parked, not yet copied, and the oldest wait';

GRANT SELECT ON @extschema@.okno_subscribers TO @extowner@ WITH GRANT OPTION;
