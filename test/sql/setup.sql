--
-- setup: install okno, create the application's tables okno serves, and
-- the course's seed data; a helper for error checks
--
CREATE EXTENSION okno CASCADE;
SELECT extname, extversion, extrelocatable, n.nspname AS schema
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE extname = 'okno';
-- the tables are the application's: created by its role, not the extension
SELECT * FROM okno_create_tables();

INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('november room'), ('october room'), ('december room');

-- okno_test.err(sql) runs sql and reports the error it raises as
-- "SQLSTATE message | detail | constraint" (or "ok").  The EXCEPTION block is
-- a subtransaction, so whatever the statement wrote is rolled back with it.
CREATE SCHEMA okno_test;
CREATE FUNCTION okno_test.err(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; con text;
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
        det = PG_EXCEPTION_DETAIL, con = CONSTRAINT_NAME;
    RETURN st || ' ' || msg
        || CASE WHEN det <> '' THEN ' | ' || det ELSE '' END
        || CASE WHEN con <> '' THEN ' | constraint ' || con ELSE '' END;
END
$$;

-- okno_test.strip_nulls(r): a handler of okno_idempotent that needs no
-- table (PostgreSQL 18's jsonb_strip_nulls has a second argument, so it
-- cannot be one itself); its body bound when it is created
CREATE FUNCTION okno_test.strip_nulls(r jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE RETURN pg_catalog.jsonb_strip_nulls(r);

-- okno_test.booking(resource, start, end) builds a payload
CREATE FUNCTION okno_test.payload(r int, s text, e text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('resource_id', r, 'starts_at', s, 'ends_at', e)
$$;
