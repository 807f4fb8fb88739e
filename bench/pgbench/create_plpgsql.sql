-- the PL/pgSQL baseline, same keys and slots as create_okno.sql
\set seq :seq + 1
\set slot :run * 1000000 + :seq
SELECT plp.create_booking(1, 'c' || :slot || '.' || :client_id, bench.payload(100 + :client_id, :slot));
