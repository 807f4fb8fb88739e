-- reference: one PgQ event per transaction (pgq.insert_event), nothing else
\set seq :seq + 1
SELECT pgq.insert_event('bq_ins', 'booking_created', '{"booking_id": ' || :seq || '}');
