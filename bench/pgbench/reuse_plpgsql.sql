\set i random(1, :nkeys)
SELECT bench.reuse_plpgsql(1, 'rp.' || :i, bench.payload(90, :i + 1));
