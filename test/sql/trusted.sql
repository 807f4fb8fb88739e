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

-- the owner holds every privilege with grant option, and may pass them on
SELECT c.relname, bool_and(has_table_privilege(c.oid, p || ' WITH GRANT OPTION')) AS all_with_grant
  FROM pg_class c,
       unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) AS p
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
 GROUP BY 1 ORDER BY 1;
SELECT c.relname, bool_and(has_sequence_privilege(c.oid, p || ' WITH GRANT OPTION')) AS all_with_grant
  FROM pg_class c, unnest(ARRAY['USAGE', 'SELECT', 'UPDATE']) AS p
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'S'
 GROUP BY 1 ORDER BY 1;
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

\c :test_db :superuser_name
DROP DATABASE regress_okno_trusted;
DROP ROLE regress_okno_reader;
DROP ROLE regress_okno_owner;
