-- a new key and a new slot each time: resource 100 + client, slot run*10^6 + seq
\set seq :seq + 1
\set slot :run * 1000000 + :seq
SELECT okno_create_booking(1, 'c' || :slot || '.' || :client_id, bench.payload(100 + :client_id, :slot));
