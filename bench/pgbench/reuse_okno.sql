-- a stored key with another slot: key_reused, caught in bench.reuse_okno
\set i random(1, :nkeys)
SELECT bench.reuse_okno(1, 'rp.' || :i, bench.payload(90, :i + 1));
