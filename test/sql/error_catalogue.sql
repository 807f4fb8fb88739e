--
-- error_catalogue: okno_errors() lists every error okno raises, and
-- okno_create_booking_result tells a replay from a creation
--
SELECT * FROM okno_errors();

-- every domain error, raised for real, is in the catalogue with its code
CREATE TEMP TABLE raised (code text, result text);
INSERT INTO raised VALUES
  ('invalid_key', okno_test.err($$SELECT okno_create_booking(1, '', '{}')$$)),
  ('invalid_payload', okno_test.err($$SELECT okno_create_booking(1, 'e-1', '[]')$$)),
  ('resource_missing', okno_test.err($$SELECT okno_create_booking(1, 'e-2', okno_test.payload(999, '2028-01-01T10:00:00Z', '2028-01-01T11:00:00Z'))$$)),
  ('actor_missing', okno_test.err($$SELECT okno_create_booking(999, 'e-3', okno_test.payload(1, '2028-01-01T10:00:00Z', '2028-01-01T11:00:00Z'))$$)),
  ('booking_missing', okno_test.err('SELECT okno_get_booking(1, -1)')),
  ('event_missing', okno_test.err($$SELECT okno_record_failure('00000000-0000-7000-8000-000000000000', 'x')$$));
SELECT okno_create_booking(1, 'e-4', okno_test.payload(1, '2028-01-01T10:00:00Z', '2028-01-01T11:00:00Z')) IS NOT NULL AS created;
INSERT INTO raised VALUES
  ('key_reused', okno_test.err($$SELECT okno_create_booking(1, 'e-4', okno_test.payload(2, '2028-01-01T10:00:00Z', '2028-01-01T11:00:00Z'))$$)),
  ('slot_busy', okno_test.err($$SELECT okno_create_booking(1, 'e-5', okno_test.payload(1, '2028-01-01T10:00:00Z', '2028-01-01T11:00:00Z'))$$));
-- tables_unfit: a column okno needs renamed away (rolled back)
BEGIN;
ALTER TABLE outbox RENAME COLUMN parked_at TO parked;
SELECT okno_test.err('SELECT * FROM okno_drain(1)') AS unfit \gset
ROLLBACK;
INSERT INTO raised VALUES ('tables_unfit', :'unfit');
-- key_expired: the key's tombstone (okno_purge leaves one; made here)
BEGIN;
INSERT INTO okno_key_tombstone VALUES (sha256(convert_to(':e-10:1', 'UTF8')), now());
SELECT okno_test.err($$SELECT okno_create_booking(1, 'e-10', okno_test.payload(1, '2028-01-05T10:00:00Z', '2028-01-05T11:00:00Z'))$$) AS expired \gset
ROLLBACK;
INSERT INTO raised VALUES ('key_expired', :'expired');
-- request_in_progress: a claim this transaction has not stored (another
-- transaction holding the key with okno.key_wait off: the isolation test
-- idempotent_same_key)
BEGIN;
SELECT okno_key_claim('catalogue', 's', 'e-11', '{}') IS NULL AS claimed;
SELECT okno_test.err($$SELECT okno_key_claim('catalogue', 's', 'e-11', '{}')$$) AS in_progress \gset
ROLLBACK;
INSERT INTO raised VALUES ('request_in_progress', :'in_progress');
SELECT r.code, left(r.result, 5) AS raised_sqlstate, e.sqlstate AS catalogue_sqlstate, e.http_status,
       substr(r.result, 7) LIKE '%' || split_part(e.message, ' ', 1) || '%' AS message_matches
  FROM raised r LEFT JOIN okno_errors() e ON e.code = r.code ORDER BY e.sqlstate;
-- and the catalogue has nothing that was not raised above, except 40001
SELECT code FROM okno_errors() WHERE code NOT IN (SELECT code FROM raised);

-- okno_create_booking_result: the card, and whether it was a replay
SELECT replayed, card - 'id' AS card
  FROM okno_create_booking_result(1, 'e-6', okno_test.payload(1, '2028-01-02T10:00:00+01:00', '2028-01-02T11:00:00+01:00'));
SELECT replayed, card = okno_create_booking(1, 'e-6', okno_test.payload(1, '2028-01-02T09:00:00Z', '2028-01-02T10:00:00Z')) AS same_card
  FROM okno_create_booking_result(1, 'e-6', okno_test.payload(1, '2028-01-02T09:00:00Z', '2028-01-02T10:00:00Z'));
-- call it in FROM: (f(...)).* calls f once per column (PostgreSQL expands
-- it so), and the second call replays what the first created
BEGIN;
SELECT replayed FROM okno_create_booking_result(1, 'e-8', okno_test.payload(3, '2028-01-03T09:00:00Z', '2028-01-03T10:00:00Z'));
SELECT (okno_create_booking_result(1, 'e-9', okno_test.payload(3, '2028-01-04T09:00:00Z', '2028-01-04T10:00:00Z'))).replayed AS replayed_by_star;
ROLLBACK;
BEGIN;
SELECT card ->> 'status' AS status, replayed
  FROM (SELECT (okno_create_booking_result(1, 'e-9', okno_test.payload(3, '2028-01-04T09:00:00Z', '2028-01-04T10:00:00Z'))).*) AS r;
ROLLBACK;
-- its errors are okno_create_booking's
SELECT okno_test.err($$SELECT * FROM okno_create_booking_result(1, 'e-6', okno_test.payload(2, '2028-01-02T09:00:00Z', '2028-01-02T10:00:00Z'))$$);
SELECT okno_test.err($$SELECT * FROM okno_create_booking_result(NULL, NULL, NULL)$$);
SELECT okno_test.err($$SELECT * FROM okno_create_booking_result(1, 'e-7', okno_test.payload(1, '2028-01-02T09:30:00Z', '2028-01-02T10:30:00Z'))$$);
BEGIN READ ONLY;
SELECT * FROM okno_create_booking_result(1, 'e-6', okno_test.payload(1, '2028-01-02T09:00:00Z', '2028-01-02T10:00:00Z'));
ROLLBACK;
SELECT count(*) AS events_for_e6 FROM outbox WHERE payload = jsonb_build_object('booking_id', (SELECT (response_body ->> 'id')::bigint FROM idempotency WHERE request_key = 'e-6'));
