/* okno--0.1.0--0.2.0.sql: retries and parking, batch drain, cancellation, retention, status */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.2.0'" to load this file. \quit

-- Every row is kept.  The new columns have constant defaults (no table
-- rewrite); outbox_pending is rebuilt with its new predicate, which takes a
-- SHARE lock on the outbox (writes wait, reads go on) for the time a scan
-- of its pending rows takes.

ALTER TABLE @extschema@.outbox
    ADD COLUMN attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN last_error text,
    ADD COLUMN available_at timestamptz,
    ADD COLUMN parked_at timestamptz,
    ADD CONSTRAINT outbox_attempts_check CHECK (attempts OPERATOR(pg_catalog.>=) 0);

DROP INDEX @extschema@.outbox_pending;
-- pending = not delivered and not parked; available_at rides along so the
-- status view can tell due from delayed events from the index alone
CREATE INDEX outbox_pending ON @extschema@.outbox (id) INCLUDE (available_at)
    WHERE delivered_at IS NULL AND parked_at IS NULL;
CREATE INDEX outbox_parked ON @extschema@.outbox (id)
    WHERE parked_at IS NOT NULL AND delivered_at IS NULL;

-- okno_drain_once keeps its signature and meaning, and now skips parked
-- and delayed events
CREATE OR REPLACE FUNCTION @extschema@.okno_drain_once()
RETURNS TABLE (event_id uuid, kind text, payload jsonb)
AS 'MODULE_PATHNAME', 'okno_drain_once_0_2'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_drain_once() IS
'hand one due outbox event to the caller and mark it delivered, in the caller''s transaction';

-- 0.2.0: batch drain, failures and retries, reading and cancelling, retention, status

CREATE FUNCTION @extschema@.okno_drain(max_events integer DEFAULT 100)
RETURNS TABLE (event_id uuid, kind text, payload jsonb, attempts integer)
AS 'MODULE_PATHNAME', 'okno_drain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION @extschema@.okno_drain(integer) IS
'hand up to max_events due outbox events to the caller, in id order, and mark them delivered, in the caller''s transaction';

CREATE FUNCTION @extschema@.okno_record_failure(event_id uuid, error text)
RETURNS @extschema@.outbox
AS 'MODULE_PATHNAME', 'okno_record_failure'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_record_failure(uuid, text) IS
'record a failed delivery: pending again after a backoff, or parked after okno.max_attempts; returns the event''s row';

CREATE FUNCTION @extschema@.okno_release(event_id uuid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_release'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_release(uuid) IS
'hand a drained event back undelivered, without counting an attempt; false if unknown or not delivered';

CREATE FUNCTION @extschema@.okno_requeue(event_id uuid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_requeue'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_requeue(uuid) IS
'unpark an event: attempts reset, available now; false if unknown or delivered';

CREATE FUNCTION @extschema@.okno_get_booking(actor integer, booking_id bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_get_booking'
LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.okno_get_booking(integer, bigint) IS
'the current card of one of the actor''s bookings';

CREATE FUNCTION @extschema@.okno_cancel_booking(actor integer, booking_id bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_cancel_booking'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_cancel_booking(integer, bigint) IS
'cancel one of the actor''s bookings and queue a booking_cancelled event; a cancelled booking is returned as is';

CREATE FUNCTION @extschema@.okno_purge(keys_older_than interval, delivered_older_than interval)
RETURNS TABLE (keys_deleted bigint, events_deleted bigint)
AS 'MODULE_PATHNAME', 'okno_purge'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_purge(interval, interval) IS
'delete idempotency keys and delivered events older than the given ages, in batches; never pending or parked events';

-- The outbox at a glance.  Everything but "delivered" is counted exactly
-- from the two partial indexes (pending and parked events only), so the
-- view costs the same however many delivered rows the table holds;
-- "delivered" is estimated from the cumulative statistics' live-row count
-- (a fraction of a second to a few seconds behind).
CREATE VIEW @extschema@.okno_outbox_status AS
SELECT p.pending,
       p.due_now,
       p.pending OPERATOR(pg_catalog.-) p.due_now AS delayed,
       k.parked,
       GREATEST(0::bigint,
           pg_catalog.pg_stat_get_live_tuples('@extschema@.outbox'::pg_catalog.regclass)
           OPERATOR(pg_catalog.-) p.pending OPERATOR(pg_catalog.-) k.parked) AS delivered,
       pg_catalog.now() OPERATOR(pg_catalog.-) p.oldest_pending AS oldest_pending_age,
       pg_catalog.now() OPERATOR(pg_catalog.-) p.oldest_due AS oldest_due_age
  FROM (SELECT pg_catalog.count(*) AS pending,
               pg_catalog.count(*) FILTER (WHERE o.available_at IS NULL
                   OR o.available_at OPERATOR(pg_catalog.<=) pg_catalog.now()) AS due_now,
               pg_catalog.min(o.created_at) AS oldest_pending,
               pg_catalog.min(COALESCE(o.available_at, o.created_at)) FILTER (WHERE o.available_at IS NULL
                   OR o.available_at OPERATOR(pg_catalog.<=) pg_catalog.now()) AS oldest_due
          FROM @extschema@.outbox AS o
         WHERE o.delivered_at IS NULL AND o.parked_at IS NULL) AS p,
       (SELECT pg_catalog.count(*) AS parked
          FROM @extschema@.outbox AS o
         WHERE o.parked_at IS NOT NULL AND o.delivered_at IS NULL) AS k;

COMMENT ON VIEW @extschema@.okno_outbox_status IS
'outbox counts: pending (due_now + delayed), parked, delivered (estimated), and the oldest waits';

-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT ON @extschema@.okno_outbox_status TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;
