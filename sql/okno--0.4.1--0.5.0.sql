/* okno--0.4.1--0.5.0.sql: the course's form of fingerprints, and what keeps adopted tables */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.5.0'" to load this file. \quit

-- 0.5.0 adopts the course's tables when CREATE EXTENSION okno finds them
-- (see okno--0.5.0.sql).  An install that already exists adopted nothing:
-- its record of adoptions stays empty, and everything else behaves as
-- before.

CREATE TABLE @extschema@.okno_adoption (
    relation name NOT NULL,
    former_owner name NOT NULL,
    adopted_at timestamptz NOT NULL,
    row_count bigint,
    added text[] NOT NULL DEFAULT '{}',
    CONSTRAINT okno_adoption_pkey PRIMARY KEY (relation)
);
COMMENT ON TABLE @extschema@.okno_adoption IS
'the course''s tables okno took over at CREATE EXTENSION: when, from whom, and what it added';
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_adoption
    TO @extowner@ WITH GRANT OPTION;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_adoption', '');

-- the course's form too (fingerprint version 0), for keys its service stored
CREATE FUNCTION @extschema@.okno_canonical(payload jsonb, fingerprint_version smallint)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_canonical_version'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_canonical(jsonb, smallint) IS
'the canonical text of a booking payload in the given fingerprint version (1 okno''s, 0 the course''s)';

CREATE FUNCTION @extschema@.okno_fingerprint(payload jsonb, fingerprint_version smallint)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_fingerprint_version'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_fingerprint(jsonb, smallint) IS
'lowercase hex SHA-256 of okno_canonical(payload, fingerprint_version)';

-- 0.5.0: parked events given up on purpose (okno_discard, below)
CREATE TABLE @extschema@.okno_discarded (
    event_id uuid NOT NULL,
    subscriber text NOT NULL,
    kind varchar(40) NOT NULL,
    payload jsonb NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    parked_at timestamptz,
    discarded_at timestamptz NOT NULL,
    discarded_by name NOT NULL,
    CONSTRAINT okno_discarded_pkey PRIMARY KEY (event_id, subscriber, discarded_at)
);
COMMENT ON TABLE @extschema@.okno_discarded IS
'parked events given up on purpose with okno_discard: the event as it was, who discarded it and when';
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_discarded
    TO @extowner@ WITH GRANT OPTION;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_discarded', '');

-- okno_verify: what the course's service left behind before an adoption is
-- not reported (bookings without keys or events), and its cards are read
-- as it wrote them
CREATE OR REPLACE FUNCTION @extschema@.okno_verify()
RETURNS TABLE (problem text, detail text)
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
  WITH horizon AS (
    SELECT COALESCE((SELECT h.keys_purged_before FROM @extschema@.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS keys,
           COALESCE((SELECT h.events_purged_before FROM @extschema@.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS events,
           -- what the course's service wrote before okno adopted its
           -- tables: bookings from before keys or events existed
           COALESCE((SELECT pg_catalog.max(a.adopted_at) FROM @extschema@.okno_adoption AS a), '-infinity'::pg_catalog.timestamptz) AS adopted
  ),
  keyed AS (
    SELECT i.actor_id, i.request_key, i.fingerprint, i.response_body,
           i.fingerprint_version OPERATOR(pg_catalog.=) 0 AS course,
           CASE WHEN pg_catalog.jsonb_typeof(i.response_body OPERATOR(pg_catalog.->) 'id') OPERATOR(pg_catalog.=) 'number'
                THEN (i.response_body OPERATOR(pg_catalog.->>) 'id')::pg_catalog.numeric END AS booking_id,
           -- the instants as stored in the response, when they have okno's
           -- form (the course's service wrote them at any offset)
           CASE WHEN (i.response_body OPERATOR(pg_catalog.->>) 'starts_at') OPERATOR(pg_catalog.~)
                     CASE WHEN i.fingerprint_version OPERATOR(pg_catalog.=) 0
                          THEN '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$'
                          ELSE '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$' END
                THEN (i.response_body OPERATOR(pg_catalog.->>) 'starts_at')::pg_catalog.timestamptz END AS starts_at,
           CASE WHEN (i.response_body OPERATOR(pg_catalog.->>) 'ends_at') OPERATOR(pg_catalog.~)
                     CASE WHEN i.fingerprint_version OPERATOR(pg_catalog.=) 0
                          THEN '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$'
                          ELSE '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$' END
                THEN (i.response_body OPERATOR(pg_catalog.->>) 'ends_at')::pg_catalog.timestamptz END AS ends_at
      FROM @extschema@.idempotency AS i
  ),
  events AS (
    SELECT o.id, o.kind, o.attempts, o.last_error, o.delivered_at, o.parked_at,
           CASE WHEN pg_catalog.jsonb_typeof(o.payload OPERATOR(pg_catalog.->) 'booking_id') OPERATOR(pg_catalog.=) 'number'
                THEN (o.payload OPERATOR(pg_catalog.->>) 'booking_id')::pg_catalog.numeric END AS booking_id
      FROM @extschema@.outbox AS o
  )
  SELECT v.problem, v.detail FROM (
    SELECT 'booking without idempotency row'::pg_catalog.text AS problem,
           pg_catalog.format('booking %s of actor %s', b.id, b.actor_id) AS detail
      FROM @extschema@.bookings AS b, horizon
     WHERE b.created_at OPERATOR(pg_catalog.>=) horizon.keys
       AND b.created_at OPERATOR(pg_catalog.>) horizon.adopted
       AND NOT EXISTS (SELECT FROM keyed AS k WHERE k.booking_id OPERATOR(pg_catalog.=) b.id)
    UNION ALL
    SELECT 'idempotency row without booking',
           pg_catalog.format('key %s of actor %s names booking %s', k.request_key, k.actor_id, k.booking_id)
      FROM keyed AS k
     WHERE NOT EXISTS (SELECT FROM @extschema@.bookings AS b WHERE b.id OPERATOR(pg_catalog.=) k.booking_id)
    UNION ALL
    SELECT 'response does not match its booking',
           pg_catalog.format('key %s of actor %s, booking %s', k.request_key, k.actor_id, b.id)
      FROM keyed AS k JOIN @extschema@.bookings AS b ON b.id OPERATOR(pg_catalog.=) k.booking_id
     WHERE b.actor_id OPERATOR(pg_catalog.<>) k.actor_id
        -- (the course's cards may lack a field; what they have must match)
        OR ((NOT k.course OR k.response_body OPERATOR(pg_catalog.?) 'actor_id')
            AND (k.response_body OPERATOR(pg_catalog.->>) 'actor_id') IS DISTINCT FROM b.actor_id::pg_catalog.text)
        OR ((NOT k.course OR k.response_body OPERATOR(pg_catalog.?) 'resource_id')
            AND (k.response_body OPERATOR(pg_catalog.->>) 'resource_id') IS DISTINCT FROM b.resource_id::pg_catalog.text)
        OR k.starts_at IS DISTINCT FROM b.starts_at
        OR k.ends_at IS DISTINCT FROM b.ends_at
    UNION ALL
    SELECT 'booking without booking_created event',
           pg_catalog.format('booking %s of actor %s', b.id, b.actor_id)
      FROM @extschema@.bookings AS b, horizon
     WHERE b.created_at OPERATOR(pg_catalog.>=) horizon.events
       AND b.created_at OPERATOR(pg_catalog.>) horizon.adopted
       AND NOT EXISTS (SELECT FROM events AS e
                        WHERE e.kind OPERATOR(pg_catalog.=) 'booking_created'
                          AND e.booking_id OPERATOR(pg_catalog.=) b.id)
    UNION ALL
    SELECT 'event without booking',
           pg_catalog.format('%s event %s names booking %s', e.kind, e.id, COALESCE(e.booking_id::pg_catalog.text, '(none)'))
      FROM events AS e
     WHERE e.kind OPERATOR(pg_catalog.=) ANY (ARRAY['booking_created', 'booking_cancelled']::pg_catalog.text[])
       AND NOT EXISTS (SELECT FROM @extschema@.bookings AS b WHERE b.id OPERATOR(pg_catalog.=) e.booking_id)
    UNION ALL
    SELECT 'more than one booking_created event',
           pg_catalog.format('booking %s has %s', e.booking_id, pg_catalog.count(*))
      FROM events AS e
     WHERE e.kind OPERATOR(pg_catalog.=) 'booking_created'
     GROUP BY e.booking_id
    HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1
    UNION ALL
    SELECT 'overlapping confirmed bookings',
           pg_catalog.format('bookings %s and %s of resource %s', a.id, b.id, a.resource_id)
      FROM @extschema@.bookings AS a JOIN @extschema@.bookings AS b
        ON b.resource_id OPERATOR(pg_catalog.=) a.resource_id
       AND a.id OPERATOR(pg_catalog.<) b.id
       AND pg_catalog.tstzrange(a.starts_at, a.ends_at) OPERATOR(pg_catalog.&&) pg_catalog.tstzrange(b.starts_at, b.ends_at)
     WHERE a.status OPERATOR(pg_catalog.=) 'confirmed' AND b.status OPERATOR(pg_catalog.=) 'confirmed'
    UNION ALL
    SELECT 'failed event without last_error',
           pg_catalog.format('event %s has %s attempts', e.id, e.attempts)
      FROM events AS e
     WHERE e.attempts OPERATOR(pg_catalog.>) 0 AND e.last_error IS NULL
    UNION ALL
    SELECT 'event both delivered and parked', pg_catalog.format('event %s', e.id)
      FROM events AS e
     WHERE e.delivered_at IS NOT NULL AND e.parked_at IS NOT NULL
    UNION ALL
    SELECT 'malformed fingerprint', pg_catalog.format('key %s of actor %s', k.request_key, k.actor_id)
      FROM keyed AS k
     WHERE k.fingerprint::pg_catalog.text OPERATOR(pg_catalog.!~) '^[0-9a-f]{64}$'
    UNION ALL
    SELECT 'discarded event still pending',
           pg_catalog.format('event %s of subscriber %s', d.event_id, d.subscriber)
      FROM @extschema@.okno_discarded AS d
      JOIN @extschema@.outbox AS o ON o.id OPERATOR(pg_catalog.=) d.event_id
     WHERE d.subscriber OPERATOR(pg_catalog.=) 'default' AND o.delivered_at IS NULL
    UNION ALL
    SELECT 'discard record does not match its event',
           pg_catalog.format('event %s of subscriber %s', d.event_id, d.subscriber)
      FROM @extschema@.okno_discarded AS d
      JOIN @extschema@.outbox AS o ON o.id OPERATOR(pg_catalog.=) d.event_id
     WHERE o.kind::pg_catalog.text OPERATOR(pg_catalog.<>) d.kind::pg_catalog.text
        OR o.payload OPERATOR(pg_catalog.<>) d.payload
  ) AS v
  ORDER BY 1, 2;
END;

COMMENT ON FUNCTION @extschema@.okno_verify() IS
'okno''s invariants: one row per problem found, none when the data is consistent';

-- DROP EXTENSION okno (and DROP OWNED BY its owner) first takes the tables
-- okno adopted out of the extension, so they stay with their rows
CREATE FUNCTION @extschema@.okno_drop_guard()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'okno_drop_guard'
LANGUAGE C;

COMMENT ON FUNCTION @extschema@.okno_drop_guard() IS
'releases the tables okno adopted from the extension before DROP EXTENSION okno drops it';

CREATE EVENT TRIGGER okno_drop_guard ON ddl_command_start
    WHEN TAG IN ('DROP EXTENSION', 'DROP OWNED')
    EXECUTE FUNCTION @extschema@.okno_drop_guard();

-- 0.5.0: a relay waits inside the server for the next event (a procedure:
-- it ends the check's transaction, so no snapshot stays while it waits)
CREATE PROCEDURE @extschema@.okno_wait(timeout_ms integer, INOUT woken boolean DEFAULT NULL)
AS 'MODULE_PATHNAME', 'okno_wait'
LANGUAGE C;

COMMENT ON PROCEDURE @extschema@.okno_wait(integer, boolean) IS
'wait up to timeout_ms for an outbox event to be due; woken is true when one may be, false at the timeout';

-- okno_errors: subscriber_missing (OKB09)
CREATE OR REPLACE FUNCTION @extschema@.okno_errors()
RETURNS TABLE (code text, sqlstate text, http_status integer, message text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
  SELECT e.code, e.sqlstate, e.http_status, e.message
    FROM (VALUES
      ('invalid_key'::pg_catalog.text, 'OKB01'::pg_catalog.text, 422, 'invalid idempotency key'::pg_catalog.text),
      ('invalid_payload', 'OKB02', 422, 'invalid booking payload'),
      ('resource_missing', 'OKB03', 404, 'resource does not exist'),
      ('key_reused', 'OKB04', 409, 'idempotency key was already used with a different payload'),
      ('slot_busy', 'OKB05', 409, 'the time slot is already booked'),
      ('actor_missing', 'OKB06', 403, 'actor does not exist'),
      ('booking_missing', 'OKB07', 404, 'booking does not exist'),
      ('event_missing', 'OKB08', 404, 'outbox event does not exist'),
      ('subscriber_missing', 'OKB09', 404, 'subscriber does not exist'),
      ('concurrent_request', '40001', 503, 'could not serialize access due to a concurrent request; retry the transaction')
    ) AS e(code, sqlstate, http_status, message)
   ORDER BY e.sqlstate;
END;

-- 0.5.0: order per booking.  Each event of a booking is handed out only
-- after every earlier event of that booking is delivered (or discarded):
-- a drain skips an event while an earlier one of its booking is pending,
-- delayed, parked or held by a drain that has not committed.  The order key
-- is payload -> 'booking_id' (an event without one is in no order group);
-- "earlier" is id order, and an id that is not a UUID version 7 (the
-- course's events, adopted) comes before every version 7 id; a
-- booking_created event is first by construction.  This index finds a
-- booking's undelivered events.
CREATE INDEX outbox_order ON @extschema@.outbox ((payload OPERATOR(pg_catalog.->) 'booking_id'), id)
    WHERE delivered_at IS NULL;
-- The undelivered events that are not a booking's first: a drain's cursor
-- must not pass one that its batch held back.
CREATE INDEX outbox_later ON @extschema@.outbox (id)
    WHERE delivered_at IS NULL AND kind OPERATOR(pg_catalog.<>) 'booking_created';

-- The outbox at a glance.  Everything but "delivered" is counted exactly
-- from the partial indexes (undelivered events only), so the view costs the
-- same however many delivered rows the table holds; "delivered" is
-- estimated from the cumulative statistics' live-row count (a fraction of a
-- second to a few seconds behind).  pending = due_now + delayed +
-- held_back: held_back counts the events that wait for an earlier event of
-- their booking, whatever their own time.
CREATE OR REPLACE VIEW @extschema@.okno_outbox_status AS
SELECT p.pending,
       p.due_now,
       p.pending OPERATOR(pg_catalog.-) p.due_now OPERATOR(pg_catalog.-) p.held_back AS delayed,
       k.parked,
       GREATEST(0::bigint,
           pg_catalog.pg_stat_get_live_tuples('@extschema@.outbox'::pg_catalog.regclass)
           OPERATOR(pg_catalog.-) p.pending OPERATOR(pg_catalog.-) k.parked) AS delivered,
       pg_catalog.now() OPERATOR(pg_catalog.-) p.oldest_pending AS oldest_pending_age,
       pg_catalog.now() OPERATOR(pg_catalog.-) p.oldest_due AS oldest_due_age,
       p.held_back
  FROM (SELECT pg_catalog.count(*) AS pending,
               pg_catalog.count(*) FILTER (WHERE NOT o.held AND (o.available_at IS NULL
                   OR o.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS due_now,
               pg_catalog.count(*) FILTER (WHERE o.held) AS held_back,
               pg_catalog.min(o.created_at) AS oldest_pending,
               pg_catalog.min(COALESCE(o.available_at, o.created_at)) FILTER (WHERE NOT o.held AND (o.available_at IS NULL
                   OR o.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS oldest_due
          FROM (SELECT e.created_at, e.available_at,
                       e.kind OPERATOR(pg_catalog.<>) 'booking_created' AND EXISTS (SELECT FROM @extschema@.outbox AS q
                                WHERE (q.payload OPERATOR(pg_catalog.->) 'booking_id') OPERATOR(pg_catalog.=) (e.payload OPERATOR(pg_catalog.->) 'booking_id')
                                  AND q.delivered_at IS NULL
                                  AND q.id OPERATOR(pg_catalog.<>) e.id
                                  AND CASE WHEN (pg_catalog.get_byte(pg_catalog.uuid_send(q.id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7)
                                                OPERATOR(pg_catalog.=) (pg_catalog.get_byte(pg_catalog.uuid_send(e.id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7)
                                           THEN q.id OPERATOR(pg_catalog.<) e.id
                                           ELSE pg_catalog.get_byte(pg_catalog.uuid_send(e.id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7 END) AS held
                  FROM @extschema@.outbox AS e
                 WHERE e.delivered_at IS NULL AND e.parked_at IS NULL) AS o) AS p,
       (SELECT pg_catalog.count(*) AS parked
          FROM @extschema@.outbox AS o
         WHERE o.parked_at IS NOT NULL AND o.delivered_at IS NULL) AS k;

COMMENT ON VIEW @extschema@.okno_outbox_status IS
'outbox counts: pending (due_now + delayed + held_back), parked, delivered (estimated), and the oldest waits';

-- 0.5.0: dead-letter tools.  A parked event is requeued, or given up on
-- purpose: okno_discard keeps a record of what was discarded, by whom and
-- when (okno_verify checks it), and the event counts as done.

CREATE FUNCTION @extschema@.okno_requeue_parked(subscriber text DEFAULT NULL, kind text DEFAULT NULL,
                                               error_like text DEFAULT NULL,
                                               parked_before timestamptz DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'okno_requeue_parked'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_requeue_parked(text, text, text, timestamptz) IS
'requeue the parked events that match every filter given (NULL: any), in id order; returns how many';

CREATE FUNCTION @extschema@.okno_discard(event_id uuid, subscriber text DEFAULT 'default')
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_discard'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_discard(uuid, text) IS
'give a parked event up: recorded in okno_discarded, never handed out again; false if it is not parked';
