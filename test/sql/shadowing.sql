--
-- shadowing: the caller's search_path and pg_temp hold objects named like
-- every table, function, aggregate, operator and type okno uses (or could
-- be fooled by), placed before pg_catalog.  Each decoy detects its own use:
-- functions, aggregates (their final function), operators (their function)
-- and domains (their CHECK) raise SQLSTATE DCOY1 "decoy used: <which>";
-- decoy tables have statement triggers that raise the same on any write,
-- and stay empty, so a read of one would show as a wrong result.  okno is
-- exercised end to end under several search_paths, then installed into a
-- schema absent from the search_path with decoys in public as well, and
-- exercised again.  At the end setup.sql's state is restored.
--

-- the probe: a trip wire, and helpers whose every name is qualified, so
-- that they themselves never resolve anything through the search_path
CREATE SCHEMA shadow_probe;
CREATE FUNCTION shadow_probe.trip(what pg_catalog.text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'decoy used: %', what USING ERRCODE = 'DCOY1';
END
$$;
CREATE FUNCTION shadow_probe.trip_b(what pg_catalog.text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM shadow_probe.trip(what);
END
$$;
CREATE FUNCTION shadow_probe.trip_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM shadow_probe.trip(TG_ARGV[0]);
END
$$;

-- try(q): q's first column of its first row as text, or the error it
-- raised as "SQLSTATE message | detail | constraint"
CREATE FUNCTION shadow_probe.try(q pg_catalog.text) RETURNS pg_catalog.text
LANGUAGE plpgsql AS $$
DECLARE
    r pg_catalog.text;
    det pg_catalog.text;
    con pg_catalog.text;
BEGIN
    EXECUTE q INTO r;
    RETURN r;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS det = PG_EXCEPTION_DETAIL, con = CONSTRAINT_NAME;
    r := pg_catalog.concat(SQLSTATE, ' ', SQLERRM);
    IF det OPERATOR(pg_catalog.<>) '' THEN
        r := pg_catalog.concat(r, ' | ', det);
    END IF;
    IF con OPERATOR(pg_catalog.<>) '' THEN
        r := pg_catalog.concat(r, ' | constraint ', con);
    END IF;
    RETURN r;
END
$$;

-- probe(q): runs q, always rolls it back, and says which decoy it used
-- ("-" for none)
CREATE FUNCTION shadow_probe.probe(q pg_catalog.text) RETURNS pg_catalog.text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RAISE EXCEPTION USING ERRCODE = 'PRB00';
EXCEPTION WHEN OTHERS THEN
    IF SQLSTATE OPERATOR(pg_catalog.=) 'PRB00' THEN
        RETURN '-';
    END IF;
    IF SQLSTATE OPERATOR(pg_catalog.=) 'DCOY1' THEN
        RETURN pg_catalog.substr(SQLERRM, 13);
    END IF;
    RETURN pg_catalog.concat(SQLSTATE, ' ', SQLERRM);
END
$$;

-- the decoys, one row each; plant(schema, okno's schema) creates them all in
-- a schema and remembers how to drop them, uproot(schema) drops them
CREATE TABLE shadow_probe.spec (
    ord int PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL,     -- table, function, aggregate, operator, type
    name text NOT NULL,
    args text NOT NULL,     -- argument types; the base type of a domain
    ret text NOT NULL,
    probe text NOT NULL     -- an unqualified use of the name
);
INSERT INTO shadow_probe.spec (kind, name, args, ret, probe) VALUES
  ('table', 'actors', '', '', 'DELETE FROM actors WHERE false'),
  ('table', 'resources', '', '', 'DELETE FROM resources WHERE false'),
  ('table', 'bookings', '', '', 'DELETE FROM bookings WHERE false'),
  ('table', 'idempotency', '', '', 'DELETE FROM idempotency WHERE false'),
  ('table', 'outbox', '', '', 'DELETE FROM outbox WHERE false'),
  ('table', 'okno_purge_horizon', '', '', 'DELETE FROM okno_purge_horizon WHERE false'),
  ('table', 'okno_key', '', '', 'DELETE FROM okno_key WHERE false'),
  ('table', 'okno_key_tombstone', '', '', 'DELETE FROM okno_key_tombstone WHERE false'),
  ('function', 'now', '', 'timestamptz', 'SELECT now()'),
  ('function', 'clock_timestamp', '', 'timestamptz', 'SELECT clock_timestamp()'),
  ('function', 'statement_timestamp', '', 'timestamptz', 'SELECT statement_timestamp()'),
  ('function', 'transaction_timestamp', '', 'timestamptz', 'SELECT transaction_timestamp()'),
  ('function', 'tstzrange', 'timestamptz, timestamptz', 'tstzrange', 'SELECT tstzrange(NULL::pg_catalog.timestamptz, NULL::pg_catalog.timestamptz)'),
  ('function', 'tstzrange', 'timestamptz, timestamptz, text', 'tstzrange', 'SELECT tstzrange(NULL::pg_catalog.timestamptz, NULL::pg_catalog.timestamptz, ''[)''::pg_catalog.text)'),
  ('function', 'sha256', 'bytea', 'bytea', 'SELECT sha256(NULL::pg_catalog.bytea)'),
  ('function', 'convert_to', 'text, name', 'bytea', 'SELECT convert_to(NULL::pg_catalog.text, NULL::pg_catalog.name)'),
  ('function', 'octet_length', 'bytea', 'int4', 'SELECT octet_length(NULL::pg_catalog.bytea)'),
  ('function', 'encode', 'bytea, text', 'text', 'SELECT encode(NULL::pg_catalog.bytea, NULL::pg_catalog.text)'),
  ('function', 'jsonb_strip_nulls', 'jsonb', 'jsonb', 'SELECT jsonb_strip_nulls(NULL::pg_catalog.jsonb)'),
  ('function', 'hashtext', 'text', 'int4', 'SELECT hashtext(NULL::pg_catalog.text)'),
  ('function', 'hashtextextended', 'text, int8', 'int8', 'SELECT hashtextextended(NULL::pg_catalog.text, NULL::pg_catalog.int8)'),
  ('function', 'jsonb_build_object', '', 'jsonb', 'SELECT jsonb_build_object()'),
  ('function', 'jsonb_build_object', 'VARIADIC text[]', 'jsonb', 'SELECT jsonb_build_object(VARIADIC NULL::pg_catalog.text[])'),
  ('function', 'jsonb_build_object', 'text, int4', 'jsonb', 'SELECT jsonb_build_object(''k''::pg_catalog.text, NULL::pg_catalog.int4)'),
  ('function', 'jsonb_build_object', 'text, int8', 'jsonb', 'SELECT jsonb_build_object(''k''::pg_catalog.text, NULL::pg_catalog.int8)'),
  ('function', 'jsonb_build_object', 'text, text', 'jsonb', 'SELECT jsonb_build_object(''k''::pg_catalog.text, NULL::pg_catalog.text)'),
  ('function', 'to_jsonb', 'anyelement', 'jsonb', 'SELECT to_jsonb(NULL::pg_catalog.int4)'),
  ('function', 'jsonb_typeof', 'jsonb', 'text', 'SELECT jsonb_typeof(NULL::pg_catalog.jsonb)'),
  ('function', 'jsonb_object_field', 'jsonb, text', 'jsonb', 'SELECT jsonb_object_field(NULL::pg_catalog.jsonb, NULL::pg_catalog.text)'),
  ('function', 'jsonb_object_field_text', 'jsonb, text', 'text', 'SELECT jsonb_object_field_text(NULL::pg_catalog.jsonb, NULL::pg_catalog.text)'),
  ('function', 'format', 'text', 'text', 'SELECT format(NULL::pg_catalog.text)'),
  ('function', 'format', 'text, VARIADIC text[]', 'text', 'SELECT format(NULL::pg_catalog.text, NULL::pg_catalog.text, NULL::pg_catalog.text)'),
  ('function', 'concat', 'VARIADIC text[]', 'text', 'SELECT concat(NULL::pg_catalog.text, NULL::pg_catalog.text)'),
  ('function', 'concat_ws', 'text, VARIADIC text[]', 'text', 'SELECT concat_ws(NULL::pg_catalog.text, NULL::pg_catalog.text)'),
  ('function', 'coalesce', 'anyelement, anyelement', 'anyelement', 'SELECT "coalesce"(NULL::pg_catalog.int4, NULL::pg_catalog.int4)'),
  ('function', 'nullif', 'anyelement, anyelement', 'anyelement', 'SELECT "nullif"(NULL::pg_catalog.int4, NULL::pg_catalog.int4)'),
  ('function', 'greatest', 'anyelement, anyelement', 'anyelement', 'SELECT "greatest"(NULL::pg_catalog.int4, NULL::pg_catalog.int4)'),
  ('function', 'least', 'anyelement, anyelement', 'anyelement', 'SELECT "least"(NULL::pg_catalog.int4, NULL::pg_catalog.int4)'),
  ('function', 'pg_advisory_xact_lock', 'int8', 'void', 'SELECT pg_advisory_xact_lock(NULL::pg_catalog.int8)'),
  ('function', 'pg_advisory_xact_lock', 'int4, int4', 'void', 'SELECT pg_advisory_xact_lock(NULL::pg_catalog.int4, NULL::pg_catalog.int4)'),
  ('function', 'pg_try_advisory_xact_lock', 'int8', 'bool', 'SELECT pg_try_advisory_xact_lock(NULL::pg_catalog.int8)'),
  ('function', 'pg_advisory_lock', 'int8', 'void', 'SELECT pg_advisory_lock(NULL::pg_catalog.int8)'),
  ('function', 'pg_notify', 'text, text', 'void', 'SELECT pg_notify(''shadow_probe''::pg_catalog.text, NULL::pg_catalog.text)'),
  ('function', 'gen_random_uuid', '', 'uuid', 'SELECT gen_random_uuid()'),
  ('function', 'nextval', 'regclass', 'int8', 'SELECT nextval(NULL::pg_catalog.regclass)'),
  ('function', 'random', '', 'float8', 'SELECT random()'),
  ('function', 'pg_stat_get_live_tuples', 'oid', 'int8', 'SELECT pg_stat_get_live_tuples(NULL::pg_catalog.oid)'),
  ('function', 'current_setting', 'text', 'text', 'SELECT current_setting(NULL::pg_catalog.text)'),
  ('function', 'set_config', 'text, text, bool', 'text', 'SELECT set_config(''application_name''::pg_catalog.text, NULL::pg_catalog.text, true)'),
  ('function', 'pg_backend_pid', '', 'int4', 'SELECT pg_backend_pid()'),
  ('function', 'text', 'varchar', 'text', 'SELECT text(NULL::pg_catalog.varchar)'),
  ('function', 'int8', 'int4', 'int8', 'SELECT int8(NULL::pg_catalog.int4)'),
  ('function', 'length', 'text', 'int4', 'SELECT length(NULL::pg_catalog.text)'),
  ('aggregate', 'count', '*', 'int8', 'SELECT count(*) FROM pg_catalog.pg_am'),
  ('aggregate', 'min', 'timestamptz', 'timestamptz', 'SELECT min(NULL::pg_catalog.timestamptz)'),
  ('aggregate', 'max', 'timestamptz', 'timestamptz', 'SELECT max(NULL::pg_catalog.timestamptz)'),
  ('aggregate', 'string_agg', 'text, text', 'text', 'SELECT string_agg(NULL::pg_catalog.text, NULL::pg_catalog.text)'),
  ('type', 'text', 'text', '', 'SELECT NULL::text'),
  ('type', 'jsonb', 'jsonb', '', 'SELECT NULL::jsonb'),
  ('type', 'uuid', 'uuid', '', 'SELECT NULL::uuid'),
  ('type', 'timestamptz', 'timestamptz', '', 'SELECT NULL::timestamptz'),
  ('type', 'tstzrange', 'tstzrange', '', 'SELECT NULL::tstzrange'),
  ('type', 'int2', 'int2', '', 'SELECT NULL::int2'),
  ('type', 'int4', 'int4', '', 'SELECT NULL::int4'),
  ('type', 'int8', 'int8', '', 'SELECT NULL::int8'),
  ('type', 'float8', 'float8', '', 'SELECT NULL::float8'),
  ('type', 'bool', 'bool', '', 'SELECT NULL::bool'),
  ('type', 'bpchar', 'bpchar', '', 'SELECT NULL::bpchar'),
  ('type', 'bytea', 'bytea', '', 'SELECT NULL::bytea'),
  ('type', 'oid', 'oid', '', 'SELECT NULL::oid'),
  ('type', 'regclass', 'regclass', '', 'SELECT NULL::regclass');
-- operators: every one okno's statements name (always as OPERATOR(pg_catalog.x)),
-- with the exact argument types they are applied to
INSERT INTO shadow_probe.spec (kind, name, args, ret, probe)
SELECT 'operator', op, l || ', ' || r, ret,
       format('SELECT NULL::pg_catalog.%s %s NULL::pg_catalog.%s', l, op, r)
  FROM (VALUES
    ('=', 'int4', 'int4', 'bool'), ('=', 'int8', 'int8', 'bool'), ('=', 'int8', 'int4', 'bool'),
    ('=', 'int4', 'int8', 'bool'), ('=', 'text', 'text', 'bool'), ('=', 'varchar', 'text', 'bool'),
    ('=', 'text', 'varchar', 'bool'), ('=', 'bpchar', 'text', 'bool'), ('=', 'uuid', 'uuid', 'bool'),
    ('=', 'bool', 'bool', 'bool'), ('=', 'jsonb', 'jsonb', 'bool'), ('=', 'bytea', 'bytea', 'bool'),
    ('>', 'bytea', 'bytea', 'bool'), ('<=', 'bytea', 'bytea', 'bool'),
    ('<>', 'int4', 'int4', 'bool'), ('<>', 'text', 'text', 'bool'),
    ('&&', 'tstzrange', 'tstzrange', 'bool'),
    ('<', 'timestamptz', 'timestamptz', 'bool'), ('<', 'uuid', 'uuid', 'bool'),
    ('<', 'int4', 'int4', 'bool'), ('<', 'int8', 'int8', 'bool'),
    ('<=', 'timestamptz', 'timestamptz', 'bool'), ('<=', 'uuid', 'uuid', 'bool'), ('<=', 'int4', 'int4', 'bool'),
    ('>', 'timestamptz', 'timestamptz', 'bool'), ('>', 'uuid', 'uuid', 'bool'), ('>', 'int4', 'int4', 'bool'),
    ('>', 'text', 'text', 'bool'), ('>', 'varchar', 'text', 'bool'),
    ('>=', 'timestamptz', 'timestamptz', 'bool'), ('>=', 'int4', 'int4', 'bool'),
    ('->', 'jsonb', 'text', 'jsonb'), ('->', 'jsonb', 'int4', 'jsonb'), ('->>', 'jsonb', 'text', 'text'),
    ('||', 'text', 'text', 'text'), ('||', 'varchar', 'text', 'text'), ('||', 'text', 'varchar', 'text'),
    ('||', 'jsonb', 'jsonb', 'jsonb'),
    ('~', 'text', 'text', 'bool'), ('~', 'varchar', 'text', 'bool'), ('!~', 'text', 'text', 'bool'),
    ('!~', 'bpchar', 'text', 'bool'),
    ('-', 'timestamptz', 'interval', 'timestamptz'), ('-', 'timestamptz', 'timestamptz', 'interval'),
    ('-', 'int8', 'int8', 'int8'), ('-', 'jsonb', 'text', 'jsonb'),
    ('+', 'timestamptz', 'interval', 'timestamptz'), ('+', 'int4', 'int4', 'int4')
  ) AS o(op, l, r, ret);
SELECT kind, count(*) FROM shadow_probe.spec GROUP BY kind ORDER BY kind;

CREATE TABLE shadow_probe.planted (
    seq int PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    schema text NOT NULL,
    classid oid NOT NULL,
    objid oid NOT NULL,
    drop_sql text NOT NULL
);

CREATE FUNCTION shadow_probe.plant(s pg_catalog.text, okno pg_catalog.text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $plant$
DECLARE
    d record;
    label text;
    fn text;
    q text;
BEGIN
    FOR d IN SELECT * FROM shadow_probe.spec ORDER BY CASE kind WHEN 'type' THEN 2 ELSE 1 END, ord LOOP
        label := CASE WHEN d.kind IN ('table', 'type') THEN format('%s.%s', s, d.name)
                      ELSE format('%s.%s(%s)', s, d.name, d.args) END;
        IF d.kind = 'table' THEN
            EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I)', s, d.name, okno, d.name);
            EXECUTE format('CREATE TRIGGER decoy_trip BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I'
                           ' FOR EACH STATEMENT EXECUTE FUNCTION shadow_probe.trip_trigger(%L)', s, d.name, label);
            INSERT INTO shadow_probe.planted (schema, classid, objid, drop_sql)
            VALUES (s, 'pg_class'::regclass, format('%I.%I', s, d.name)::regclass,
                    format('DROP TABLE %I.%I', s, d.name));
        ELSIF d.kind = 'function' THEN
            -- IMMUTABLE: a call with constant arguments is folded, so it
            -- trips while a statement is planned, even if never executed
            EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE plpgsql IMMUTABLE AS %L',
                           s, d.name, d.args, d.ret,
                           format('BEGIN PERFORM shadow_probe.trip(%L); END', label));
            INSERT INTO shadow_probe.planted (schema, classid, objid, drop_sql)
            VALUES (s, 'pg_proc'::regclass, format('%I.%I(%s)', s, d.name, replace(d.args, 'VARIADIC ', ''))::regprocedure,
                    format('DROP FUNCTION %I.%I(%s)', s, d.name, d.args));
        ELSIF d.kind = 'operator' THEN
            fn := format('%I.%I', s, 'decoy_op_' || d.ord);
            EXECUTE format('CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plpgsql IMMUTABLE AS %L',
                           fn, d.args, d.ret, format('BEGIN PERFORM shadow_probe.trip(%L); END', label));
            EXECUTE format('CREATE OPERATOR %I.%s (FUNCTION = %s, LEFTARG = %s, RIGHTARG = %s)',
                           s, d.name, fn, split_part(d.args, ', ', 1), split_part(d.args, ', ', 2));
            INSERT INTO shadow_probe.planted (schema, classid, objid, drop_sql)
            VALUES (s, 'pg_proc'::regclass, format('%s(%s)', fn, d.args)::regprocedure,
                    format('DROP FUNCTION %s(%s)', fn, d.args));
            INSERT INTO shadow_probe.planted (schema, classid, objid, drop_sql)
            VALUES (s, 'pg_operator'::regclass, format('%I.%s(%s)', s, d.name, d.args)::regoperator,
                    format('DROP OPERATOR %I.%s(%s)', s, d.name, d.args));
        ELSIF d.kind = 'aggregate' THEN
            -- the transition keeps its state; the final function trips, and
            -- it runs even over no rows
            fn := format('%I.%I', s, 'decoy_agg_' || d.ord);
            q := CASE WHEN d.args = '*' THEN d.ret ELSE d.ret || ', ' || d.args END;
            EXECUTE format('CREATE FUNCTION %s_sfunc(%s) RETURNS %s LANGUAGE sql AS ''SELECT $1''', fn, q, d.ret);
            EXECUTE format('CREATE FUNCTION %s_final(%s) RETURNS %s LANGUAGE plpgsql AS %L',
                           fn, d.ret, d.ret, format('BEGIN PERFORM shadow_probe.trip(%L); END', label));
            EXECUTE format('CREATE AGGREGATE %I.%I(%s) (SFUNC = %s_sfunc, STYPE = %s, FINALFUNC = %s_final)',
                           s, d.name, d.args, fn, d.ret, fn);
            INSERT INTO shadow_probe.planted (schema, classid, objid, drop_sql)
            VALUES (s, 'pg_proc'::regclass, format('%s_sfunc(%s)', fn, q)::regprocedure,
                    format('DROP FUNCTION %s_sfunc(%s)', fn, q));
            INSERT INTO shadow_probe.planted (schema, classid, objid, drop_sql)
            VALUES (s, 'pg_proc'::regclass, format('%s_final(%s)', fn, d.ret)::regprocedure,
                    format('DROP FUNCTION %s_final(%s)', fn, d.ret));
            INSERT INTO shadow_probe.planted (schema, classid, objid, drop_sql)
            VALUES (s, 'pg_proc'::regclass,
                    format('%I.%I(%s)', s, d.name, CASE WHEN d.args = '*' THEN '' ELSE d.args END)::regprocedure,
                    format('DROP AGGREGATE %I.%I(%s)', s, d.name, d.args));
        ELSE
            -- types last: from here on the bare names mean the decoys
            EXECUTE format('CREATE DOMAIN %I.%I AS pg_catalog.%I CHECK (shadow_probe.trip_b(%L))',
                           s, d.name, d.args, label);
            INSERT INTO shadow_probe.planted (schema, classid, objid, drop_sql)
            VALUES (s, 'pg_type'::regclass, to_regtype(format('%I.%I', s, d.name)),
                    format('DROP DOMAIN %I.%I', s, d.name));
        END IF;
    END LOOP;
END
$plant$;

CREATE FUNCTION shadow_probe.uproot(s pg_catalog.text) RETURNS pg_catalog.int8
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p record;
    n int8 := 0;
BEGIN
    -- in reverse order of creation: dependents first
    FOR p IN SELECT * FROM shadow_probe.planted WHERE schema = s ORDER BY seq DESC LOOP
        EXECUTE p.drop_sql;
        n := n + 1;
    END LOOP;
    DELETE FROM shadow_probe.planted WHERE schema = s;
    RETURN n;
END
$$;

-- how many objects of a schema (and of its tables: columns, defaults,
-- constraints, indexes, rules, triggers) depend on a planted decoy
CREATE FUNCTION shadow_probe.bound_to_decoys(target pg_catalog.text) RETURNS pg_catalog.int8
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT count(DISTINCT (d.classid, d.objid, d.objsubid))
      FROM pg_depend AS d JOIN shadow_probe.planted AS p
        ON p.classid = d.refclassid AND p.objid = d.refobjid
     WHERE CASE d.classid
             WHEN 'pg_class'::regclass THEN (SELECT c.relnamespace FROM pg_class AS c WHERE c.oid = d.objid)
             WHEN 'pg_attrdef'::regclass THEN (SELECT c.relnamespace FROM pg_attrdef AS a JOIN pg_class AS c ON c.oid = a.adrelid WHERE a.oid = d.objid)
             WHEN 'pg_rewrite'::regclass THEN (SELECT c.relnamespace FROM pg_rewrite AS r JOIN pg_class AS c ON c.oid = r.ev_class WHERE r.oid = d.objid)
             WHEN 'pg_trigger'::regclass THEN (SELECT c.relnamespace FROM pg_trigger AS t JOIN pg_class AS c ON c.oid = t.tgrelid WHERE t.oid = d.objid)
             WHEN 'pg_constraint'::regclass THEN (SELECT c.connamespace FROM pg_constraint AS c WHERE c.oid = d.objid)
             WHEN 'pg_proc'::regclass THEN (SELECT f.pronamespace FROM pg_proc AS f WHERE f.oid = d.objid)
             WHEN 'pg_type'::regclass THEN (SELECT t.typnamespace FROM pg_type AS t WHERE t.oid = d.objid)
             WHEN 'pg_operator'::regclass THEN (SELECT o.oprnamespace FROM pg_operator AS o WHERE o.oid = d.objid)
           END = target::regnamespace
$$;

-- One pass through every okno function, for okno installed in schema s,
-- with keys sh-1, sh-2, sh-3 and bookings on the given day.  Everything in
-- it is qualified; the okno calls are written as a caller would write them,
-- schema-qualified, under whatever search_path is in force.
CREATE FUNCTION shadow_probe.exercise(s pg_catalog.text, day pg_catalog.text)
RETURNS TABLE (n pg_catalog.int4, step pg_catalog.text, result pg_catalog.text)
LANGUAGE plpgsql AS $ex$
DECLARE
    -- ann books resource 1 from 10:00 to 11:00 at +02:00
    p1 pg_catalog.jsonb := pg_catalog.format('{"resource_id":1,"starts_at":"%sT10:00:00+02:00","ends_at":"%sT11:00:00+02:00"}', day, day);
    -- the same request written another way
    p1b pg_catalog.jsonb := pg_catalog.format('{"ends_at":"%sT09:00:00Z","starts_at":"%sT08:00:00.000000Z","resource_id":1.0}', day, day);
    -- another period under the same key; an overlapping period
    p1c pg_catalog.jsonb := pg_catalog.format('{"resource_id":1,"starts_at":"%sT12:00:00Z","ends_at":"%sT13:00:00Z"}', day, day);
    p1d pg_catalog.jsonb := pg_catalog.format('{"resource_id":1,"starts_at":"%sT08:30:00Z","ends_at":"%sT09:30:00Z"}', day, day);
    p1e pg_catalog.jsonb := pg_catalog.format('{"resource_id":999,"starts_at":"%sT12:00:00Z","ends_at":"%sT13:00:00Z"}', day, day);
    -- boris books resource 2
    p2 pg_catalog.jsonb := pg_catalog.format('{"resource_id":2,"starts_at":"%sT10:00:00Z","ends_at":"%sT11:00:00Z"}', day, day);
    card1 pg_catalog.jsonb;
    card2 pg_catalog.jsonb;
    c pg_catalog.jsonb;
    b1 pg_catalog.int8;
    b2 pg_catalog.int8;
    e1 pg_catalog.uuid;
    e2 pg_catalog.uuid;
    h pg_catalog.int8;
    cnt pg_catalog.int8;
    r pg_catalog.text;
    canon pg_catalog.text;
    rec record;
BEGIN
    -- long backoff, so that a delayed event stays delayed however slow the machine
    PERFORM pg_catalog.set_config('okno.retry_base', '1h', true);

    n := 1; step := 'create';
    EXECUTE pg_catalog.format('SELECT %I.okno_create_booking($1, $2, $3)', s) INTO card1 USING 1, 'sh-1', p1;
    b1 := (card1 OPERATOR(pg_catalog.->>) 'id')::pg_catalog.int8;
    result := (card1 OPERATOR(pg_catalog.-) 'id')::pg_catalog.text; RETURN NEXT;

    n := 2; step := 'replay, written another way';
    EXECUTE pg_catalog.format('SELECT %I.okno_create_booking($1, $2, $3)', s) INTO c USING 1, 'sh-1', p1b;
    result := pg_catalog.format('same card: %s', c OPERATOR(pg_catalog.=) card1); RETURN NEXT;

    -- the request lock is pg_advisory_xact_lock(hashtextextended('1:sh-1', 0))
    -- computed with pg_catalog's function; the resource lock is okno's own tag
    n := 3; step := 'replay, okno_create_booking_result';
    EXECUTE pg_catalog.format('SELECT r.card, r.replayed FROM %I.okno_create_booking_result($1, $2, $3) AS r', s)
        INTO rec USING 1, 'sh-1', p1b;
    result := pg_catalog.format('same card: %s, replayed: %s', rec.card OPERATOR(pg_catalog.=) card1, rec.replayed);
    RETURN NEXT;

    n := 4; step := 'locks held';
    h := pg_catalog.hashtextextended('1:sh-1', 0);
    SELECT pg_catalog.count(*) INTO cnt FROM pg_catalog.pg_locks AS l
     WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.granted
       AND l.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()
       AND l.classid OPERATOR(pg_catalog.=) ((h OPERATOR(pg_catalog.>>) 32) OPERATOR(pg_catalog.&) 4294967295)::pg_catalog.oid
       AND l.objid OPERATOR(pg_catalog.=) (h OPERATOR(pg_catalog.&) 4294967295)::pg_catalog.oid
       AND l.objsubid OPERATOR(pg_catalog.=) 1;
    result := pg_catalog.format('request lock: %s', cnt);
    SELECT pg_catalog.count(*) INTO cnt FROM pg_catalog.pg_locks AS l
     WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.granted
       AND l.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()
       AND l.classid OPERATOR(pg_catalog.=) 1869311599::pg_catalog.oid
       AND l.objid OPERATOR(pg_catalog.=) 1::pg_catalog.oid
       AND l.objsubid OPERATOR(pg_catalog.=) 3;
    result := pg_catalog.format('%s, resource lock: %s', result, cnt); RETURN NEXT;

    n := 5; step := 'key_reused';
    result := shadow_probe.try(pg_catalog.format('SELECT %I.okno_create_booking(1, %L, %L)', s, 'sh-1', p1c)); RETURN NEXT;
    n := 6; step := 'slot_busy';
    result := shadow_probe.try(pg_catalog.format('SELECT %I.okno_create_booking(1, %L, %L)', s, 'sh-2', p1d)); RETURN NEXT;
    n := 7; step := 'actor_missing';
    result := shadow_probe.try(pg_catalog.format('SELECT %I.okno_create_booking(999, %L, %L)', s, 'sh-2', p1c)); RETURN NEXT;
    n := 8; step := 'resource_missing';
    result := shadow_probe.try(pg_catalog.format('SELECT %I.okno_create_booking(1, %L, %L)', s, 'sh-2', p1e)); RETURN NEXT;
    n := 9; step := 'invalid_key';
    result := shadow_probe.try(pg_catalog.format('SELECT %I.okno_create_booking(1, %L, %L)', s, 'sh 2', p1c)); RETURN NEXT;
    n := 10; step := 'invalid_payload';
    result := shadow_probe.try(pg_catalog.format('SELECT %I.okno_create_booking(1, %L, %L)', s, 'sh-2',
                               p1c OPERATOR(pg_catalog.-) 'ends_at')); RETURN NEXT;

    n := 11; step := 'create (boris)';
    EXECUTE pg_catalog.format('SELECT %I.okno_create_booking($1, $2, $3)', s) INTO card2 USING 2, 'sh-3', p2;
    b2 := (card2 OPERATOR(pg_catalog.->>) 'id')::pg_catalog.int8;
    result := (card2 OPERATOR(pg_catalog.-) 'id')::pg_catalog.text; RETURN NEXT;

    n := 12; step := 'get';
    EXECUTE pg_catalog.format('SELECT %I.okno_get_booking($1, $2)', s) INTO c USING 1, b1;
    result := pg_catalog.format('same as created: %s', c OPERATOR(pg_catalog.=) card1); RETURN NEXT;
    n := 13; step := 'get (another actor''s)';
    result := pg_catalog.split_part(shadow_probe.try(pg_catalog.format('SELECT %I.okno_get_booking(2, %s)', s, b1)), ' ', 1); RETURN NEXT;

    n := 14; step := 'cancel';
    EXECUTE pg_catalog.format('SELECT %I.okno_cancel_booking($1, $2)', s) INTO c USING 2, b2;
    result := (c OPERATOR(pg_catalog.-) 'id')::pg_catalog.text; RETURN NEXT;
    n := 15; step := 'cancel again';
    EXECUTE pg_catalog.format('SELECT %I.okno_cancel_booking($1, $2)', s) INTO c USING 2, b2;
    result := pg_catalog.format('status %s', c OPERATOR(pg_catalog.->>) 'status'); RETURN NEXT;
    n := 16; step := 'replay after cancel';
    EXECUTE pg_catalog.format('SELECT %I.okno_create_booking($1, $2, $3)', s) INTO c USING 2, 'sh-3', p2;
    result := pg_catalog.format('original card: %s', c OPERATOR(pg_catalog.=) card2); RETURN NEXT;

    n := 17; step := 'error catalogue';
    EXECUTE pg_catalog.format('SELECT pg_catalog.string_agg(e.sqlstate, '' '' ORDER BY e.sqlstate) FROM %I.okno_errors() AS e', s)
        INTO result;
    RETURN NEXT;

    n := 18; step := 'canonical';
    EXECUTE pg_catalog.format('SELECT %I.okno_canonical($1)', s) INTO canon USING p1;
    result := canon; RETURN NEXT;
    n := 19; step := 'fingerprint';
    EXECUTE pg_catalog.format('SELECT %I.okno_fingerprint($1)', s) INTO r USING p1;
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.count(*) FROM %I.idempotency AS i'
        ' WHERE i.actor_id OPERATOR(pg_catalog.=) 1 AND i.request_key OPERATOR(pg_catalog.=) ''sh-1'''
        '   AND i.fingerprint::pg_catalog.text OPERATOR(pg_catalog.=) $1', s) INTO cnt USING r;
    result := pg_catalog.format('stored with the key: %s, sha256 of the canonical text: %s',
        cnt OPERATOR(pg_catalog.=) 1,
        r OPERATOR(pg_catalog.=) pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(canon, 'UTF8')), 'hex'));
    RETURN NEXT;

    n := 20; step := 'status';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''pending=%%s due_now=%%s delayed=%%s parked=%%s'', pending, due_now, delayed, parked) FROM %I.okno_outbox_status', s) INTO result;
    RETURN NEXT;

    n := 21; step := 'drain_once';
    EXECUTE pg_catalog.format('SELECT d.event_id, d.kind, d.payload FROM %I.okno_drain_once() AS d', s) INTO rec;
    e1 := rec.event_id;
    result := pg_catalog.format('%s of booking 1: %s', rec.kind,
                                rec.payload OPERATOR(pg_catalog.=) pg_catalog.jsonb_build_object('booking_id', b1));
    RETURN NEXT;

    n := 22; step := 'record_failure';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''attempts=%%s last_error=%%s delivered=%%s delayed=%%s parked=%%s'','
        ' f.attempts, f.last_error, f.delivered_at IS NOT NULL,'
        ' f.available_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp(), f.parked_at IS NOT NULL)'
        ' FROM %I.okno_record_failure($1, $2) AS f', s) INTO result USING e1, 'boom';
    RETURN NEXT;
    n := 23; step := 'status';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''pending=%%s due_now=%%s delayed=%%s parked=%%s'', pending, due_now, delayed, parked) FROM %I.okno_outbox_status', s) INTO result;
    RETURN NEXT;

    n := 24; step := 'drain';
    result := '';
    FOR rec IN EXECUTE pg_catalog.format('SELECT d.event_id, d.kind, d.payload, d.attempts FROM %I.okno_drain(10) AS d', s) LOOP
        IF e2 IS NULL THEN
            e2 := rec.event_id;
        END IF;
        result := pg_catalog.format('%s%s of booking %s (attempts %s); ', result, rec.kind,
            CASE WHEN rec.payload OPERATOR(pg_catalog.=) pg_catalog.jsonb_build_object('booking_id', b1) THEN '1'
                 WHEN rec.payload OPERATOR(pg_catalog.=) pg_catalog.jsonb_build_object('booking_id', b2) THEN '2'
                 ELSE '?' END, rec.attempts);
    END LOOP;
    RETURN NEXT;

    n := 25; step := 'release';
    EXECUTE pg_catalog.format('SELECT %I.okno_release($1)', s) INTO result USING e2;
    RETURN NEXT;
    n := 26; step := 'release again';
    EXECUTE pg_catalog.format('SELECT %I.okno_release($1)', s) INTO result USING e2;
    RETURN NEXT;
    n := 27; step := 'requeue (delayed)';
    EXECUTE pg_catalog.format('SELECT %I.okno_requeue($1)', s) INTO result USING e1;
    RETURN NEXT;

    n := 28; step := 'drain';
    result := '';
    FOR rec IN EXECUTE pg_catalog.format('SELECT d.event_id, d.kind, d.payload, d.attempts FROM %I.okno_drain(10) AS d', s) LOOP
        result := pg_catalog.format('%s%s of booking %s (attempts %s); ', result, rec.kind,
            CASE WHEN rec.payload OPERATOR(pg_catalog.=) pg_catalog.jsonb_build_object('booking_id', b1) THEN '1'
                 WHEN rec.payload OPERATOR(pg_catalog.=) pg_catalog.jsonb_build_object('booking_id', b2) THEN '2'
                 ELSE '?' END, rec.attempts);
    END LOOP;
    RETURN NEXT;

    n := 29; step := 'record_failure (max_attempts 1)';
    PERFORM pg_catalog.set_config('okno.max_attempts', '1', true);
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''attempts=%%s last_error=%%s delivered=%%s delayed=%%s parked=%%s'','
        ' f.attempts, f.last_error, f.delivered_at IS NOT NULL,'
        ' f.available_at IS NOT NULL, f.parked_at IS NOT NULL)'
        ' FROM %I.okno_record_failure($1, $2) AS f', s) INTO result USING e2, 'gone';
    RETURN NEXT;
    n := 30; step := 'status';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''pending=%%s due_now=%%s delayed=%%s parked=%%s'', pending, due_now, delayed, parked) FROM %I.okno_outbox_status', s) INTO result;
    RETURN NEXT;
    n := 31; step := 'requeue (parked)';
    EXECUTE pg_catalog.format('SELECT %I.okno_requeue($1)', s) INTO result USING e2;
    RETURN NEXT;
    n := 32; step := 'drain_once';
    EXECUTE pg_catalog.format('SELECT d.event_id, d.kind, d.payload FROM %I.okno_drain_once() AS d', s) INTO rec;
    result := pg_catalog.format('%s of booking 2: %s', rec.kind,
                                rec.payload OPERATOR(pg_catalog.=) pg_catalog.jsonb_build_object('booking_id', b2));
    RETURN NEXT;
    n := 33; step := 'status';
    -- (the cancellation of booking 2 waited for its booking_created: it
    -- goes now, so that every run leaves the outbox empty)
    EXECUTE pg_catalog.format('SELECT pg_catalog.string_agg(d.kind, '' '') FROM %I.okno_drain(10) AS d', s) INTO r;
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''%%s, then pending=%%s due_now=%%s delayed=%%s parked=%%s held_back=%%s'', $1, pending, due_now, delayed, parked, held_back) FROM %I.okno_outbox_status', s) INTO result USING r;
    RETURN NEXT;

    -- the rows are okno's own: in okno's tables, with pg_catalog.now() as
    -- their creation time (the transaction's start)
    n := 34; step := 'rows written';
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.format(''bookings=%%s keys=%%s events=%%s delivered=%%s'','
        ' (SELECT pg_catalog.count(*) FROM %1$I.bookings AS b WHERE b.created_at OPERATOR(pg_catalog.=) pg_catalog.now()),'
        ' (SELECT pg_catalog.count(*) FROM %1$I.idempotency AS i WHERE i.created_at OPERATOR(pg_catalog.=) pg_catalog.now()),'
        ' (SELECT pg_catalog.count(*) FROM %1$I.outbox AS o WHERE o.created_at OPERATOR(pg_catalog.=) pg_catalog.now()),'
        ' (SELECT pg_catalog.count(*) FROM %1$I.outbox AS o WHERE o.delivered_at IS NOT NULL))', s) INTO result;
    RETURN NEXT;

    n := 35; step := 'verify';
    EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %I.okno_verify()', s) INTO cnt;
    result := pg_catalog.format('problems: %s', cnt); RETURN NEXT;
END
$ex$;

-- the second transaction: purge what the first one wrote, and 10,050 old
-- keys and delivered events more, so that the purge takes more than one
-- batch (it walks 10,000 rows a statement)
-- an operation's handler, its body bound when it is created
CREATE FUNCTION shadow_probe.strip_nulls(r pg_catalog.jsonb) RETURNS pg_catalog.jsonb
LANGUAGE sql IMMUTABLE RETURN pg_catalog.jsonb_strip_nulls(r);

CREATE FUNCTION shadow_probe.exercise_purge(s pg_catalog.text, day pg_catalog.text)
RETURNS TABLE (n pg_catalog.int4, step pg_catalog.text, result pg_catalog.text)
LANGUAGE plpgsql AS $ex$
DECLARE
    cnt pg_catalog.int8;
BEGIN
    EXECUTE pg_catalog.format(
        'INSERT INTO %I.idempotency (actor_id, request_key, fingerprint, response_body, created_at)'
        ' SELECT 2, pg_catalog.concat(''old-'', g), pg_catalog.repeat(''0'', 64), ''{}'', ''2000-01-01 00:00+00'''
        '   FROM pg_catalog.generate_series(1, 10050) AS g', s);
    EXECUTE pg_catalog.format(
        'INSERT INTO %I.outbox (id, kind, payload, created_at, delivered_at)'
        ' SELECT pg_catalog.md5(g::pg_catalog.text)::pg_catalog.uuid, ''old'', ''{}'', ''2000-01-01 00:00+00'', ''2000-01-01 00:00+00'''
        '   FROM pg_catalog.generate_series(1, 10050) AS g', s);
    n := 36; step := 'purge';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''keys=%%s events=%%s'', p.keys_deleted, p.events_deleted)'
                              ' FROM %I.okno_purge(''0 seconds'', ''0 seconds'') AS p', s) INTO result;
    RETURN NEXT;
    n := 37; step := 'purge horizon';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''keys=%%s events=%%s'','
        ' h.keys_purged_before OPERATOR(pg_catalog.=) pg_catalog.now(), h.events_purged_before OPERATOR(pg_catalog.=) pg_catalog.now())'
        ' FROM %I.okno_purge_horizon AS h', s) INTO result;
    RETURN NEXT;
    n := 38; step := 'verify';
    EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %I.okno_verify()', s) INTO cnt;
    result := pg_catalog.format('problems: %s', cnt); RETURN NEXT;
    -- the key has expired: a retry is answered from its tombstone
    n := 39; step := 'retry after purge';
    result := shadow_probe.try(pg_catalog.format('SELECT %I.okno_create_booking(1, %L, %L)', s, 'sh-1',
        pg_catalog.format('{"resource_id":1,"starts_at":"%sT10:00:00+02:00","ends_at":"%sT11:00:00+02:00"}', day, day)));
    RETURN NEXT;

    -- an operation's key (0.7.0), its handler named by its schema
    n := 40; step := 'idempotent';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''%%s %%s'', r.response, r.replayed)'
        ' FROM %I.okno_idempotent_result(''shadow'', ''t'', ''sh-op'', $1, ''shadow_probe.strip_nulls(pg_catalog.jsonb)'') AS r', s)
        INTO result USING '{"b": [1, 2.50], "a": null}'::pg_catalog.jsonb;
    RETURN NEXT;
    n := 41; step := 'idempotent replayed';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''%%s %%s'', r.response, r.replayed)'
        ' FROM %I.okno_idempotent_result(''shadow'', ''t'', ''sh-op'', $1, ''shadow_probe.strip_nulls(pg_catalog.jsonb)'') AS r', s)
        INTO result USING '{"a": null, "b": [1.0, 2.5]}'::pg_catalog.jsonb;
    RETURN NEXT;
    n := 42; step := 'canonical json';
    EXECUTE pg_catalog.format('SELECT %I.okno_canonical_json($1)', s)
        INTO result USING '{"b": [1, 2.50], "a": null}'::pg_catalog.jsonb;
    RETURN NEXT;
    n := 43; step := 'claim and store';
    EXECUTE pg_catalog.format('SELECT pg_catalog.format(''%%s %%s %%s'', %1$I.okno_key_claim(''shadow'', ''t'', ''sh-claim'', ''{}'') IS NULL,'
        ' %1$I.okno_key_store(''shadow'', ''t'', ''sh-claim'', ''{"ok": 1}''),'
        ' %1$I.okno_key_claim(''shadow'', ''t'', ''sh-claim'', ''{}''))', s) INTO result;
    RETURN NEXT;
    n := 44; step := 'verify';
    EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %I.okno_verify()', s) INTO cnt;
    result := pg_catalog.format('problems: %s', cnt); RETURN NEXT;

    -- the next pass uses the same keys
    EXECUTE pg_catalog.format('DELETE FROM %1$I.okno_key_tombstone; DELETE FROM %1$I.okno_key', s);
END
$ex$;


-- rows in the planted tables, per schema (all must stay empty)
CREATE FUNCTION shadow_probe.decoy_rows()
RETURNS TABLE (schema pg_catalog.text, tables pg_catalog.int8, rows_in_them pg_catalog.int8)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p record;
    c int8;
BEGIN
    FOR p IN SELECT DISTINCT planted.schema FROM shadow_probe.planted ORDER BY 1 LOOP
        schema := p.schema; tables := 0; rows_in_them := 0;
        FOR c IN SELECT shadow_probe.try(format('SELECT count(*) FROM %s', t.objid::regclass))::int8
                   FROM shadow_probe.planted AS t
                  WHERE t.schema = p.schema AND t.classid = 'pg_class'::regclass LOOP
            tables := tables + 1;
            rows_in_them := rows_in_them + c;
        END LOOP;
        RETURN NEXT;
    END LOOP;
END
$$;

-- which decoy each probe reached, per search_path; every pass's results
CREATE TABLE shadow_probe.live (ord int, arrangement text, used text, PRIMARY KEY (ord, arrangement));
CREATE TABLE shadow_probe.runs (run text PRIMARY KEY, okno text, day text, search_path text);
CREATE TABLE shadow_probe.got (run text, n int, step text, result text, PRIMARY KEY (run, n));
INSERT INTO shadow_probe.runs VALUES
  ('C',  'public', '2031-03-03', 'pg_temp, decoy, pg_catalog, public'),
  ('D',  'public', '2031-03-04', 'decoy, pg_temp, pg_catalog, public'),
  ('B',  'public', '2031-03-05', 'pg_temp, decoy, public'),
  ('LC', 'lab',    '2031-03-06', 'pg_temp, decoy, pg_catalog, public'),
  ('LD', 'lab',    '2031-03-07', 'decoy, pg_temp, pg_catalog, public'),
  ('LE', 'lab',    '2031-03-08', 'public, pg_catalog, pg_temp');

-- the decoys, in schema decoy and in pg_temp; their tables are shaped like
-- okno's
CREATE SCHEMA decoy;
SELECT shadow_probe.plant('decoy', 'public');
SELECT shadow_probe.plant('pg_temp', 'public');
SELECT schema, count(*) AS objects FROM shadow_probe.planted GROUP BY schema ORDER BY schema;

-- bound_to_decoys sees a column of a decoy type, a default, a view and a
-- function argument made under the decoys
CREATE SCHEMA shadow_control;
SET search_path = decoy, pg_temp, pg_catalog, public;
CREATE TABLE shadow_control.t (a pg_catalog.timestamptz DEFAULT now(), b text);
CREATE VIEW shadow_control.v AS SELECT now() AS x;
CREATE FUNCTION shadow_control.f(x text) RETURNS pg_catalog.int4 LANGUAGE sql AS 'SELECT 1';
RESET search_path;
SELECT shadow_probe.bound_to_decoys('shadow_control') AS control_objects_bound_to_decoys;
DROP VIEW shadow_control.v;
DROP TABLE shadow_control.t;
DROP FUNCTION shadow_control.f(decoy.text);
DROP SCHEMA shadow_control;

-- okno starts afresh, installed while the decoys are in place, so that ids
-- and counts are the same wherever this test runs (the application's
-- tables stay when okno goes: they are dropped here), and its tables are
-- created by okno_create_tables() under the decoys too.  Nothing it creates
-- is bound to a decoy: no column of a decoy type, no default, constraint,
-- index, view or function body using a decoy function or operator.
DROP EXTENSION okno;
DROP TABLE public.outbox, public.idempotency, public.bookings, public.resources, public.actors;
SET search_path = pg_temp, decoy, pg_catalog, public;
CREATE EXTENSION okno SCHEMA public;
SELECT pg_catalog.count(*) AS tables_created FROM public.okno_create_tables();
RESET search_path;
SELECT shadow_probe.bound_to_decoys('public') AS okno_objects_bound_to_decoys;
INSERT INTO public.actors (name) VALUES ('ann'), ('boris');
INSERT INTO public.resources (name) VALUES ('november room'), ('october room'), ('december room');

-- the decoys are live: an unqualified use of each name reaches a decoy,
-- under each search_path okno is exercised with.  With pg_catalog not
-- listed (the last column) PostgreSQL searches it first, so only names
-- pg_catalog lacks (okno's tables) or has with other argument types reach
-- a decoy; the first two columns put the decoys before pg_catalog.
-- Functions and operators are never looked up in pg_temp.
SET search_path = pg_temp, decoy, pg_catalog, public;
INSERT INTO shadow_probe.live SELECT s.ord, 'C', shadow_probe.probe(s.probe) FROM shadow_probe.spec AS s;
SET search_path = decoy, pg_temp, pg_catalog, public;
INSERT INTO shadow_probe.live SELECT s.ord, 'D', shadow_probe.probe(s.probe) FROM shadow_probe.spec AS s;
SET search_path = pg_temp, decoy, public;
INSERT INTO shadow_probe.live SELECT s.ord, 'B', shadow_probe.probe(s.probe) FROM shadow_probe.spec AS s;
RESET search_path;
SELECT s.kind, s.name, s.args, c.used AS "pg_temp, decoy, pg_catalog", d.used AS "decoy, pg_temp, pg_catalog",
       b.used AS "pg_temp, decoy"
  FROM shadow_probe.spec AS s
  JOIN shadow_probe.live AS c ON c.ord = s.ord AND c.arrangement = 'C'
  JOIN shadow_probe.live AS d ON d.ord = s.ord AND d.arrangement = 'D'
  JOIN shadow_probe.live AS b ON b.ord = s.ord AND b.arrangement = 'B'
 ORDER BY s.ord;

-- okno under pg_temp, decoy, pg_catalog, public: every function, the view,
-- the checker; in two transactions (the second purges what the first wrote)
SET search_path = pg_temp, decoy, pg_catalog, public;
INSERT INTO shadow_probe.got SELECT 'C', * FROM shadow_probe.exercise('public', '2031-03-03');
INSERT INTO shadow_probe.got SELECT 'C', * FROM shadow_probe.exercise_purge('public', '2031-03-03');
RESET search_path;
SELECT n, step, result FROM shadow_probe.got WHERE run = 'C' ORDER BY n;

-- the same under decoy, pg_temp, pg_catalog, public (decoy tables and types
-- first) and under pg_temp, decoy, public
SET search_path = decoy, pg_temp, pg_catalog, public;
INSERT INTO shadow_probe.got SELECT 'D', * FROM shadow_probe.exercise('public', '2031-03-04');
INSERT INTO shadow_probe.got SELECT 'D', * FROM shadow_probe.exercise_purge('public', '2031-03-04');
SET search_path = pg_temp, decoy, public;
INSERT INTO shadow_probe.got SELECT 'B', * FROM shadow_probe.exercise('public', '2031-03-05');
INSERT INTO shadow_probe.got SELECT 'B', * FROM shadow_probe.exercise_purge('public', '2031-03-05');
RESET search_path;

-- the bookings okno made are in its own tables: two a pass, one cancelled
SELECT (starts_at AT TIME ZONE 'UTC')::date AS day, count(*) AS bookings, count(*) FILTER (WHERE status = 'cancelled') AS cancelled
  FROM public.bookings GROUP BY 1 ORDER BY 1;

-- okno in schema lab, absent from the search_path, with the decoys in
-- public as well (shaped like okno's tables), installed under the decoys
SET search_path = pg_temp, decoy, pg_catalog, public;
DROP EXTENSION okno;
DROP TABLE public.outbox, public.idempotency, public.bookings, public.resources, public.actors;
CREATE SCHEMA lab;
RESET search_path;
SELECT shadow_probe.plant('public', 'decoy');
SET search_path = pg_temp, decoy, pg_catalog, public;
CREATE EXTENSION okno SCHEMA lab;
SELECT pg_catalog.count(*) AS tables_created FROM lab.okno_create_tables();
RESET search_path;
SELECT n.nspname AS okno_schema FROM pg_catalog.pg_extension AS e JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'okno';
SELECT shadow_probe.bound_to_decoys('lab') AS okno_objects_bound_to_decoys;
INSERT INTO lab.actors (name) VALUES ('ann'), ('boris');
INSERT INTO lab.resources (name) VALUES ('november room'), ('october room'), ('december room');

-- the decoys in public are live under public, pg_catalog, pg_temp
SET search_path = public, pg_catalog, pg_temp;
INSERT INTO shadow_probe.live SELECT s.ord, 'E', shadow_probe.probe(s.probe) FROM shadow_probe.spec AS s;
RESET search_path;
SELECT count(*) AS probes, count(*) FILTER (WHERE used LIKE 'public.%') AS reaching_public
  FROM shadow_probe.live WHERE arrangement = 'E';

SET search_path = pg_temp, decoy, pg_catalog, public;
INSERT INTO shadow_probe.got SELECT 'LC', * FROM shadow_probe.exercise('lab', '2031-03-06');
INSERT INTO shadow_probe.got SELECT 'LC', * FROM shadow_probe.exercise_purge('lab', '2031-03-06');
SET search_path = decoy, pg_temp, pg_catalog, public;
INSERT INTO shadow_probe.got SELECT 'LD', * FROM shadow_probe.exercise('lab', '2031-03-07');
INSERT INTO shadow_probe.got SELECT 'LD', * FROM shadow_probe.exercise_purge('lab', '2031-03-07');
SET search_path = public, pg_catalog, pg_temp;
INSERT INTO shadow_probe.got SELECT 'LE', * FROM shadow_probe.exercise('lab', '2031-03-08');
INSERT INTO shadow_probe.got SELECT 'LE', * FROM shadow_probe.exercise_purge('lab', '2031-03-08');
RESET search_path;

-- every pass gave the results of the first one, its day aside (no rows)
SELECT g.run, g.n, g.step, replace(g.result, r.day, 'DAY') AS result, replace(c.result, '2031-03-03', 'DAY') AS first_pass
  FROM shadow_probe.got AS g
  JOIN shadow_probe.runs AS r ON r.run = g.run
  FULL JOIN (SELECT * FROM shadow_probe.got WHERE run = 'C') AS c ON c.n = g.n
 WHERE replace(g.result, r.day, 'DAY') IS DISTINCT FROM replace(c.result, '2031-03-03', 'DAY')
 ORDER BY 1, 2;
SELECT r.run, r.okno, r.search_path, count(g.n) AS steps
  FROM shadow_probe.runs AS r LEFT JOIN shadow_probe.got AS g ON g.run = r.run
 GROUP BY r.run, r.okno, r.search_path ORDER BY min(r.day);

-- and in lab
SELECT (starts_at AT TIME ZONE 'UTC')::date AS day, count(*) AS bookings, count(*) FILTER (WHERE status = 'cancelled') AS cancelled
  FROM lab.bookings GROUP BY 1 ORDER BY 1;

-- the decoy tables stayed empty
SELECT * FROM shadow_probe.decoy_rows();

-- back to setup.sql's state: okno in public with the course's seed data,
-- no decoys, no lab
DROP EXTENSION okno;
DROP TABLE lab.outbox, lab.idempotency, lab.bookings, lab.resources, lab.actors;
DROP SCHEMA lab;
SELECT shadow_probe.uproot('public') AS public, shadow_probe.uproot('pg_temp') AS pg_temp,
       shadow_probe.uproot('decoy') AS decoy;
DROP SCHEMA decoy;
SET client_min_messages = warning;
DROP SCHEMA shadow_probe CASCADE;
RESET client_min_messages;
CREATE EXTENSION okno;
SELECT count(*) AS tables_created FROM okno_create_tables();
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('november room'), ('october room'), ('december room');
SELECT extname, extversion, n.nspname AS schema
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE extname = 'okno';
SELECT id, name FROM actors ORDER BY id;
SELECT id, name FROM resources ORDER BY id;
SELECT (SELECT count(*) FROM bookings) AS bookings, (SELECT count(*) FROM idempotency) AS keys,
       (SELECT count(*) FROM outbox) AS events;
SELECT (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema())
     + (SELECT count(*) FROM pg_proc WHERE pronamespace = pg_my_temp_schema())
     + (SELECT count(*) FROM pg_type WHERE typnamespace = pg_my_temp_schema())
     + (SELECT count(*) FROM pg_operator WHERE oprnamespace = pg_my_temp_schema()) AS temp_objects_left;
