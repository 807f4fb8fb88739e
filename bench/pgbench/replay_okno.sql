-- a retry of one of the nkeys requests stored before the run
\set i random(1, :nkeys)
SELECT okno_create_booking(1, 'rp.' || :i, bench.payload(90, :i));
