--
-- wait: CALL okno_wait(timeout_ms) as a statement of its own.  Its
-- arguments, the places it refuses (a transaction block, a function), what
-- it returns with nothing due and with an event due, and that it leaves no
-- lock behind.  Waking by a commit, a prepared transaction and a retry,
-- and cancel and timeouts: test/specs/wait_wake.spec.
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
CREATE DATABASE regress_okno_wait;
\c regress_okno_wait
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
RESET client_min_messages;
SELECT count(*) AS tables_created FROM okno_create_tables();
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
-- nothing due: the wait ends at its timeout (0: only look)
CALL okno_wait(0);
CALL okno_wait(20);
-- bad arguments
CALL okno_wait(-1);
CALL okno_wait(NULL);
-- a function, not a procedure: PostgreSQL's own error
SELECT okno_wait(0);
-- inside a transaction block, and from a function: refused
BEGIN;
CALL okno_wait(0);
ROLLBACK;
CREATE FUNCTION pg_temp.waits() RETURNS boolean LANGUAGE plpgsql
AS $$ DECLARE w boolean; BEGIN CALL okno_wait(0, w); RETURN w; END $$;
\set SHOW_CONTEXT never
SELECT pg_temp.waits();
\set SHOW_CONTEXT errors
-- a procedure or a DO block may call it (no transaction block around them)
DO $$ DECLARE w boolean; BEGIN CALL okno_wait(0, w); RAISE NOTICE 'woken: %', w; END $$;
CREATE PROCEDURE pg_temp.relay_step(INOUT woken boolean DEFAULT NULL)
LANGUAGE plpgsql AS $$ BEGIN CALL okno_wait(0, woken); END $$;
CALL pg_temp.relay_step();
-- not in a block with an EXCEPTION clause (PL/pgSQL runs a CALL there as
-- in a transaction block), and no lock stays after the error is caught
DO $$
DECLARE w boolean;
BEGIN
  BEGIN
    CALL okno_wait(0, w);
  EXCEPTION WHEN active_sql_transaction THEN
    RAISE NOTICE 'caught: %', SQLERRM;
  END;
END $$;
SELECT count(*) AS okno_wait_locks FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 4
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
-- an event due: woken at once, however long the timeout
SELECT okno_create_booking(1, 'k1', jsonb_build_object('resource_id', 1,
         'starts_at', '2034-01-01T10:00:00Z', 'ends_at', '2034-01-01T11:00:00Z')) ->> 'status' AS status;
CALL okno_wait(600000);
-- a parked event is not due; a delayed one is not due yet
UPDATE outbox SET parked_at = now(), attempts = 10, last_error = 'gave up';
CALL okno_wait(0);
UPDATE outbox SET parked_at = NULL, available_at = now() + interval '1 hour';
CALL okno_wait(0);
UPDATE outbox SET available_at = NULL;
CALL okno_wait(0);
-- no lock stays: not after a wait, not after a refused one
SELECT count(*) AS okno_wait_locks FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 4
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
-- a role that may not read the outbox cannot wait on it
CREATE ROLE regress_okno_wait_nobody;
SET ROLE regress_okno_wait_nobody;
\set SHOW_CONTEXT never
CALL okno_wait(0);
\set SHOW_CONTEXT errors
RESET ROLE;
SELECT count(*) AS okno_wait_locks FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 4
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
-- the relay's privileges (docs/PRIVILEGES.md): each of them is needed
CREATE ROLE regress_okno_wait_relay;
GRANT SELECT (id, kind, payload, delivered_at, parked_at, available_at, xmax, order_key) ON outbox TO regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
\set SHOW_CONTEXT never
REVOKE SELECT (id) ON outbox FROM regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
GRANT SELECT (id) ON outbox TO regress_okno_wait_relay;
-- (kind and payload: events wait for the earlier events of their booking)
REVOKE SELECT (kind) ON outbox FROM regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
GRANT SELECT (kind) ON outbox TO regress_okno_wait_relay;
REVOKE SELECT (payload) ON outbox FROM regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
GRANT SELECT (payload) ON outbox TO regress_okno_wait_relay;
-- (order_key, 0.7.0: events wait for the earlier events of their order key)
REVOKE SELECT (order_key) ON outbox FROM regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
GRANT SELECT (order_key) ON outbox TO regress_okno_wait_relay;
REVOKE SELECT (delivered_at) ON outbox FROM regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
GRANT SELECT (delivered_at) ON outbox TO regress_okno_wait_relay;
REVOKE SELECT (parked_at) ON outbox FROM regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
GRANT SELECT (parked_at) ON outbox TO regress_okno_wait_relay;
REVOKE SELECT (available_at) ON outbox FROM regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
GRANT SELECT (available_at) ON outbox TO regress_okno_wait_relay;
REVOKE SELECT (xmax) ON outbox FROM regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0);
RESET ROLE;
GRANT SELECT (xmax) ON outbox TO regress_okno_wait_relay;
\set SHOW_CONTEXT errors
-- a subscriber's wait (0.5.0): CALL okno_wait(ms, NULL, subscriber)
UPDATE outbox SET delivered_at = now();
CALL okno_wait(0, NULL, 'nobody');
CALL okno_wait(0, NULL, 'No Such');
CALL okno_wait(0, NULL, NULL);
CALL okno_wait(0, NULL, 'default');
SELECT okno_subscribe('journal') AS journal;
CALL okno_wait(0, NULL, 'journal');
-- an event it has not copied: due (the default subscriber's too)
SELECT okno_create_booking(1, 'k2', jsonb_build_object('resource_id', 1,
         'starts_at', '2034-01-02T10:00:00Z', 'ends_at', '2034-01-02T11:00:00Z')) ->> 'status' AS status;
CALL okno_wait(600000, NULL, 'journal');
CALL okno_wait(0);
-- copied and delivered: nothing for it; the default subscriber's is still due
SELECT kind FROM okno_drain(10, 'journal');
CALL okno_wait(0, NULL, 'journal');
CALL okno_wait(0, NULL, 'default');
-- a failure delays it (not due), a requeue makes it due
SELECT attempts FROM okno_record_failure((SELECT id FROM outbox WHERE payload ->> 'booking_id' = '2'), 'down', 'journal');
CALL okno_wait(0, NULL, 'journal');
SELECT okno_requeue((SELECT id FROM outbox WHERE payload ->> 'booking_id' = '2'), 'journal') AS requeued;
CALL okno_wait(0, NULL, 'journal');
-- handed out (the drain's transaction committed): not due; released: due
SELECT kind FROM okno_drain(10, 'journal');
CALL okno_wait(0, NULL, 'journal');
SELECT okno_release((SELECT id FROM outbox WHERE payload ->> 'booking_id' = '2'), 'journal') AS released;
CALL okno_wait(0, NULL, 'journal');
-- its relay's privileges: SELECT on its state and outbox.created_xid
GRANT SELECT (xmax) ON outbox TO regress_okno_wait_relay;
\set SHOW_CONTEXT never
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0, NULL, 'journal');
RESET ROLE;
GRANT SELECT ON okno_subscriber, okno_delivery TO regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0, NULL, 'journal');
RESET ROLE;
GRANT SELECT (created_xid) ON outbox TO regress_okno_wait_relay;
SET ROLE regress_okno_wait_relay;
CALL okno_wait(0, NULL, 'journal');
RESET ROLE;
\set SHOW_CONTEXT errors
SELECT count(*) AS okno_wait_locks FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 4
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
DROP OWNED BY regress_okno_wait_relay;
DROP ROLE regress_okno_wait_relay;
DROP ROLE regress_okno_wait_nobody;
\c :test_db
DROP DATABASE regress_okno_wait;
