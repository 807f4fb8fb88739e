-- make demo: the course's scenario, step by step, on a throwaway cluster
\set ON_ERROR_STOP 0
\pset footer off
\pset null '(null)'
\set SHOW_CONTEXT never

\echo
\echo '== 1. CREATE EXTENSION okno CASCADE: okno''s functions; then okno_create_tables(), as the'
\echo '   application''s role: the booking lab''s tables, the application''s own'
CREATE EXTENSION okno CASCADE;
\dx okno
SELECT * FROM okno_create_tables();
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('november room');

\set ECHO queries
\echo
\echo '== 2. The first request with Idempotency-Key november-room-1 books the room (201, id N)'
SELECT okno_create_booking(1, 'november-room-1',
  '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');

\echo
\echo '== 3. The response was lost; the client retries with the same key: the same card (201, id N), nothing new'
SELECT okno_create_booking(1, 'november-room-1',
  '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}');

\echo
\echo '== 4. The same key with other data: key_reused (409)'
SELECT okno_create_booking(1, 'november-room-1',
  '{"resource_id":1,"starts_at":"2026-12-01T12:00:00+03:00","ends_at":"2026-12-01T13:00:00+03:00"}');
\echo '   SQLSTATE' :LAST_ERROR_SQLSTATE

\echo
\echo '== 5. A new key for the same slot: slot_busy (409)'
SELECT okno_create_booking(1, 'november-room-2',
  '{"resource_id":1,"starts_at":"2026-12-01T10:30:00+03:00","ends_at":"2026-12-01T11:30:00+03:00"}');
\echo '   SQLSTATE' :LAST_ERROR_SQLSTATE

\echo
\echo '== 6. An invalid key and an invalid payload: invalid_key, invalid_payload (422)'
SELECT okno_create_booking(1, 'no spaces please', '{}');
\echo '   SQLSTATE' :LAST_ERROR_SQLSTATE
SELECT okno_create_booking(1, 'november-room-3',
  '{"resource_id":1,"starts_at":"2026-12-01 10:00","ends_at":"2026-12-01T11:00:00+03:00"}');
\echo '   SQLSTATE' :LAST_ERROR_SQLSTATE

\echo
\echo '== 7. Exactly one outbox event was written with the booking'
SELECT id, kind, payload, delivered_at FROM outbox;

\echo
\echo '== 8. The drain hands it out and marks it delivered, then there is nothing left'
SELECT * FROM okno_drain_once();
SELECT * FROM okno_drain_once();
SELECT kind, delivered_at IS NOT NULL AS delivered FROM outbox;

\echo
\echo '== 9. The fingerprint behind step 3: the canonical form, independent of offsets and key order'
SELECT okno_canonical('{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}') AS canonical,
       okno_fingerprint('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') AS fingerprint;
