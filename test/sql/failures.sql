--
-- failures: okno_record_failure (backoff, parking), okno_release,
-- okno_requeue and the settings behind them
--
-- okno's settings are known to PostgreSQL once okno's library is loaded.
-- Before that (a new session that has not called okno yet) SET accepts any
-- value as a placeholder; loading the library then replaces an invalid one
-- by the default, with a WARNING.
SET okno.max_attempts = 5000;
SELECT okno_canonical(okno_test.payload(1, '2027-01-01T00:00:00Z', '2027-01-01T01:00:00Z')) IS NOT NULL AS loaded;
SHOW okno.max_attempts;
-- once loaded: the defaults and bounds, and an out-of-range SET is an error
SELECT name, setting, unit, min_val, max_val, context FROM pg_settings WHERE name LIKE 'okno.%' ORDER BY 1;
SET okno.max_attempts = 0;
SET okno.max_attempts = 1001;
-- (PostgreSQL 17 words the range of a parameter with a unit differently:
-- only the SQLSTATE is shown)
\set VERBOSITY sqlstate
SET okno.retry_base = 0;
SET okno.retry_cap = '0';
SET okno.retry_base = '25h';
\set VERBOSITY default
SET okno.no_such_setting = 1;
SET okno.max_attempts = 1000;
SET okno.retry_base = '250ms';
SHOW okno.retry_base;
RESET okno.max_attempts;
RESET okno.retry_base;

DO $$ BEGIN WHILE EXISTS (SELECT FROM okno_drain(10000)) LOOP END LOOP; END $$;
SELECT count(okno_create_booking(2, 'f-' || i, okno_test.payload(3, format('2027-04-01T%s:00:00Z', lpad(i::text, 2, '0')), format('2027-04-01T%s:30:00Z', lpad(i::text, 2, '0'))))) AS created
  FROM generate_series(1, 3) AS i;
CREATE TEMP TABLE ev AS
  SELECT row_number() OVER (ORDER BY o.id) AS n, o.id
    FROM outbox o JOIN idempotency i ON o.payload = jsonb_build_object('booking_id', (i.response_body ->> 'id')::bigint)
   WHERE i.request_key LIKE 'f-%';
SELECT count(*) FROM ev;

-- errors: unknown event (OKB08), NULL arguments (22004)
SELECT okno_test.err($$SELECT okno_record_failure('00000000-0000-7000-8000-000000000000', 'x')$$);
SELECT okno_test.err($$SELECT okno_record_failure(NULL, 'x')$$);
SELECT okno_test.err(format('SELECT okno_record_failure(%L, NULL)', (SELECT id FROM ev WHERE n = 1)));

-- the relay's pattern: drain a batch, one delivery fails, commit: the
-- failed event is pending again with a backoff, the others are delivered
SET okno.retry_base = '10s';
SET okno.retry_cap = '1h';
BEGIN;
SELECT count(*) AS drained FROM okno_drain(10);
SELECT attempts, last_error, delivered_at IS NULL AS pending, parked_at IS NULL AS not_parked,
       available_at - clock_timestamp() BETWEEN interval '4.9 s' AND interval '10 s' AS backoff_in_d2_to_d
  FROM okno_record_failure((SELECT id FROM ev WHERE n = 2), 'exit status 1');
COMMIT;
SELECT e.n, o.delivered_at IS NOT NULL AS delivered, o.attempts, o.last_error FROM ev e JOIN outbox o USING (id) ORDER BY e.n;
-- it is not handed out before its time
SELECT count(*) AS due FROM okno_drain(10);

-- the delay doubles with each attempt, up to the cap; jitter keeps it in [d/2, d]
SET okno.retry_base = '1s';
SET okno.retry_cap = '8s';
CREATE TEMP TABLE delays (attempt int, d interval);
DO $$
DECLARE r record;
BEGIN
  FOR i IN 1..6 LOOP
    SELECT * INTO r FROM okno_record_failure((SELECT id FROM ev WHERE n = 3), 'attempt ' || i);
    INSERT INTO delays VALUES (r.attempts, r.available_at - clock_timestamp());
  END LOOP;
END $$;
SELECT attempt,
       d BETWEEN interval '1 s' * least(8, 2 ^ (attempt - 1)) / 2 - interval '50 ms'
             AND interval '1 s' * least(8, 2 ^ (attempt - 1)) AS within_bounds
  FROM delays ORDER BY attempt;
SELECT attempts, last_error FROM outbox WHERE id = (SELECT id FROM ev WHERE n = 3);

-- okno.max_attempts parks the event: no available_at, parked_at set, never drained
SET okno.max_attempts = 8;
SELECT attempts, parked_at IS NOT NULL AS parked, available_at IS NULL AS no_available_at
  FROM okno_record_failure((SELECT id FROM ev WHERE n = 3), 'attempt 7');
SELECT attempts, parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM ev WHERE n = 3), 'attempt 8');
SELECT parked_at AS first_parked_at FROM outbox WHERE id = (SELECT id FROM ev WHERE n = 3) \gset
-- a failure recorded for a parked event counts, and it stays parked as it was
SELECT attempts, parked_at = :'first_parked_at' AS same_parked_at, last_error
  FROM okno_record_failure((SELECT id FROM ev WHERE n = 3), 'late report');
UPDATE outbox SET available_at = NULL WHERE id = (SELECT id FROM ev WHERE n = 2);
SELECT count(*) AS drained, bool_and(event_id <> (SELECT id FROM ev WHERE n = 3)) AS not_the_parked_one FROM okno_drain(100);

-- okno_requeue: unknown or delivered -> false; parked -> available now, attempts reset
SELECT okno_requeue('00000000-0000-7000-8000-000000000000') AS unknown,
       okno_requeue((SELECT id FROM ev WHERE n = 1)) AS delivered;
SELECT okno_test.err('SELECT okno_requeue(NULL)');
SELECT okno_requeue((SELECT id FROM ev WHERE n = 3)) AS requeued;
SELECT attempts, parked_at IS NULL AS unparked, available_at IS NULL AS available, last_error AS kept_last_error
  FROM outbox WHERE id = (SELECT id FROM ev WHERE n = 3);
SELECT attempts AS handed_out_with_attempts FROM okno_drain(100);

-- a failure of a delivered event makes it pending again (later transaction)
SELECT attempts, delivered_at IS NULL AS pending_again FROM okno_record_failure((SELECT id FROM ev WHERE n = 1), 'recipient lost it');

-- okno_release: hands a drained event back without counting an attempt
UPDATE outbox SET available_at = NULL WHERE id = (SELECT id FROM ev WHERE n = 1);
BEGIN;
SELECT count(*) AS drained FROM okno_drain(100);
SELECT okno_release((SELECT id FROM ev WHERE n = 1)) AS released;
SELECT okno_release((SELECT id FROM ev WHERE n = 1)) AS released_twice;
SELECT okno_release('00000000-0000-7000-8000-000000000000') AS unknown;
COMMIT;
SELECT attempts, delivered_at IS NULL AS pending FROM outbox WHERE id = (SELECT id FROM ev WHERE n = 1);
SELECT count(*) AS handed_out_again FROM okno_drain(100);
SELECT okno_test.err('SELECT okno_release(NULL)');

-- the error text is kept up to 2000 bytes, cut at a character boundary
SELECT octet_length(last_error) AS bytes, length(last_error) AS chars, right(last_error, 1) AS last_char
  FROM okno_record_failure((SELECT id FROM ev WHERE n = 1), 'x' || repeat('я', 1500));
SELECT octet_length(last_error) AS bytes FROM okno_record_failure((SELECT id FROM ev WHERE n = 1), repeat('e', 5000));
SELECT last_error FROM okno_record_failure((SELECT id FROM ev WHERE n = 1), '');

-- refused in read-only transactions
BEGIN READ ONLY;
SELECT okno_record_failure((SELECT id FROM ev WHERE n = 1), 'x');
ROLLBACK;
BEGIN READ ONLY;
SELECT * FROM okno_drain(1);
ROLLBACK;
BEGIN READ ONLY;
SELECT okno_requeue((SELECT id FROM ev WHERE n = 1));
ROLLBACK;
RESET ALL;

-- the returned row has outbox's row type as stored, also after a column
-- of outbox was dropped (it returned the live columns only before 0.5.0,
-- which the row type's dropped attribute did not match)
BEGIN;
ALTER TABLE outbox ADD COLUMN scratch integer;
ALTER TABLE outbox DROP COLUMN scratch;
SELECT attempts > 0 AS counted, last_error FROM okno_record_failure((SELECT id FROM ev WHERE n = 1), 'after a dropped column');
SELECT (okno_record_failure((SELECT id FROM ev WHERE n = 1), 'as a whole row')).last_error;
ROLLBACK;
