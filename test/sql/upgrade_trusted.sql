--
-- upgrade_trusted: an install of 0.4.0 by a database owner who is not a
-- superuser (0.4.0 was installable then, and trusted), used as 0.4.0
-- allowed, and updated by that owner.  Runs where the older versions can
-- be installed (tools/run's history cluster: REGRESS_HISTORY); that no
-- such version can be installed now is trusted's.
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
CREATE ROLE regress_okno_owner LOGIN NOSUPERUSER;
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
-- (okno serves the tables before their owner prepares them for 0.7.0,
-- and after)
\c regress_okno_trusted_old :superuser_name
SELECT count(*) AS drained FROM okno_drain(10);
\c regress_okno_trusted_old regress_okno_owner
SELECT * FROM okno_prepare_tables();
SELECT okno_create_booking(1, 'old-2', '{"resource_id":1,"starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}') ->> 'id' AS id;
\c regress_okno_trusted_old :superuser_name
SELECT count(*) AS drained FROM okno_drain(10);
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_okno_owner';

\c :test_db :superuser_name
DROP DATABASE regress_okno_trusted_old;
DROP ROLE regress_okno_owner;
