--
-- trusted: a database owner who is not a superuser installs okno and uses
-- everything
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
CREATE ROLE regress_okno_owner LOGIN NOSUPERUSER;
CREATE ROLE regress_okno_reader;
CREATE DATABASE regress_okno_trusted OWNER regress_okno_owner;
\c regress_okno_trusted regress_okno_owner
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;

CREATE EXTENSION okno CASCADE;
SELECT extname, pg_get_userbyid(extowner) AS owner FROM pg_extension WHERE extname IN ('okno', 'btree_gist') ORDER BY 1;

INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'november-room-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') AS card;
SELECT okno_create_booking(1, 'november-room-2', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');
SELECT kind, payload FROM okno_drain_once();
SELECT count(*) FROM bookings;
SELECT count(*) FROM idempotency;
SELECT count(*) FROM outbox;
SELECT okno_canonical('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');

-- the owner may read and write okno's tables and pass that on, and nothing
-- that would let it run code of its own as another role: no TRIGGER (a
-- trigger runs as whoever writes the row), no REFERENCES (a foreign key's
-- check reads the referenced table as its owner, casts included), no
-- MAINTAIN where the server has it
SELECT c.relname, string_agg(a.privilege_type || CASE WHEN a.is_grantable THEN '*' ELSE '' END,
                             ', ' ORDER BY a.privilege_type) AS owner_privileges
  FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S', 'v')
   AND a.grantee = 'regress_okno_owner'::regrole
 GROUP BY 1 ORDER BY 1;

-- the attack of issue 10: a trigger that makes its author a superuser when
-- a superuser drains; refused for every table okno has
\set VERBOSITY terse
CREATE FUNCTION esc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE regress_okno_owner SUPERUSER';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER zz AFTER UPDATE ON outbox FOR EACH STATEMENT EXECUTE FUNCTION esc();
CREATE TRIGGER zz BEFORE INSERT ON bookings FOR EACH ROW EXECUTE FUNCTION esc();
CREATE TRIGGER zz AFTER INSERT ON idempotency FOR EACH STATEMENT EXECUTE FUNCTION esc();
CREATE TRIGGER zz AFTER INSERT ON actors FOR EACH STATEMENT EXECUTE FUNCTION esc();
CREATE TRIGGER zz AFTER INSERT ON resources FOR EACH STATEMENT EXECUTE FUNCTION esc();
CREATE TRIGGER zz AFTER INSERT ON okno_purge_horizon FOR EACH STATEMENT EXECUTE FUNCTION esc();
-- the same through a foreign key: its check would run the implicit cast
-- below as the owner of bookings, a superuser; refused
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
CREATE TABLE payments (booking bigint REFERENCES bookings (id));
\set VERBOSITY default

GRANT SELECT ON bookings TO regress_okno_reader;
SELECT has_table_privilege('regress_okno_reader', 'bookings', 'SELECT') AS reader_can_select;

-- the owner can drop and re-create the extension
DROP EXTENSION okno;
CREATE EXTENSION okno;
SELECT count(*) AS fresh FROM bookings;

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

-- a superuser creates, drains and purges: the owner is no superuser
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT count(*) AS drained FROM okno_drain(10);
SELECT * FROM okno_purge('0 days', '0 days');
SELECT okno_create_booking(1, 'by-superuser', '{"resource_id":1,"starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T11:00:00Z"}') ->> 'status' AS status;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner';

-- an install of 0.4.0, whose owner held TRIGGER and REFERENCES and used
-- them, updated by that owner: the privileges are taken back, the trigger
-- is disabled and the foreign key dropped, and the attacks fail as on a
-- fresh install
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
ALTER EXTENSION okno UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'okno';
SELECT c.relname, string_agg(a.privilege_type || CASE WHEN a.is_grantable THEN '*' ELSE '' END,
                             ', ' ORDER BY a.privilege_type) AS owner_privileges
  FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S', 'v')
   AND a.grantee = 'regress_okno_owner'::regrole
 GROUP BY 1 ORDER BY 1;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'outbox'::regclass AND NOT tgisinternal;
SELECT conrelid::regclass, conname FROM pg_constraint WHERE contype = 'f' AND confrelid = 'bookings'::regclass ORDER BY 1;
\set VERBOSITY terse
CREATE TRIGGER zz2 AFTER UPDATE ON outbox FOR EACH STATEMENT EXECUTE FUNCTION esc();
ALTER TABLE outbox ENABLE TRIGGER zz;
DROP TRIGGER zz ON outbox;
ALTER TABLE payments ADD FOREIGN KEY (booking) REFERENCES bookings (id);
\set VERBOSITY default
INSERT INTO payments VALUES (ROW(1)::bid);
\c regress_okno_trusted_old :superuser_name
SELECT count(*) AS drained FROM okno_drain(10);
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner';

\c :test_db :superuser_name
DROP DATABASE regress_okno_trusted;
DROP DATABASE regress_okno_trusted_old;
DROP ROLE regress_okno_reader;
DROP ROLE regress_okno_owner;
