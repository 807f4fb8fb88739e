-- okno's contract for bookings on a worker (test/citus/contract.psql):
-- Citus runs a query from any node, and okno must too
\set tag w
\set room_a 5
\set room_b 3
\set day 02
\i test/citus/contract.psql

-- a key the coordinator stored, retried here: its stored card
SELECT (okno_create_booking_result(1, 'c-1',
        '{"resource_id":3,"starts_at":"2030-02-01T10:00:00Z","ends_at":"2030-02-01T11:00:00Z"}')).replayed;
