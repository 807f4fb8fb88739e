--
-- trusted: a database owner who is not a superuser installs okno, creates
-- the application's tables (they are its own), migrates them with okno
-- installed and uses everything.  A superuser who calls okno on those
-- tables runs the owner's code on them (triggers, defaults, checks, index
-- expressions and policies on all five) as the owner, never as itself, and
-- CREATE, ALTER and DROP EXTENSION run none of it.
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
CREATE ROLE regress_okno_owner LOGIN NOSUPERUSER;
CREATE ROLE regress_okno_reader;
CREATE ROLE regress_okno_other;
CREATE DATABASE regress_okno_trusted OWNER regress_okno_owner;
\c regress_okno_trusted regress_okno_owner
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;

CREATE EXTENSION okno CASCADE;
SELECT extname, pg_get_userbyid(extowner) AS owner FROM pg_extension WHERE extname IN ('okno', 'btree_gist') ORDER BY 1;
SELECT count(*) AS changes FROM okno_create_tables();
-- the application's tables are the owner's, okno's own objects the
-- bootstrap superuser's (with the owner's privileges on them, which it
-- may pass on)
SELECT c.relname, CASE WHEN c.relowner = 'regress_okno_owner'::regrole THEN 'the owner' ELSE 'bootstrap superuser' END AS owned_by
  FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S', 'v') ORDER BY 1;
SELECT c.relname, string_agg(a.privilege_type || CASE WHEN a.is_grantable THEN '*' ELSE '' END,
                             ', ' ORDER BY a.privilege_type) AS owner_privileges
  FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S', 'v')
   AND a.grantee = 'regress_okno_owner'::regrole AND c.relowner <> a.grantee
 GROUP BY 1 ORDER BY 1;

INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'november-room-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') AS card;
\set VERBOSITY terse
SELECT okno_create_booking(1, 'november-room-2', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');
\set VERBOSITY default
SELECT kind, payload FROM okno_drain_once();
SELECT okno_canonical('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');

-- the owner's next migration, with okno installed and in use
ALTER TABLE bookings ADD COLUMN note text;
CREATE INDEX bookings_by_actor ON bookings (actor_id);
ALTER TABLE actors ADD COLUMN email text;
ALTER TABLE resources ADD COLUMN capacity integer NOT NULL DEFAULT 1;
SELECT okno_create_booking(1, 'november-room-3', '{"resource_id":1,"starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}') ->> 'status' AS status;
GRANT SELECT ON bookings TO regress_okno_reader;
SELECT has_table_privilege('regress_okno_reader', 'bookings', 'SELECT') AS reader_can_select;

-- the owner can drop and re-create the extension: its tables stay, and
-- okno serves them again
DROP EXTENSION okno;
SELECT count(*) AS bookings_kept FROM bookings;
CREATE EXTENSION okno;
SELECT count(*) AS changes FROM okno_prepare_tables();
SELECT okno_create_booking(1, 'november-room-3', '{"resource_id":1,"starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}') ->> 'status' AS replayed;

-- a role without the table privileges gets 42501 and writes nothing
\c regress_okno_trusted :superuser_name
\set SHOW_CONTEXT never
SET ROLE regress_okno_reader;
SELECT okno_create_booking(1, 'stranger-1', '{"resource_id":1,"starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM okno_drain_once();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) AS bookings FROM bookings;
\set SHOW_CONTEXT errors

--
-- The owner's code on all five tables.  Each piece records who ran it, and
-- makes the owner a superuser when it runs as one.
--
\c regress_okno_trusted regress_okno_owner
CREATE TABLE ran (what text, who name, super boolean);
CREATE FUNCTION esc(what text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    super boolean := (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user);
BEGIN
    INSERT INTO public.ran VALUES (what, current_user, super);
    IF super THEN
        EXECUTE 'ALTER ROLE regress_okno_owner SUPERUSER';
    END IF;
    RETURN true;
END $$;
CREATE FUNCTION esc_text(what text) RETURNS text LANGUAGE sql VOLATILE
    AS $$ SELECT CASE WHEN public.esc(what) THEN what END $$;
-- (an index expression must be IMMUTABLE: this one says so, and is not)
CREATE FUNCTION esc_key(what text, k text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM public.esc(what);
    RETURN k;
END $$;
CREATE FUNCTION esc_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM public.esc(format('%s %s %s %s', TG_TABLE_NAME, TG_WHEN, TG_OP, TG_LEVEL));
    IF TG_LEVEL = 'ROW' THEN
        RETURN COALESCE(NEW, OLD);
    END IF;
    RETURN NULL;
END $$;
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'] LOOP
        EXECUTE format('CREATE TRIGGER esc_row BEFORE INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION esc_trigger()', t);
        EXECUTE format('CREATE TRIGGER esc_statement AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH STATEMENT EXECUTE FUNCTION esc_trigger()', t);
        EXECUTE format('ALTER TABLE %I ADD COLUMN esc_default text DEFAULT esc_text(%L)', t, t || ' default');
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT esc_check CHECK (esc(%L))', t, t || ' check');
        EXECUTE format('CREATE INDEX %I ON %I (esc_key(%L, esc_default))', t || '_esc', t, t || ' index expression');
        -- a policy that the owner is held to too (a superuser never is)
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY esc_policy ON %I USING (esc(%L)) WITH CHECK (esc(%L))', t, t || ' policy', t || ' policy check');
    END LOOP;
END
$$;
-- (what ran as the owner while it set this up is of no interest)
TRUNCATE ran;

-- a superuser calls every okno function
\c regress_okno_trusted :superuser_name
SELECT okno_create_booking(1, 'by-superuser', '{"resource_id":1,"starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T11:00:00Z"}') ->> 'status' AS created;
SELECT okno_create_booking(1, 'by-superuser', '{"resource_id":1,"starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T11:00:00Z"}') ->> 'status' AS replayed;
SELECT replayed FROM okno_create_booking_result(1, 'by-superuser-2', '{"resource_id":1,"starts_at":"2026-12-04T10:00:00Z","ends_at":"2026-12-04T11:00:00Z"}');
SELECT okno_get_booking(1, (SELECT max(id) FROM bookings)) ->> 'status' AS got;
SELECT okno_cancel_booking(1, (SELECT max(id) FROM bookings)) ->> 'status' AS cancelled;
SELECT okno_subscribe('audit') AS subscribed;
SELECT okno_create_booking(1, 'by-superuser-3', '{"resource_id":1,"starts_at":"2026-12-05T10:00:00Z","ends_at":"2026-12-05T11:00:00Z"}') ->> 'status' AS created;
SELECT count(*) AS drained_once FROM okno_drain_once();
SELECT count(*) AS drained FROM okno_drain(100);
SELECT count(*) AS drained_audit FROM okno_drain(100, 'audit');
SELECT id AS last_event FROM outbox ORDER BY id DESC LIMIT 1 \gset
SET okno.max_attempts = 1;
SELECT attempts FROM okno_record_failure(:'last_event', 'failed for the superuser');
SELECT attempts FROM okno_record_failure(:'last_event', 'failed for audit', 'audit');
RESET okno.max_attempts;
SELECT okno_requeue(:'last_event') AS requeued;
SELECT okno_requeue(:'last_event', 'audit') AS requeued_audit;
SELECT count(*) AS drained FROM okno_drain(100);
SELECT okno_release(:'last_event') AS released;
SELECT okno_release(:'last_event', 'audit') AS released_audit;
SELECT okno_requeue_parked() AS requeued_in_bulk;
SELECT okno_discard(:'last_event') AS discarded;
SELECT * FROM okno_purge('0 days', '0 days');
SELECT count(*) >= 0 AS verified FROM okno_verify();
CALL okno_wait(0);
CALL okno_wait(0, NULL, 'audit');
SELECT pending >= 0 AS status FROM okno_outbox_status;
SELECT count(*) AS subscribers FROM okno_subscribers;
SELECT okno_unsubscribe('audit') AS unsubscribed;
SELECT count(*) AS changes FROM okno_prepare_tables();
SELECT count(*) AS changes FROM okno_create_tables();
-- and installs, updates and drops okno
DROP EXTENSION okno;
CREATE EXTENSION okno;
ALTER EXTENSION okno UPDATE;
SELECT okno_create_booking(1, 'by-superuser-4', '{"resource_id":1,"starts_at":"2026-12-06T10:00:00Z","ends_at":"2026-12-06T11:00:00Z"}') ->> 'status' AS created;
DROP EXTENSION okno;
CREATE EXTENSION okno;
-- the owner's code ran, every piece of it as the owner, and the owner is
-- no superuser
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner';
SELECT who, super, count(*) > 0 AS ran FROM ran GROUP BY 1, 2 ORDER BY 1, 2;
SELECT regexp_replace(what, ' .*', '') AS on_table, count(DISTINCT what) AS kinds_of_code
  FROM ran GROUP BY 1 ORDER BY 1;
SELECT DISTINCT what FROM ran WHERE what !~ ' (BEFORE|AFTER) ' ORDER BY 1;

-- the same without the triggers and policies, so that the create writes
-- its rows without a plan (the direct path: defaults, checks and index
-- expressions evaluated by okno itself): still as the owner
\c regress_okno_trusted regress_okno_owner
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'] LOOP
        EXECUTE format('DROP TRIGGER esc_row ON %I', t);
        EXECUTE format('DROP TRIGGER esc_statement ON %I', t);
        EXECUTE format('DROP POLICY esc_policy ON %I', t);
        EXECUTE format('ALTER TABLE %I DISABLE ROW LEVEL SECURITY, NO FORCE ROW LEVEL SECURITY', t);
    END LOOP;
END
$$;
TRUNCATE ran;
\c regress_okno_trusted :superuser_name
SELECT okno_create_booking(1, 'by-superuser-5', '{"resource_id":1,"starts_at":"2026-12-07T10:00:00Z","ends_at":"2026-12-07T11:00:00Z"}') ->> 'status' AS created;
SELECT count(*) AS drained FROM okno_drain(100);
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner';
SELECT who, super, string_agg(DISTINCT what, ', ' ORDER BY what) AS ran FROM ran GROUP BY 1, 2 ORDER BY 1, 2;

-- tables of two owners: a superuser's call is refused (there is no one
-- owner to run it as), a call of either owner's is not
ALTER TABLE resources OWNER TO regress_okno_other;
\set VERBOSITY terse
SELECT count(*) FROM okno_drain(1);
\set VERBOSITY default
ALTER TABLE resources OWNER TO regress_okno_owner;
-- a deferrable trigger on a table okno writes would fire at commit, as
-- whoever commits: refused for a superuser
\c regress_okno_trusted regress_okno_owner
CREATE CONSTRAINT TRIGGER esc_late AFTER INSERT ON outbox DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION esc_trigger();
\c regress_okno_trusted :superuser_name
\set VERBOSITY terse
SELECT count(*) FROM okno_drain(1);
\set VERBOSITY default
\c regress_okno_trusted regress_okno_owner
SELECT count(*) AS drained_by_owner FROM okno_drain(1);
DROP TRIGGER esc_late ON outbox;
\c regress_okno_trusted :superuser_name
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner';
SELECT count(*) AS ran_as_superuser FROM ran WHERE super;

-- what the owner's code does in a superuser's call ends with the
-- transaction (its writes, a NOTIFY, a transaction-level advisory lock),
-- but a session-level advisory lock would outlive it in the superuser's
-- (pooled) session: the call is refused and the lock released; when the
-- code fails after taking it, the lock is released all the same
\c regress_okno_trusted regress_okno_owner
CREATE TABLE lock_plan (scope text, fail boolean);
INSERT INTO lock_plan VALUES ('none', false);
CREATE FUNCTION lock_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    plan record := (SELECT p FROM public.lock_plan AS p);
BEGIN
    IF plan.scope = 'session' THEN
        PERFORM pg_advisory_lock(4242);
        PERFORM pg_advisory_lock(4242);
        PERFORM pg_advisory_lock_shared(17, 42);
    ELSIF plan.scope = 'transaction' THEN
        PERFORM pg_advisory_xact_lock(4243);
    END IF;
    IF plan.fail THEN
        RAISE EXCEPTION 'the owner''s trigger failed';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER lock_trigger BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION lock_trigger();
\c regress_okno_trusted :superuser_name
-- (the superuser's own session lock, taken before, is its own and stays)
SELECT pg_advisory_lock(7);
UPDATE lock_plan SET scope = 'session';
\set VERBOSITY terse
SELECT okno_emit('locked', '{}');
\set VERBOSITY default
SELECT objid, mode FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' ORDER BY 1;
UPDATE lock_plan SET fail = true;
-- (the WARNING comes with the abort, after the error reached the client:
-- shown where the error is caught, in a subtransaction)
SET client_min_messages = error;
\set VERBOSITY terse
SELECT okno_emit('locked', '{}');
\set VERBOSITY default
RESET client_min_messages;
SELECT objid, mode FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' ORDER BY 1;
CREATE FUNCTION pg_temp.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END
$$;
SELECT pg_temp.error_of($$SELECT okno_emit('locked', '{}')$$);
SELECT objid, mode FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' ORDER BY 1;
UPDATE lock_plan SET scope = 'transaction', fail = false;
BEGIN;
SELECT okno_emit('locked', '{}') IS NOT NULL AS emitted;
SELECT objid, mode FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' ORDER BY 1;
COMMIT;
SELECT objid, mode FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' ORDER BY 1;
SELECT pg_advisory_unlock(7);
-- the owner's own calls are its own business
\c regress_okno_trusted regress_okno_owner
UPDATE lock_plan SET scope = 'session';
SELECT okno_emit('locked', '{}') IS NOT NULL AS emitted;
SELECT count(*) AS owner_holds FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory';
SELECT pg_advisory_unlock_all();
DROP TRIGGER lock_trigger ON outbox;
SELECT count(*) AS drained FROM okno_drain(100);

--
-- Only the current version can be installed: no older version's full
-- script is installed with okno (docs/RELEASING.md), so none of their
-- holes (0.1.0 to 0.4.0 granted TRIGGER and REFERENCES on tables of the
-- bootstrap superuser's; 0.5.0's adoption read the owner's tables as the
-- bootstrap superuser) can be installed.  For every version the server
-- lists, a database owner who is not a superuser, and a role with nothing
-- but CREATE on the database, are refused, or get a database where no
-- table the application uses belongs to a superuser, and no role but a
-- superuser holds on a superuser's table (okno's own, the bootstrap
-- superuser's by the design of trusted extensions) anything but what
-- okno's install grants its owner: SELECT, INSERT, UPDATE, DELETE,
-- TRUNCATE; USAGE, SELECT and UPDATE on its sequence (never TRIGGER,
-- REFERENCES or MAINTAIN); and okno has no SECURITY DEFINER function.
--
\c :test_db :superuser_name
CREATE ROLE regress_okno_creator LOGIN NOSUPERUSER;
CREATE DATABASE regress_okno_versions OWNER regress_okno_owner;
GRANT CREATE ON DATABASE regress_okno_versions TO regress_okno_creator;
\c regress_okno_versions :superuser_name
-- what is wrong with the database role made of it, one line each
CREATE FUNCTION pg_temp.audit(installer name) RETURNS SETOF text LANGUAGE sql AS $$
  -- the application's tables and their sequences (extension members up to
  -- 0.5.0), and any other table but okno's own
  SELECT format('%s %s belongs to a superuser', CASE c.relkind WHEN 'S' THEN 'sequence' ELSE 'table' END, c.relname)
    FROM pg_class c JOIN pg_roles o ON o.oid = c.relowner
   WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S', 'v', 'm', 'p') AND o.rolsuper
     AND (c.relname ~ '^(actors|resources|bookings|idempotency|outbox)(_id_seq)?$'
          OR NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                            AND d.deptype = 'e' AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno')))
  UNION ALL
  SELECT format('%s holds %s%s on %s, a superuser''s', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END,
                a.privilege_type, CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END, c.relname)
    FROM pg_class c JOIN pg_roles o ON o.oid = c.relowner, aclexplode(c.relacl) a
   WHERE c.relnamespace = 'public'::regnamespace AND o.rolsuper AND a.grantee <> c.relowner
     AND NOT COALESCE((SELECT g.rolsuper FROM pg_roles g WHERE g.oid = a.grantee), false)
     AND NOT (a.grantee = (SELECT r.oid FROM pg_roles r WHERE r.rolname = installer) AND
              CASE c.relkind WHEN 'S' THEN a.privilege_type IN ('USAGE', 'SELECT', 'UPDATE')
                             WHEN 'v' THEN a.privilege_type = 'SELECT'
                             ELSE a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE') END)
  UNION ALL
  SELECT format('column %s.%s: %s holds %s', c.relname, t.attname, pg_get_userbyid(a.grantee), a.privilege_type)
    FROM pg_class c JOIN pg_roles o ON o.oid = c.relowner JOIN pg_attribute t ON t.attrelid = c.oid, aclexplode(t.attacl) a
   WHERE c.relnamespace = 'public'::regnamespace AND o.rolsuper AND a.grantee <> c.relowner
  UNION ALL
  SELECT format('function %s is SECURITY DEFINER', p.oid::regprocedure)
    FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef
$$;
-- role installs version v and makes its tables where it may; the audit,
-- or why it was refused; nothing of it is kept
CREATE FUNCTION pg_temp.try_install(installer name, v text, OUT outcome text) LANGUAGE plpgsql AS $$
DECLARE
    findings text;
    tables text := ', tables created';
BEGIN
    BEGIN
        EXECUTE format('SET LOCAL ROLE %I', installer);
        EXECUTE format('CREATE EXTENSION okno VERSION %L CASCADE', v);
        IF to_regprocedure('okno_create_tables()') IS NULL THEN
            tables := ', tables created by the extension';
        ELSIF has_schema_privilege('public', 'CREATE') THEN
            PERFORM okno_create_tables();
        ELSE
            tables := ' (no CREATE on schema public: no tables)';
        END IF;
        RESET ROLE;
        PERFORM pg_temp.tamper(installer);
        findings := (SELECT string_agg(f, '; ' ORDER BY f) FROM pg_temp.audit(installer) AS f);
        RAISE EXCEPTION USING ERRCODE = 'OKT01', MESSAGE = COALESCE(findings, 'none');
    EXCEPTION WHEN SQLSTATE 'OKT01' THEN
        GET STACKED DIAGNOSTICS findings = MESSAGE_TEXT;
        outcome := CASE findings WHEN 'none' THEN 'installed: nothing of a superuser''s to use'
                   ELSE 'installed: ' || findings END || tables;
    WHEN OTHERS THEN
        outcome := 'refused: ' || SQLSTATE || ' ' || SQLERRM;
    END;
    RESET ROLE;
END
$$;
-- (what a superuser does to the database before the audit: nothing, but
-- below, where the audit is shown to find what it looks for)
CREATE FUNCTION pg_temp.tamper(installer name) RETURNS void LANGUAGE sql AS '';
SET client_min_messages = warning;
SELECT v.version, r.installer, pg_temp.try_install(r.installer, v.version) AS outcome
  FROM pg_available_extension_versions v,
       (VALUES ('regress_okno_owner'::name), ('regress_okno_creator')) AS r(installer)
 WHERE v.name = 'okno' ORDER BY 1, 2;
RESET client_min_messages;
SELECT count(*) AS extensions_left FROM pg_extension WHERE extname IN ('okno', 'btree_gist');
-- (the audit finds each of the things it looks for)
CREATE OR REPLACE FUNCTION pg_temp.tamper(installer name) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    ALTER TABLE public.actors OWNER TO CURRENT_USER;
    EXECUTE format('GRANT TRIGGER, REFERENCES ON public.okno_key TO %I', installer);
    EXECUTE format('GRANT SELECT (name) ON public.okno_subscriber TO %I', installer);
    GRANT SELECT ON public.okno_delivery TO PUBLIC;
    ALTER FUNCTION public.okno_errors() SECURITY DEFINER;
END
$$;
SET client_min_messages = warning;
SELECT regexp_split_to_table(pg_temp.try_install('regress_okno_owner', (SELECT default_version FROM pg_available_extensions WHERE name = 'okno')), '; ') AS findings;
RESET client_min_messages;

--
-- Two ways 0.7.0's installable versions let a database owner run code as
-- the bootstrap superuser, tried again: each names a version that cannot
-- be installed now, and what can be installed runs none of the owner's
-- code as a superuser.
--
\c regress_okno_versions regress_okno_owner
-- (a sequence counts the times it ran as a superuser: a failed statement
-- rolls the rest back, not that)
CREATE TABLE ran (what text, who name, super boolean);
CREATE SEQUENCE ran_as_superuser;
CREATE FUNCTION escalate(what text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    super boolean := (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user);
BEGIN
    INSERT INTO public.ran VALUES (what, current_user, super);
    IF super THEN
        PERFORM nextval('public.ran_as_superuser');
        EXECUTE 'ALTER ROLE regress_okno_owner SUPERUSER';
    END IF;
END $$;
CREATE FUNCTION escalate_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM public.escalate('trigger on ' || TG_TABLE_NAME);
    RETURN NULL;
END $$;
-- 1. 0.5.0 adopted a course's tables: its install read every row of a
-- bookings table, status cast to text by a cast of the owner's
CREATE TYPE booking_state AS (s text);
CREATE FUNCTION booking_state_text(booking_state) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM public.escalate('cast of status');
    RETURN ($1).s;
END $$;
CREATE CAST (booking_state AS text) WITH FUNCTION booking_state_text(booking_state) AS IMPLICIT;
CREATE TABLE bookings (id bigint PRIMARY KEY, resource_id integer, actor_id integer,
                       starts_at timestamptz, ends_at timestamptz, status booking_state);
INSERT INTO bookings VALUES (1, 1, 1, '2026-12-01T10:00:00Z', '2026-12-01T11:00:00Z', ROW('confirmed'));
\set VERBOSITY terse
CREATE EXTENSION okno VERSION '0.5.0' CASCADE;
\set VERBOSITY default
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
RESET client_min_messages;
SELECT count(*) AS code_that_ran, (SELECT is_called FROM ran_as_superuser) AS ran_as_superuser FROM ran;
DROP EXTENSION okno;
DROP TABLE bookings;
-- 2. 0.4.0 granted REFERENCES on its tables (the bootstrap superuser's):
-- a foreign key's check reads the table it references as that table's
-- owner, applying an implicit cast of the referencing role's
CREATE TYPE booking_ref AS (v bigint);
CREATE FUNCTION booking_ref_int8(booking_ref) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM public.escalate('cast of a foreign key');
    RETURN ($1).v;
END $$;
CREATE CAST (booking_ref AS bigint) WITH FUNCTION booking_ref_int8(booking_ref) AS IMPLICIT;
\set VERBOSITY terse
CREATE EXTENSION okno VERSION '0.4.0' CASCADE;
\set VERBOSITY default
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
RESET client_min_messages;
SELECT count(*) AS changes FROM okno_create_tables();
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'ref-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS id;
-- the tables are the owner's: its foreign key checks as itself
CREATE TABLE payments (booking booking_ref REFERENCES bookings (id));
INSERT INTO payments VALUES (ROW(1)::booking_ref);
-- and okno's own tables, a superuser's, take no foreign key and no
-- trigger of the owner's
\set VERBOSITY terse
CREATE TABLE audit (subscriber text REFERENCES okno_subscriber (name));
CREATE TRIGGER mine AFTER INSERT ON okno_key FOR EACH ROW EXECUTE FUNCTION escalate_trigger();
\set VERBOSITY default
SELECT what, who, super FROM ran ORDER BY 1;
\c regress_okno_versions :superuser_name
SELECT okno_create_booking(1, 'ref-2', '{"resource_id":1,"starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}') ->> 'id' AS id;
INSERT INTO payments VALUES (ROW(2)::booking_ref);
SELECT what, who, super FROM ran ORDER BY 1;
SELECT rolsuper, (SELECT is_called FROM ran_as_superuser) AS ran_as_superuser
  FROM pg_roles WHERE rolname = 'regress_okno_owner';

\c :test_db :superuser_name
DROP DATABASE regress_okno_trusted;
DROP DATABASE regress_okno_versions;
DROP ROLE regress_okno_creator;
DROP ROLE regress_okno_reader;
DROP ROLE regress_okno_other;
DROP ROLE regress_okno_owner;
