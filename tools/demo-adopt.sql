-- make demo-adopt: okno in a database the course built and filled, on a
-- throwaway cluster: the tables stay the course's
\set ON_ERROR_STOP 0
\pset footer off
\pset null '(null)'
\set SHOW_CONTEXT never

\echo
\echo '== 1. The course''s database: its migrations, run by its role (the database owner, not a superuser)'
CREATE ROLE course LOGIN;
CREATE DATABASE course OWNER course;
\c course course
SET client_min_messages = warning;
\i test/course/migrations/001_actors_resources.sql
\i test/course/migrations/002_bookings.sql
\i test/course/migrations/003_idempotency.sql
\i test/course/migrations/005_outbox.sql
RESET client_min_messages;
\dt

\echo
\echo '== 2. What the course''s service wrote: a booking from before keys, one under'
\echo '   Idempotency-Key november-room-1 (its fingerprint in the course''s form,'
\echo '   pydantic 2: the instants at the offset the client sent), and its pending event'
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('november room');
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2026-11-01T10:00:00Z', '2026-11-01T11:00:00Z');
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (1, 1, '2026-12-01T07:00:00Z', '2026-12-01T08:00:00Z');
INSERT INTO idempotency VALUES (1, 'november-room-1',
    'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a',
    '{"id": 2, "resource_id": 1, "actor_id": 1, "starts_at": "2026-12-01T10:00:00+03:00", "ends_at": "2026-12-01T11:00:00+03:00", "status": "confirmed"}');
INSERT INTO outbox VALUES ('5f0c2c61-8e06-4d5c-9a55-2f0a6d1b4c11', 'booking_created', '{"booking_id": 2}', NULL);

\set ECHO queries
\echo
\echo '== 3. CREATE EXTENSION okno, by the database owner: none of the course''s tables changes,'
\echo '   and okno says what it needs of them'
CREATE EXTENSION okno CASCADE;
SELECT okno_create_booking(1, 'november-room-1',
  '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');
\echo '   SQLSTATE' :LAST_ERROR_SQLSTATE

\echo
\echo '== 4. okno_prepare_tables(), by the owner: okno''s columns (no table rewritten) and indexes'
SELECT * FROM okno_prepare_tables();
\dt

\echo
\echo '== 5. The client retries november-room-1 through okno: the card the course stored, exactly'
SELECT okno_create_booking(1, 'november-room-1',
  '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');

\echo
\echo '== 6. The course''s next migration, by the owner, with okno in use; a new request is okno''s,'
\echo '   and the ids go on after the course''s'
ALTER TABLE bookings ADD COLUMN note text DEFAULT 'lesson 15';
SELECT okno_create_booking(1, 'november-room-2',
  '{"resource_id":1,"starts_at":"2026-12-01T11:00:00+03:00","ends_at":"2026-12-01T12:00:00+03:00"}');
SELECT id, status, note FROM bookings ORDER BY id;

\echo
\echo '== 7. The course''s pending event and okno''s are delivered alike'
SELECT event_id, kind, payload FROM okno_drain(10);

\echo
\echo '== 8. okno_verify: what the course wrote before okno served the tables is no problem'
SELECT * FROM okno_verify();

\echo
\echo '== 9. DROP EXTENSION okno leaves the course''s tables as they are, the owner''s'
DROP EXTENSION okno;
SELECT count(*) AS bookings FROM bookings;
\dt
