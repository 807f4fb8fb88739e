--
-- status: the okno_outbox_status view
--
-- start with nothing pending or parked
UPDATE outbox SET delivered_at = now(), parked_at = NULL WHERE delivered_at IS NULL;
SELECT pending, due_now, delayed, parked, oldest_pending_age, oldest_due_age FROM okno_outbox_status;

INSERT INTO outbox (id, kind, payload, created_at) VALUES
  (gen_random_uuid(), 'due', '{}', now() - interval '10 minutes'),
  (gen_random_uuid(), 'due', '{}', now() - interval '5 minutes');
INSERT INTO outbox (id, kind, payload, created_at, attempts, last_error, available_at) VALUES
  (gen_random_uuid(), 'retry-due', '{}', now() - interval '20 minutes', 1, 'x', now() - interval '1 minute'),
  (gen_random_uuid(), 'delayed', '{}', now() - interval '30 minutes', 2, 'x', now() + interval '1 hour');
INSERT INTO outbox (id, kind, payload, created_at, attempts, last_error, parked_at) VALUES
  (gen_random_uuid(), 'parked', '{}', now() - interval '1 day', 10, 'x', now() - interval '1 hour');
SELECT pending, due_now, delayed, parked,
       oldest_pending_age BETWEEN interval '30 min' AND interval '31 min' AS oldest_pending_30_min,
       oldest_due_age BETWEEN interval '10 min' AND interval '11 min' AS oldest_due_10_min
  FROM okno_outbox_status;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'okno_outbox_status'::regclass AND attnum > 0 ORDER BY attnum;

-- "delivered" comes from the statistics' live-row count (exact pending and
-- parked counts subtracted): it follows the table once this session's
-- statistics are flushed (autovacuum, which counts the table itself and
-- may not yet see the insert, is kept off it meanwhile)
ALTER TABLE outbox SET (autovacuum_enabled = off);
SELECT pg_stat_force_next_flush();
SELECT delivered AS delivered_before FROM okno_outbox_status \gset
INSERT INTO outbox (id, kind, payload, delivered_at)
  SELECT gen_random_uuid(), 'filler', '{}', now() FROM generate_series(1, 50000);
SELECT pg_stat_force_next_flush();
SELECT delivered - :delivered_before AS delivered_added FROM okno_outbox_status;

ALTER TABLE outbox RESET (autovacuum_enabled);

-- with many delivered rows the view never reads them: every count comes
-- from the partial indexes
VACUUM ANALYZE outbox;
SELECT pg_stat_force_next_flush();
-- (the plan's shape — bitmap or plain index scan — depends on statistics;
-- what matters is which indexes it reads and that it never reads the table
-- sequentially.  The view's query runs inside okno_outbox_counts(), so the
-- scans are counted, in this transaction, rather than explained.)
-- (the pending events are read through outbox_pending or outbox_order_key,
-- both partial indexes of undelivered events, whichever the statistics
-- favour; a held-back check reads outbox_order_key)
BEGIN;
SELECT pending, parked FROM okno_outbox_status;
SELECT pg_stat_get_xact_numscans('outbox_pending'::regclass)
       + pg_stat_get_xact_numscans('outbox_order_key'::regclass) > 0 AS reads_pending_index,
       pg_stat_get_xact_numscans('outbox_parked'::regclass) > 0 AS reads_parked_index,
       pg_stat_get_xact_numscans('outbox'::regclass) = 0 AS no_seq_scan;
SELECT seq_scan AS outbox_seq_scans FROM pg_stat_xact_user_tables WHERE relid = 'outbox'::regclass;
ROLLBACK;

DELETE FROM outbox WHERE kind IN ('filler', 'due', 'retry-due', 'delayed', 'parked');
