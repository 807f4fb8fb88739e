\set i random(1, :nkeys)
SELECT plp.create_booking(1, 'rp.' || :i, bench.payload(90, :i));
