--
-- subscribers: okno_subscribe and okno_unsubscribe; each subscriber's own
-- delivery state (drain, failures, release, requeue, parking, the
-- dead-letter tools), order per booking per subscriber, purge, status and
-- verify over subscribers.  Copies follow commits, so this test commits
-- (no enclosing transaction); it removes what it made at the end.
-- (Concurrent drains: subscriber_*.spec.)
--
-- events other tests left pending are set aside
UPDATE outbox SET delivered_at = clock_timestamp(), parked_at = NULL WHERE delivered_at IS NULL;
INSERT INTO actors (name) VALUES ('subscriber actor') RETURNING id AS a \gset
INSERT INTO resources (name) VALUES ('subscriber room') RETURNING id AS r \gset
CREATE TEMP TABLE b (i int PRIMARY KEY, id bigint);
-- book day i of February 2032
CREATE FUNCTION pg_temp.book(i int) RETURNS bigint LANGUAGE sql AS $$
    INSERT INTO b
    SELECT i, (okno_create_booking((SELECT id FROM actors WHERE name = 'subscriber actor'), 'sub-' || i,
                 okno_test.payload((SELECT id FROM resources WHERE name = 'subscriber room'),
                                   format('2032-02-%sT10:00:00Z', lpad(i::text, 2, '0')),
                                   format('2032-02-%sT11:00:00Z', lpad(i::text, 2, '0')))) ->> 'id')::bigint
    RETURNING id
$$;
CREATE FUNCTION pg_temp.cancel(i int) RETURNS text LANGUAGE sql AS $$
    SELECT okno_cancel_booking((SELECT id FROM actors WHERE name = 'subscriber actor'),
                               (SELECT id FROM b WHERE b.i = cancel.i)) ->> 'status'
$$;
-- the name of an event: its kind and which of this test's bookings
CREATE FUNCTION pg_temp.ev(kind text, payload jsonb) RETURNS text LANGUAGE sql AS $$
    SELECT kind || ' b' || coalesce((SELECT b.i::text FROM b WHERE b.id = (payload ->> 'booking_id')::bigint), '?')
$$;
CREATE FUNCTION pg_temp.id(kind text, i int) RETURNS uuid LANGUAGE sql AS $$
    SELECT o.id FROM outbox o JOIN b ON b.id = (o.payload ->> 'booking_id')::bigint
     WHERE o.kind = id.kind AND b.i = id.i
$$;

-- A subscriber's drain stores the snapshot it copied in; its xmin, the
-- oldest transaction then running anywhere in the cluster (another
-- database's, autovacuum's ANALYZE), bounds what the default drain forgets
-- (okno_subscriber_horizon); and okno_subscribe counts as the
-- subscriber's every event whose transaction began after the oldest
-- transaction open anywhere then (its since: any backend's, one without a
-- transaction id too, such as autovacuum's).  Before a subscription or a
-- copy whose horizon this test looks at: wait, 60 s at most, until no
-- transaction older than this test's newest event runs, by either
-- measure (the activity's snapshot cleared each time: it is kept for the
-- transaction otherwise).
CREATE FUNCTION pg_temp.settled() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    newest xid8 := (SELECT created_xid FROM outbox WHERE created_xid IS NOT NULL ORDER BY created_xid DESC LIMIT 1);
    newest_at timestamptz := (SELECT max(created_at) FROM outbox);
    deadline timestamptz := clock_timestamp() + interval '60 seconds';
BEGIN
    LOOP
        PERFORM pg_stat_clear_snapshot();
        EXIT WHEN (newest IS NULL OR pg_snapshot_xmin(pg_current_snapshot()) > newest)
              AND NOT EXISTS (SELECT FROM pg_stat_activity
                               WHERE pid <> pg_backend_pid() AND xact_start <= newest_at);
        IF clock_timestamp() > deadline THEN
            RETURN false;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN true;
END
$$;

-- names: the rule, the default subscriber, NULL
SELECT okno_test.err($$SELECT okno_subscribe('Journal')$$);
SELECT okno_test.err($$SELECT okno_subscribe('9lives')$$);
SELECT okno_test.err($$SELECT okno_subscribe('')$$);
SELECT okno_test.err(format('SELECT okno_subscribe(%L)', repeat('a', 64)));
SELECT okno_test.err($$SELECT okno_subscribe('a b')$$);
SELECT okno_test.err($$SELECT okno_subscribe(NULL)$$);
SELECT okno_test.err($$SELECT okno_unsubscribe(NULL)$$);
SELECT okno_test.err($$SELECT okno_unsubscribe('default')$$);
SELECT okno_subscribe('default') AS default_added, okno_unsubscribe('nobody') AS nobody_removed;
SELECT split_part(okno_test.err($$INSERT INTO okno_subscriber SELECT 'default', now(), now(), pg_current_snapshot(), 0, now()$$), ' | ', 1);

-- an event committed before the subscription is not the subscriber's
-- (once no transaction older than it runs anywhere: until then the
-- subscription's snapshot cannot tell that it committed before)
SELECT pg_temp.book(1) IS NOT NULL AS b1;
SELECT pg_temp.settled();
SELECT okno_subscribe('journal') AS journal, okno_subscribe(repeat('a', 63)) AS long_name,
       okno_subscribe('journal') AS again;
SELECT okno_unsubscribe(repeat('a', 63)) AS long_name_removed;
SELECT okno_subscribe('notify') AS notify;
SELECT name, since <= subscribed_at AS since_ok, copied_system = (SELECT system_identifier::bigint FROM pg_control_system()) AS this_cluster
  FROM okno_subscriber ORDER BY name;
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'journal');

-- every event committed after it is; each subscriber has its own state,
-- and the default subscriber's is the outbox's as before
SELECT pg_temp.book(2) IS NOT NULL AS b2, pg_temp.cancel(2), pg_temp.book(3) IS NOT NULL AS b3;
SELECT subscriber, pending, due_now, delayed, parked, held_back, not_copied FROM okno_subscribers;
-- a booking's later event waits for its earlier one, even in the batch
-- that copies both
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'journal');
SELECT subscriber, pending, due_now, held_back, not_copied FROM okno_subscribers;
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10) ORDER BY 1;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10) ORDER BY 1;
-- one at a time
SELECT pg_temp.ev(kind, payload) FROM okno_drain_once('notify');
SELECT pg_temp.ev(kind, payload) FROM okno_drain_once('notify');
SELECT pg_temp.ev(kind, payload) FROM okno_drain_once('notify');
SELECT pg_temp.ev(kind, payload) FROM okno_drain_once('notify');
-- an event handed out as it was copied leaves no row; the three that were
-- held back at their copy had one, deleted when it was delivered (it
-- never failed)
SELECT count(*) AS states, count(*) FILTER (WHERE delivered_at IS NULL) AS undelivered FROM okno_delivery;

-- failures are the subscriber's own: backoff, then parking; a parked
-- booking_created holds its booking back for that subscriber only
SET okno.max_attempts = 2;
SELECT pg_temp.book(4) IS NOT NULL AS b4, pg_temp.cancel(4);
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT subscriber, event_id = pg_temp.id('booking_created', 4) AS b4, delivered_at, attempts, last_error,
       available_at > clock_timestamp() AS later, parked_at
  FROM okno_record_failure(pg_temp.id('booking_created', 4), 'notify down', 'notify');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT subscriber, attempts, last_error, available_at, parked_at IS NOT NULL AS parked
  FROM okno_record_failure(pg_temp.id('booking_created', 4), 'notify still down', 'notify');
SELECT subscriber, pending, due_now, delayed, parked, held_back FROM okno_subscribers;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
-- the default subscriber's state is untouched
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10) ORDER BY 1;
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10);
-- requeue releases the booking in order
SELECT okno_requeue(pg_temp.id('booking_created', 4), 'journal') AS journal_has_none,
       okno_requeue(pg_temp.id('booking_created', 4), 'notify') AS requeued;
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'notify');
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'notify');
RESET okno.max_attempts;

-- release: handed back undelivered, no attempt counted
BEGIN;
SELECT pg_temp.book(5) IS NOT NULL AS b5;
-- this transaction's own events are copied after it commits
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
COMMIT;
BEGIN;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT okno_release(pg_temp.id('booking_created', 5), 'journal') AS released,
       okno_release(pg_temp.id('booking_created', 5), 'journal') AS again,
       okno_release(pg_temp.id('booking_created', 5), 'notify') AS not_copied;
SELECT regexp_replace(okno_test.err(format('SELECT okno_record_failure(%L, %L, %L)', pg_temp.id('booking_created', 5), 'x', 'notify')),
                      '[0-9a-f-]{36}', '<id>') AS not_copied;
COMMIT;
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'journal');
-- an event written and drained in one transaction: copied once, after
BEGIN;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.book(6) IS NOT NULL AS b6;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
COMMIT;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
-- a drain that rolls back hands the same events out again
BEGIN;
SELECT pg_temp.book(7) IS NOT NULL AS b7;
COMMIT;
BEGIN;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
ROLLBACK;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
-- an event delivered as it was copied, in a transaction that committed,
-- has no row; a later failure or release writes it
SELECT count(*) AS b7_rows FROM okno_delivery WHERE event_id = pg_temp.id('booking_created', 7);
SELECT subscriber, delivered_at, attempts, last_error, available_at IS NOT NULL AS retry_at, parked_at
  FROM okno_record_failure(pg_temp.id('booking_created', 7), 'journal down', 'journal');
SELECT okno_release(pg_temp.id('booking_created', 7), 'notify') AS released,
       okno_release(pg_temp.id('booking_created', 7), 'notify') AS again;
SELECT subscriber, delivered_at, attempts FROM okno_delivery
 WHERE event_id = pg_temp.id('booking_created', 7) ORDER BY subscriber;
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'notify');
UPDATE okno_delivery SET available_at = NULL WHERE event_id = pg_temp.id('booking_created', 7);
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'journal');
-- delivered: the row that never failed (notify's release) is gone, the
-- failed one stays, delivered, with its attempts and error
SELECT subscriber, delivered_at IS NOT NULL AS delivered, attempts, last_error FROM okno_delivery
 WHERE event_id = pg_temp.id('booking_created', 7) ORDER BY subscriber;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(100) ORDER BY 1;

-- the dead-letter tools per subscriber
SET okno.max_attempts = 1;
SELECT pg_temp.book(8) IS NOT NULL AS b8, pg_temp.book(9) IS NOT NULL AS b9;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure(pg_temp.id('booking_created', 8), 'http 500', 'journal');
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure(pg_temp.id('booking_created', 9), 'http 400', 'journal');
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure(pg_temp.id('booking_created', 8), 'http 500', 'notify');
RESET okno.max_attempts;
SELECT subscriber, parked FROM okno_subscribers;
SELECT okno_requeue_parked('journal', error_like => 'http 5%') AS journal_5xx;
SELECT okno_requeue_parked('default') AS default_none;
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'journal');
SELECT okno_discard(pg_temp.id('booking_created', 9), 'notify') AS not_parked_for_notify,
       okno_discard(pg_temp.id('booking_created', 9), 'journal') AS discarded;
SELECT subscriber, pg_temp.ev(kind, payload), attempts, last_error, discarded_by = current_user AS by_me
  FROM okno_discarded WHERE subscriber <> 'default' ORDER BY subscriber;
SELECT delivered_at IS NOT NULL AS done, parked_at FROM okno_delivery
 WHERE subscriber = 'journal' AND event_id = pg_temp.id('booking_created', 9);
SELECT okno_requeue_parked() AS everyone;
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'notify');
SELECT * FROM okno_verify();

-- unknown subscribers and bad arguments, every function
SELECT okno_test.err($$SELECT okno_drain(1, 'nobody')$$);
SELECT okno_test.err($$SELECT okno_drain(1, 'No')$$);
SELECT okno_test.err($$SELECT okno_drain(1, NULL)$$);
SELECT okno_test.err($$SELECT okno_drain(0, 'journal')$$);
SELECT okno_test.err($$SELECT okno_drain_once('nobody')$$);
SELECT okno_test.err($$SELECT okno_drain_once(NULL)$$);
SELECT okno_test.err(format('SELECT okno_record_failure(%L, %L, %L)', pg_temp.id('booking_created', 2), 'x', 'nobody'));
SELECT okno_test.err(format('SELECT okno_record_failure(%L, %L, NULL)', pg_temp.id('booking_created', 2), 'x'));
-- an event from before the subscription is not the subscriber's
SELECT regexp_replace(okno_test.err(format('SELECT okno_record_failure(%L, %L, %L)', pg_temp.id('booking_created', 1), 'x', 'journal')),
                      '[0-9a-f-]{36}', '<id>');
SELECT okno_test.err($$SELECT okno_record_failure('00000000-0000-7000-8000-000000000000', 'x', 'journal')$$);
SELECT okno_test.err($$SELECT okno_release('00000000-0000-7000-8000-000000000000', 'nobody')$$);
SELECT okno_test.err($$SELECT okno_requeue('00000000-0000-7000-8000-000000000000', 'nobody')$$);
SELECT okno_test.err($$SELECT okno_requeue(NULL, 'journal')$$);
SELECT okno_test.err($$SELECT okno_requeue_parked('nobody')$$);
SELECT okno_test.err($$SELECT okno_discard('00000000-0000-7000-8000-000000000000', 'nobody')$$);
SELECT okno_release('00000000-0000-7000-8000-000000000000', 'journal') AS unknown_release,
       okno_requeue('00000000-0000-7000-8000-000000000000', 'journal') AS unknown_requeue;
-- "default" names the default subscriber everywhere
SELECT pg_temp.book(10) IS NOT NULL AS b10;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(5, 'default');
SELECT subscriber, attempts, last_error FROM okno_record_failure(pg_temp.id('booking_created', 10), 'x', 'default');
SELECT attempts, last_error FROM outbox WHERE id = pg_temp.id('booking_created', 10);
SELECT okno_requeue(pg_temp.id('booking_created', 10), 'default') AS requeued;
SELECT pg_temp.ev(kind, payload) FROM okno_drain_once('default');
SELECT okno_release(pg_temp.id('booking_created', 10), 'default') AS released;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(5);
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');

-- purge keeps what a subscriber still needs: events it has not copied
-- yet, and events it has not delivered
SELECT pg_temp.book(11) IS NOT NULL AS b11;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SET okno.max_attempts = 1;
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure(pg_temp.id('booking_created', 11), 'x', 'journal');
RESET okno.max_attempts;
SELECT events_deleted > 0 AS some_deleted FROM okno_purge('100 years', '0 seconds');
SELECT pg_temp.id('booking_created', 11) IS NOT NULL AS b11_kept, pg_temp.id('booking_created', 10) IS NULL AS b10_gone;
SELECT count(*) AS states_of_gone_events FROM okno_delivery d WHERE NOT EXISTS (SELECT FROM outbox o WHERE o.id = d.event_id);
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT okno_discard(pg_temp.id('booking_created', 11), 'journal') AS discarded;
SELECT events_deleted FROM okno_purge('100 years', '0 seconds');
SELECT pg_temp.id('booking_created', 11) IS NULL AS b11_gone;
-- an event one subscriber has not copied yet stays
SELECT pg_temp.book(14) IS NOT NULL AS b14;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT events_deleted FROM okno_purge('100 years', '0 seconds');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT events_deleted FROM okno_purge('100 years', '0 seconds');
SELECT pg_temp.id('booking_created', 14) IS NULL AS b14_gone;
SELECT * FROM okno_verify();

-- okno_verify over the delivery states
INSERT INTO okno_delivery (subscriber, event_id, first) VALUES ('ghost', '00000000-0000-7000-8000-000000000001', true);
INSERT INTO okno_delivery (subscriber, event_id, first, delivered_at, parked_at)
VALUES ('journal', '00000000-0000-7000-8000-000000000002', true, now(), now());
SELECT * FROM okno_verify();
DELETE FROM okno_delivery WHERE event_id IN ('00000000-0000-7000-8000-000000000001', '00000000-0000-7000-8000-000000000002');

-- restored into another cluster: the snapshot means nothing there, so the
-- first drain copies again every event since the subscription that has no
-- delivery state (the system identifier tells)
SELECT pg_temp.book(12) IS NOT NULL AS b12;
UPDATE okno_subscriber SET copied_system = 42, copied_snapshot = '1000000:1000000:' WHERE name = 'journal';
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT name, copied_system = (SELECT system_identifier::bigint FROM pg_control_system()) AS this_cluster
  FROM okno_subscriber ORDER BY name;
SELECT pg_temp.book(13) IS NOT NULL AS b13;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');

-- a subscriber that was away catches up in steps: a drain copies the new
-- events of whole transactions, about as many as it hands out
SELECT pg_temp.book(15) IS NOT NULL AS b15;
SELECT pg_temp.book(16) IS NOT NULL AS b16;
SELECT pg_temp.book(17) IS NOT NULL AS b17;
SELECT pg_temp.book(18) IS NOT NULL AS b18;
SELECT not_copied FROM okno_subscribers WHERE subscriber = 'notify';
SELECT pg_temp.ev(kind, payload) FROM okno_drain(2, 'notify');
SELECT not_copied, pending FROM okno_subscribers WHERE subscriber = 'notify';
SELECT pg_temp.ev(kind, payload) FROM okno_drain_once('notify');
SELECT not_copied, pending FROM okno_subscribers WHERE subscriber = 'notify';
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
-- a transaction's events are copied together, even beyond the batch
BEGIN;
SELECT pg_temp.book(19) IS NOT NULL AS b19, pg_temp.book(20) IS NOT NULL AS b20, pg_temp.cancel(19);
COMMIT;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(1, 'notify');
SELECT not_copied, pending, held_back FROM okno_subscribers WHERE subscriber = 'notify';
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT not_copied, pending, held_back FROM okno_subscribers WHERE subscriber = 'notify';
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
-- an event handed out again from the state (a retry) holds back its
-- booking's new event that the same drain copies
SELECT pg_temp.book(21) IS NOT NULL AS b21;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT attempts FROM okno_record_failure(pg_temp.id('booking_created', 21), 'retry', 'notify');
SELECT okno_requeue(pg_temp.id('booking_created', 21), 'notify') AS due_again, pg_temp.cancel(21);
SELECT pg_temp.settled();
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'notify');
SELECT not_copied, pending, held_back FROM okno_subscribers WHERE subscriber = 'notify';
SELECT pg_temp.ev(kind, payload), attempts FROM okno_drain(10, 'notify');

-- the default subscriber's drain forgets the writing transaction of the
-- events it delivers that every subscriber has copied (they leave the
-- index outbox_created_xid), and keeps it while one has not copied them
-- (the subscription's side: subscriber_forget.spec)
SELECT pg_temp.book(22) IS NOT NULL AS b22;
SELECT pg_temp.settled();
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);
SELECT created_xid IS NOT NULL AS b22_kept FROM outbox WHERE id = pg_temp.id('booking_created', 22);
SELECT pg_temp.book(23) IS NOT NULL AS b23;
SELECT pg_temp.settled();
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'journal');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10, 'notify');
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);
SELECT created_xid IS NULL AS b23_forgotten FROM outbox WHERE id = pg_temp.id('booking_created', 23);
-- (an event delivered before every subscriber had copied it keeps it: b22)
SELECT pg_temp.ev(kind, payload) FROM outbox WHERE created_xid IS NOT NULL AND delivered_at IS NOT NULL
   AND created_xid < (SELECT min(pg_snapshot_xmin(copied_snapshot)) FROM okno_subscriber);
-- nor while a subscriber's snapshot is another cluster's (a restore its
-- first drain has not rebased yet)
SELECT pg_temp.book(24) IS NOT NULL AS b24;
SELECT (SELECT count(*) FROM okno_drain(10, 'journal')) AS journal, (SELECT count(*) FROM okno_drain(10, 'notify')) AS notify;
UPDATE okno_subscriber SET copied_system = 42 WHERE name = 'notify';
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);
SELECT created_xid IS NOT NULL AS b24_kept FROM outbox WHERE id = pg_temp.id('booking_created', 24);
UPDATE okno_subscriber SET copied_system = (SELECT system_identifier FROM pg_control_system()) WHERE name = 'notify';
-- nor when the drainer may not update created_xid: it drains as before
CREATE ROLE regress_okno_keeper;
GRANT EXECUTE ON FUNCTION okno_drain(integer) TO regress_okno_keeper;
GRANT SELECT, UPDATE (delivered_at) ON outbox TO regress_okno_keeper;
SELECT pg_temp.book(25) IS NOT NULL AS b25;
SELECT (SELECT count(*) FROM okno_drain(10, 'journal')) AS journal, (SELECT count(*) FROM okno_drain(10, 'notify')) AS notify;
SET ROLE regress_okno_keeper;
SELECT kind FROM okno_drain(10);
RESET ROLE;
SELECT created_xid IS NOT NULL AS b25_kept FROM outbox WHERE id = pg_temp.id('booking_created', 25);
GRANT UPDATE (created_xid) ON outbox TO regress_okno_keeper;
SELECT pg_temp.book(26) IS NOT NULL AS b26;
SELECT pg_temp.settled();
SELECT (SELECT count(*) FROM okno_drain(10, 'journal')) AS journal, (SELECT count(*) FROM okno_drain(10, 'notify')) AS notify;
SET ROLE regress_okno_keeper;
SELECT kind FROM okno_drain(10);
RESET ROLE;
SELECT created_xid IS NULL AS b26_forgotten FROM outbox WHERE id = pg_temp.id('booking_created', 26);
REVOKE ALL ON outbox FROM regress_okno_keeper;
REVOKE ALL ON FUNCTION okno_drain(integer) FROM regress_okno_keeper;
DROP ROLE regress_okno_keeper;
SELECT * FROM okno_verify();

-- unsubscribing removes the state
SELECT okno_unsubscribe('journal') AS journal, okno_unsubscribe('notify') AS notify;
SELECT count(*) AS states FROM okno_delivery;
SELECT subscriber, pending FROM okno_subscribers;
SELECT * FROM okno_verify();
UPDATE outbox SET delivered_at = clock_timestamp(), parked_at = NULL WHERE delivered_at IS NULL;
-- with no subscriber left, every event the default drain delivers is forgotten
SELECT pg_temp.book(27) IS NOT NULL AS b27;
SELECT pg_temp.ev(kind, payload) FROM okno_drain(10);
SELECT created_xid IS NULL AS b27_forgotten FROM outbox WHERE id = pg_temp.id('booking_created', 27);
