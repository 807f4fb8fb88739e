--
-- prepared: okno in a transaction prepared for two-phase commit.  With
-- okno.notify on, a create queues a NOTIFY, and PostgreSQL refuses to
-- prepare a transaction that did (0A000); with it off (the default) a
-- create and a recorded failure can be prepared and committed later.
-- (The test clusters run with max_prepared_transactions = 4.)
--
SET okno.notify = on;
BEGIN;
SELECT okno_create_booking(1, 'prepared-1', okno_test.payload(3, '2035-01-01T10:00:00Z', '2035-01-01T11:00:00Z')) ->> 'status' AS status;
PREPARE TRANSACTION 'okno_notify_on';
SELECT count(*) AS stored FROM idempotency WHERE request_key = 'prepared-1';
SET okno.notify = off;
BEGIN;
SELECT okno_create_booking(1, 'prepared-1', okno_test.payload(3, '2035-01-01T10:00:00Z', '2035-01-01T11:00:00Z')) ->> 'status' AS status;
PREPARE TRANSACTION 'okno_notify_off';
SELECT count(*) AS stored_before_commit FROM idempotency WHERE request_key = 'prepared-1';
COMMIT PREPARED 'okno_notify_off';
SELECT count(*) AS stored FROM idempotency WHERE request_key = 'prepared-1';
-- a recorded failure, prepared
BEGIN;
SELECT kind, (okno_record_failure(id, 'prepared')).attempts
  FROM outbox WHERE payload ->> 'booking_id' =
       (SELECT response_body ->> 'id' FROM idempotency WHERE request_key = 'prepared-1');
PREPARE TRANSACTION 'okno_failure';
COMMIT PREPARED 'okno_failure';
SELECT attempts, last_error, delivered_at IS NULL AS pending
  FROM outbox WHERE payload ->> 'booking_id' =
       (SELECT response_body ->> 'id' FROM idempotency WHERE request_key = 'prepared-1');
-- and a create right after, in a new transaction
SELECT okno_create_booking(1, 'prepared-2', okno_test.payload(3, '2035-01-02T10:00:00Z', '2035-01-02T11:00:00Z')) ->> 'status' AS status;
SELECT * FROM okno_verify();
RESET okno.notify;
