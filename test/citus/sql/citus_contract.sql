-- okno's contract for bookings on the coordinator (test/citus/contract.psql),
-- on the layout citus_layout made; the rooms it books are added here
INSERT INTO resources (name) SELECT 'room ' || g FROM generate_series(3, 6) AS g;
\set tag c
\set room_a 3
\set room_b 4
\set day 01
\i test/citus/contract.psql
