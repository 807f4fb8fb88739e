-- PgQ batch consumption: one batch (1000 events, one tick apart) per transaction
BEGIN;
SELECT pgq.next_batch('bq', 'c1') AS batch \gset
SELECT * FROM pgq.get_batch_events(:batch);
SELECT pgq.finish_batch(:batch);
COMMIT;
