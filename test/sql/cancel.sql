--
-- cancel: okno_get_booking and okno_cancel_booking, scoped to the actor
--
SELECT okno_create_booking(1, 'x-1', okno_test.payload(1, '2027-05-01T10:00:00+02:00', '2027-05-01T11:00:00+02:00')) AS card \gset
SELECT (:'card'::jsonb ->> 'id')::bigint AS id \gset
SELECT count(*) AS events_before FROM outbox \gset

-- the current card, same shape as the creation response
SELECT okno_get_booking(1, :id) = :'card'::jsonb AS same_as_created;
-- another actor's booking, an unknown booking, NULLs: booking_missing (OKB07)
SELECT regexp_replace(okno_test.err(format('SELECT okno_get_booking(2, %s)', :id)), 'booking \d+', 'booking N') AS err;
SELECT okno_test.err('SELECT okno_get_booking(1, 999999)');
SELECT okno_test.err(format('SELECT okno_get_booking(NULL, %s)', :id));
SELECT okno_test.err('SELECT okno_get_booking(1, NULL)');
SELECT regexp_replace(okno_test.err(format('SELECT okno_cancel_booking(2, %s)', :id)), 'booking \d+', 'booking N') AS err;
SELECT okno_test.err('SELECT okno_cancel_booking(1, 999999)');
SELECT okno_test.err('SELECT okno_cancel_booking(NULL, NULL)');
SELECT status FROM bookings WHERE id = :id;

-- cancel: the card with the new status, one booking_cancelled event
SELECT okno_cancel_booking(1, :id) - 'id' AS cancelled;
SELECT kind, payload = jsonb_build_object('booking_id', :id) AS payload_ok
  FROM outbox ORDER BY id DESC LIMIT 1;
-- cancelling again returns the card and writes nothing
SELECT okno_cancel_booking(1, :id) ->> 'status' AS status;
SELECT count(*) - :events_before AS new_events FROM outbox;
SELECT okno_get_booking(1, :id) ->> 'status' AS current_status;

-- the slot is free at once
SELECT okno_create_booking(2, 'x-2', okno_test.payload(1, '2027-05-01T08:30:00Z', '2027-05-01T09:30:00Z')) ->> 'starts_at' AS rebooked;
-- and a replay of the original request still returns the confirmed snapshot
SELECT okno_create_booking(1, 'x-1', okno_test.payload(1, '2027-05-01T10:00:00+02:00', '2027-05-01T11:00:00+02:00')) = :'card'::jsonb AS original_snapshot;

-- reading works in a read-only transaction; cancelling does not
BEGIN READ ONLY;
SELECT okno_get_booking(1, :id) ->> 'status' AS read_only_get;
ROLLBACK;
BEGIN READ ONLY;
SELECT okno_cancel_booking(1, :id);
ROLLBACK;

-- a cancel whose transaction rolls back leaves the booking and the outbox as they were
SELECT (okno_create_booking(1, 'x-3', okno_test.payload(1, '2027-05-02T10:00:00Z', '2027-05-02T11:00:00Z')) ->> 'id')::bigint AS id3 \gset
SELECT count(*) AS events_before FROM outbox \gset
BEGIN;
SELECT okno_cancel_booking(1, :id3) ->> 'status' AS status;
ROLLBACK;
SELECT status, (SELECT count(*) - :events_before FROM outbox) AS new_events FROM bookings WHERE id = :id3;
