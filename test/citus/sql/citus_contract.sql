-- okno's contract for bookings on the coordinator (test/citus/contract.psql),
-- on the layout citus_layout made; the rooms it books are added here
INSERT INTO resources (name) SELECT 'room ' || g FROM generate_series(3, 6) AS g;
\set tag c
\set room_a 3
\set room_b 4
\set day 01
\i test/citus/contract.psql

-- a role that may read and insert into the tables, and nothing of
-- bookings.id's sequence: a create draws the booking's id as the identity
-- column would, without a privilege on the sequence
CREATE ROLE regress_okno_citus_app LOGIN;  -- (Citus connects to the workers as the role)
GRANT SELECT, INSERT ON actors, resources, bookings, idempotency, outbox TO regress_okno_citus_app;
-- where Citus has okno's named subscribers (okno_distribute_own_tables()),
-- a writer reads their list beside its event: without SELECT on it, the
-- create is refused, nothing written
SET ROLE regress_okno_citus_app;
\set VERBOSITY terse
SELECT okno_create_booking(2, 'c-app', '{"resource_id":6,"starts_at":"2030-06-01T10:00:00Z","ends_at":"2030-06-01T11:00:00Z"}') ->> 'status' AS status;
\set VERBOSITY default
RESET ROLE;
GRANT SELECT ON okno_subscriber TO regress_okno_citus_app;
SET ROLE regress_okno_citus_app;
SELECT okno_create_booking(2, 'c-app', '{"resource_id":6,"starts_at":"2030-06-01T10:00:00Z","ends_at":"2030-06-01T11:00:00Z"}') ->> 'status' AS status;
-- the statements that take a lock on another node's shard lock no row
-- FOR UPDATE there (so that Citus keeps them in the transaction), which
-- asks for UPDATE: for a role without it, okno runs them as the tables'
-- owner (an order key's turn; a key's lock tried with okno.key_wait off)
SELECT okno_emit('app.test', '{}', 'c-app-key') IS NOT NULL AS emitted;
-- ... which Citus does over a connection of the owner's: an owner that
-- cannot log in is refused with one error, wherever the key's shard is
-- (the owner made NOLOGIN in a transaction rolled back, on this node only)
RESET ROLE;
BEGIN;
SET LOCAL citus.enable_ddl_propagation = off;
ALTER ROLE CURRENT_USER NOLOGIN;
SET LOCAL ROLE regress_okno_citus_app;
SELECT okno_emit('app.test', '{}', 'c-app-key') IS NOT NULL AS emitted;
ROLLBACK;
SET ROLE regress_okno_citus_app;
SET okno.key_wait = off;
SELECT okno_create_booking(2, 'c-app-2', '{"resource_id":6,"starts_at":"2030-06-02T10:00:00Z","ends_at":"2030-06-02T11:00:00Z"}') ->> 'status' AS status;
RESET okno.key_wait;
RESET ROLE;
REVOKE ALL ON actors, resources, bookings, idempotency, outbox, okno_subscriber FROM regress_okno_citus_app;
DROP ROLE regress_okno_citus_app;

-- a role that may read the keys but not store them: a stored key's
-- replay, as on one server (a create claims its key first only for a role
-- that may store it); a new key refused, nothing written
CREATE ROLE regress_okno_citus_reader LOGIN;
GRANT SELECT ON actors, resources, bookings, idempotency, outbox, okno_subscriber TO regress_okno_citus_reader;
SET ROLE regress_okno_citus_reader;
SELECT okno_create_booking(2, 'c-app', '{"resource_id":6,"starts_at":"2030-06-01T10:00:00Z","ends_at":"2030-06-01T11:00:00Z"}') ->> 'status' AS status;
\set VERBOSITY terse
SELECT okno_create_booking(2, 'c-reader', '{"resource_id":6,"starts_at":"2030-06-03T10:00:00Z","ends_at":"2030-06-03T11:00:00Z"}') ->> 'status' AS status;
\set VERBOSITY default
RESET ROLE;
SELECT count(*) AS keys_of_the_reader FROM idempotency WHERE request_key = 'c-reader';
REVOKE ALL ON actors, resources, bookings, idempotency, outbox, okno_subscriber FROM regress_okno_citus_reader;
DROP ROLE regress_okno_citus_reader;
