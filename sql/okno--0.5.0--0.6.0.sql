/* okno--0.5.0--0.6.0.sql: the application keeps its tables */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.6.0'" to load this file. \quit

-- From 0.6.0 on okno owns only its own objects.  actors, resources,
-- bookings, idempotency and outbox are the application's: this update
-- takes them out of the extension and gives them to the role that owns
-- okno, rows untouched and nothing rewritten, and okno binds to them by
-- name at its first use in a session.  Until this update, 0.5.0 made
-- them members owned by the bootstrap superuser: this script changes the
-- owner of those still owned by a superuser (a table a superuser gave to
-- another role meanwhile keeps its owner), and it reads nothing of them
-- but the catalogs and runs nothing of theirs.  What only adoption needed (the event
-- trigger okno_drop_guard, the table okno_adoption) is retired; okno_verify
-- keeps what it used of okno_adoption, since when it checks bookings, in
-- okno_purge_horizon.checked_since.

-- 1. okno's objects that refer to the tables go first: the views (over C
-- functions that read the tables as the caller from now on), okno_verify
-- (C, likewise), and okno_record_failure(uuid, text), which returned the
-- table's row type.  Each keeps its privileges.
CREATE FUNCTION @extschema@.okno_outbox_counts(OUT pending bigint, OUT due_now bigint,
    OUT delayed bigint, OUT parked bigint, OUT delivered bigint,
    OUT oldest_pending_age interval, OUT oldest_due_age interval, OUT held_back bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'okno_outbox_counts'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.okno_outbox_counts() IS
'the counts of okno_outbox_status';

CREATE FUNCTION @extschema@.okno_subscriber_counts(OUT subscriber text,
    OUT subscribed_at timestamptz, OUT pending bigint, OUT due_now bigint,
    OUT delayed bigint, OUT parked bigint, OUT held_back bigint, OUT not_copied bigint,
    OUT oldest_pending_age interval, OUT copied_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'okno_subscriber_counts'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.okno_subscriber_counts() IS
'the rows of okno_subscribers';

-- re-grant what an object had (aclexplode of its ACL as it was) on the
-- object created again under the same name
CREATE FUNCTION @extschema@.okno_regrant_0_6(what text, acl pg_catalog.aclitem[])
RETURNS void
LANGUAGE plpgsql
AS $okno$
DECLARE
    r record;
BEGIN
    IF acl IS NULL THEN
        RETURN;
    END IF;
    -- the default (PUBLIC's EXECUTE on a routine) unless the ACL has it
    IF what OPERATOR(pg_catalog.~) '^(FUNCTION|PROCEDURE) ' THEN
        EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM PUBLIC', what);
    END IF;
    -- (the owner's own entry too: it says which grant options it holds)
    FOR r IN SELECT a.grantee, a.privilege_type, a.is_grantable
               FROM pg_catalog.aclexplode(acl) AS a
    LOOP
        EXECUTE pg_catalog.format('GRANT %s ON %s TO %s%s', r.privilege_type, what,
            CASE WHEN r.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(r.grantee)) END,
            CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
END
$okno$;

DO $okno$
DECLARE
    status_acl pg_catalog.aclitem[] := (SELECT c.relacl FROM pg_catalog.pg_class AS c
        WHERE c.oid OPERATOR(pg_catalog.=) '@extschema@.okno_outbox_status'::pg_catalog.regclass);
    subscribers_acl pg_catalog.aclitem[] := (SELECT c.relacl FROM pg_catalog.pg_class AS c
        WHERE c.oid OPERATOR(pg_catalog.=) '@extschema@.okno_subscribers'::pg_catalog.regclass);
    failure_acl pg_catalog.aclitem[] := (SELECT p.proacl FROM pg_catalog.pg_proc AS p
        WHERE p.oid OPERATOR(pg_catalog.=) '@extschema@.okno_record_failure(uuid, text)'::pg_catalog.regprocedure);
BEGIN
    DROP VIEW @extschema@.okno_subscribers;
    DROP VIEW @extschema@.okno_outbox_status;
    DROP FUNCTION @extschema@.okno_record_failure(uuid, text);

    CREATE VIEW @extschema@.okno_outbox_status AS
    SELECT c.pending, c.due_now, c.delayed, c.parked, c.delivered,
           c.oldest_pending_age, c.oldest_due_age, c.held_back
      FROM @extschema@.okno_outbox_counts() AS c;
    COMMENT ON VIEW @extschema@.okno_outbox_status IS
    'outbox counts: pending (due_now + delayed + held_back), parked, delivered (estimated), and the oldest waits';
    PERFORM @extschema@.okno_regrant_0_6('TABLE @extschema@.okno_outbox_status', status_acl);

    CREATE VIEW @extschema@.okno_subscribers AS
    SELECT c.subscriber, c.subscribed_at, c.pending, c.due_now, c.delayed, c.parked,
           c.held_back, c.not_copied, c.oldest_pending_age, c.copied_at
      FROM @extschema@.okno_subscriber_counts() AS c;
    COMMENT ON VIEW @extschema@.okno_subscribers IS
    'each subscriber''s counts (the default one first): pending (due_now + delayed + held_back), parked, not yet copied, and the oldest wait';
    PERFORM @extschema@.okno_regrant_0_6('TABLE @extschema@.okno_subscribers', subscribers_acl);

    -- the event's row as OUT parameters, the columns okno keeps
    CREATE FUNCTION @extschema@.okno_record_failure(event_id uuid, error text,
        OUT id uuid, OUT kind text, OUT payload jsonb, OUT created_at timestamptz,
        OUT delivered_at timestamptz, OUT attempts integer, OUT last_error text,
        OUT available_at timestamptz, OUT parked_at timestamptz, OUT created_xid xid8)
    RETURNS record
    AS 'MODULE_PATHNAME', 'okno_record_failure_0_6'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
    COMMENT ON FUNCTION @extschema@.okno_record_failure(uuid, text) IS
    'record a failed delivery: pending again after a backoff, or parked after okno.max_attempts; returns the event''s row';
    PERFORM @extschema@.okno_regrant_0_6('FUNCTION @extschema@.okno_record_failure(uuid, text)', failure_acl);
END
$okno$;

DROP FUNCTION @extschema@.okno_regrant_0_6(text, pg_catalog.aclitem[]);

-- okno_verify in C: a SQL body would refer to the application's tables
CREATE OR REPLACE FUNCTION @extschema@.okno_verify()
RETURNS TABLE (problem text, detail text)
AS 'MODULE_PATHNAME', 'okno_verify'
LANGUAGE C STABLE PARALLEL RESTRICTED;

-- 2. since when okno_verify checks bookings: the adoption's time, where
-- 0.5.0 adopted the course's tables
ALTER TABLE @extschema@.okno_purge_horizon ADD COLUMN checked_since timestamptz;
COMMENT ON TABLE @extschema@.okno_purge_horizon IS
'how far back okno_purge has deleted keys and delivered events, and since when okno_verify checks bookings';
INSERT INTO @extschema@.okno_purge_horizon AS h (singleton, checked_since)
SELECT true, pg_catalog.max(a.adopted_at) FROM @extschema@.okno_adoption AS a
HAVING pg_catalog.max(a.adopted_at) IS NOT NULL
ON CONFLICT (singleton) DO UPDATE SET checked_since = EXCLUDED.checked_since;

-- 3. what only adoption needed
DROP EVENT TRIGGER okno_drop_guard;
DROP FUNCTION @extschema@.okno_drop_guard();
ALTER EXTENSION okno DROP TABLE @extschema@.okno_adoption;
DROP TABLE @extschema@.okno_adoption;

-- 4. the five tables leave the extension (and with them their rows'
-- place in pg_dump's extension data: from now on pg_dump dumps them as
-- the tables they are, definition and all), with their ids' sequences,
-- and go to the role that owns okno.  Their grants stay; the role that
-- installed okno had read and write on them and now owns them.  A fresh
-- 0.5.0 install's fingerprint_version defaulted to okno's form, 1:
-- okno writes it always, and the course's service beside okno leaves it
-- out, so its default is the course's form, 0, as okno_create_tables()
-- makes it.
DO $okno$
DECLARE
    ext pg_catalog.oid := (SELECT e.oid FROM pg_catalog.pg_extension AS e
                            WHERE e.extname OPERATOR(pg_catalog.=) 'okno');
    owner_name text := (SELECT pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(e.extowner))
                          FROM pg_catalog.pg_extension AS e
                         WHERE e.extname OPERATOR(pg_catalog.=) 'okno');
    t text;
    rel pg_catalog.regclass;
    r record;
BEGIN
    FOREACH t IN ARRAY ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'] LOOP
        rel := pg_catalog.to_regclass('@extschema@.' OPERATOR(pg_catalog.||) t);
        CONTINUE WHEN rel IS NULL;
        -- its members among the sequences its columns own
        FOR r IN SELECT s.objid::pg_catalog.regclass AS seq
                   FROM pg_catalog.pg_depend AS s
                   JOIN pg_catalog.pg_depend AS m
                     ON m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                    AND m.objid OPERATOR(pg_catalog.=) s.objid
                    AND m.deptype OPERATOR(pg_catalog.=) 'e'
                    AND m.refobjid OPERATOR(pg_catalog.=) ext
                  WHERE s.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                    AND s.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                    AND s.refobjid OPERATOR(pg_catalog.=) rel
                    AND s.deptype OPERATOR(pg_catalog.=) ANY (ARRAY['a', 'i']::pg_catalog."char"[])
                    AND (SELECT c.relkind FROM pg_catalog.pg_class AS c
                          WHERE c.oid OPERATOR(pg_catalog.=) s.objid) OPERATOR(pg_catalog.=) 'S'
        LOOP
            EXECUTE pg_catalog.format('ALTER EXTENSION okno DROP SEQUENCE %s', r.seq);
        END LOOP;
        IF EXISTS (SELECT FROM pg_catalog.pg_depend AS m
                    WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                      AND m.objid OPERATOR(pg_catalog.=) rel
                      AND m.deptype OPERATOR(pg_catalog.=) 'e'
                      AND m.refobjid OPERATOR(pg_catalog.=) ext) THEN
            EXECUTE pg_catalog.format('ALTER EXTENSION okno DROP TABLE %s', rel);
        END IF;
        -- only a table okno made a superuser's (the bootstrap superuser's)
        CONTINUE WHEN NOT (SELECT o.rolsuper FROM pg_catalog.pg_class AS c
                             JOIN pg_catalog.pg_roles AS o ON o.oid OPERATOR(pg_catalog.=) c.relowner
                            WHERE c.oid OPERATOR(pg_catalog.=) rel);
        IF t OPERATOR(pg_catalog.=) 'idempotency' AND
           (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid)
              FROM pg_catalog.pg_attrdef AS d
              JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid AND a.attnum OPERATOR(pg_catalog.=) d.adnum
             WHERE d.adrelid OPERATOR(pg_catalog.=) rel
               AND a.attname OPERATOR(pg_catalog.=) 'fingerprint_version') OPERATOR(pg_catalog.=) '1' THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN fingerprint_version SET DEFAULT 0', rel);
        END IF;
        EXECUTE pg_catalog.format('ALTER TABLE %s OWNER TO %s', rel, owner_name);
    END LOOP;
END
$okno$;

-- 5. the new functions and errors
CREATE OR REPLACE FUNCTION @extschema@.okno_errors()
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
      ('tables_unfit', 'OKB10', 500, 'okno''s tables cannot serve it'),
      ('concurrent_request', '40001', 503, 'could not serialize access due to a concurrent request; retry the transaction')
    ) AS e(code, sqlstate, http_status, message)
   ORDER BY e.sqlstate;
END;

CREATE FUNCTION @extschema@.okno_create_tables()
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'okno_create_tables'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_create_tables() IS
'create the application''s tables okno serves that are missing, owned by the caller, and prepare the others';

CREATE FUNCTION @extschema@.okno_prepare_tables()
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'okno_prepare_tables'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_prepare_tables() IS
'add to the application''s tables what okno needs and they lack (columns, okno''s indexes on outbox), as their owner';
