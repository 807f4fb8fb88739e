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
\c regress_okno_trusted :superuser_name
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner';
SELECT count(*) AS ran_as_superuser FROM ran WHERE super;

--
-- An install of 0.4.0, whose owner held TRIGGER and REFERENCES and used
-- them, updated by that owner to the current version: 0.4.1 disabled the
-- trigger and dropped the foreign key whose check applied the owner's cast
-- as a superuser; from 0.6.0 on the tables are the owner's, who may enable
-- its trigger again, and a superuser's drain runs it as the owner.
--
CREATE DATABASE regress_okno_trusted_old OWNER regress_okno_owner;
\c regress_okno_trusted_old regress_okno_owner
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.4.0' CASCADE;
RESET client_min_messages;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'old-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS id;
CREATE FUNCTION esc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE regress_okno_owner SUPERUSER';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER zz AFTER UPDATE ON outbox FOR EACH STATEMENT EXECUTE FUNCTION esc();
CREATE TYPE bid AS (v bigint);
CREATE FUNCTION bid_to_int8(bid) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE regress_okno_owner SUPERUSER';
    END IF;
    RETURN ($1).v;
END $$;
CREATE CAST (bid AS bigint) WITH FUNCTION bid_to_int8(bid) AS IMPLICIT;
CREATE TABLE payments (booking bid REFERENCES bookings (id));
-- a foreign key without a cast stays
CREATE TABLE invoices (booking bigint REFERENCES bookings (id));
-- (the update scripts run as the bootstrap superuser: they run none of
-- the owner's code, and only read the catalogs of its objects)
SET client_min_messages = error;
ALTER EXTENSION okno UPDATE;
RESET client_min_messages;
SELECT extversion, (SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner') AS owner_is_superuser
  FROM pg_extension WHERE extname = 'okno';
SELECT c.relname, pg_get_userbyid(c.relowner) AS owner
  FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname !~ '^okno_' ORDER BY 1;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'outbox'::regclass AND NOT tgisinternal;
SELECT conrelid::regclass, conname FROM pg_constraint WHERE contype = 'f' AND confrelid = 'bookings'::regclass ORDER BY 1;
ALTER TABLE outbox ENABLE TRIGGER zz;
ALTER TABLE payments ADD FOREIGN KEY (booking) REFERENCES bookings (id);
INSERT INTO payments VALUES (ROW(1)::bid);
-- what the update's okno needs of the tables (0.7.0: outbox.order_key),
-- added by their owner
SELECT * FROM okno_prepare_tables();
\c regress_okno_trusted_old :superuser_name
SELECT count(*) AS drained FROM okno_drain(10);
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner';

\c :test_db :superuser_name
DROP DATABASE regress_okno_trusted;
DROP DATABASE regress_okno_trusted_old;
DROP ROLE regress_okno_reader;
DROP ROLE regress_okno_other;
DROP ROLE regress_okno_owner;
