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
-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_adoption TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;
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
-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_discarded TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_discarded', '');

-- the transaction that wrote each event, for subscribers (the events
-- already there have none: they predate every subscriber)
ALTER TABLE @extschema@.outbox ADD COLUMN created_xid xid8;
ALTER TABLE @extschema@.outbox ALTER COLUMN created_xid SET DEFAULT pg_catalog.pg_current_xact_id();
-- (the default subscriber's drain clears it once every subscriber has
-- copied the event, and the event leaves the index)
CREATE INDEX outbox_created_xid ON @extschema@.outbox (created_xid) WHERE created_xid IS NOT NULL;
-- okno_record_failure returns the whole row: a role that could read every
-- other column of it (a relay granted by column, docs/PRIVILEGES.md) may
-- read the new one too, so that its calls go on working
DO $okno$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT g.rolname FROM pg_catalog.pg_roles AS g
         WHERE NOT g.rolsuper
           AND NOT pg_catalog.has_column_privilege(g.oid, '@extschema@.outbox'::pg_catalog.regclass, 'created_xid', 'SELECT')
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                            WHERE a.attrelid OPERATOR(pg_catalog.=) '@extschema@.outbox'::pg_catalog.regclass
                              AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                              AND a.attname OPERATOR(pg_catalog.<>) 'created_xid'
                              AND NOT pg_catalog.has_column_privilege(g.oid, a.attrelid, a.attnum, 'SELECT'))
         ORDER BY g.rolname
    LOOP
        EXECUTE pg_catalog.format('GRANT SELECT (created_xid) ON @extschema@.outbox TO %I', r.rolname);
    END LOOP;
END
$okno$;

-- 0.5.0: subscribers.  Each has its own delivery state: okno_drain with a
-- subscriber copies the events committed since its last look (judged by
-- the transaction that wrote them, outbox.created_xid, against the
-- snapshot it took then, as PgQ's consumers read their batches), hands out
-- at once those that nothing holds back, and keeps a row of okno_delivery
-- for each of the others (and for those that fail later), from which it
-- hands them out.  The default subscriber keeps its state in outbox
-- itself.
CREATE TABLE @extschema@.okno_subscriber (
    name text NOT NULL,
    subscribed_at timestamptz NOT NULL,
    -- no event committed after the subscription began before this (the
    -- start of the oldest writing transaction then): what a restore into
    -- another cluster copies again
    since timestamptz NOT NULL,
    -- the events that this snapshot sees are copied (or predate the
    -- subscription); taken in the cluster named by copied_system
    copied_snapshot pg_catalog.pg_snapshot NOT NULL,
    copied_system bigint NOT NULL,
    copied_at timestamptz NOT NULL,
    CONSTRAINT okno_subscriber_pkey PRIMARY KEY (name),
    CONSTRAINT okno_subscriber_name_check
        CHECK (name OPERATOR(pg_catalog.~) '^[a-z][a-z0-9_-]{0,62}$' AND name OPERATOR(pg_catalog.<>) 'default')
);
COMMENT ON TABLE @extschema@.okno_subscriber IS
'subscribers besides the default one (okno_subscribe), and how far each has copied the outbox';
-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_subscriber TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;

CREATE TABLE @extschema@.okno_delivery (
    subscriber text NOT NULL,
    event_id uuid NOT NULL,
    booking jsonb,              -- the order key: the event's payload -> 'booking_id'
    first boolean NOT NULL,     -- a booking_created event (first of its booking)
    delivered_at timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    available_at timestamptz,
    parked_at timestamptz,
    CONSTRAINT okno_delivery_pkey PRIMARY KEY (subscriber, event_id),
    CONSTRAINT okno_delivery_attempts_check CHECK (attempts OPERATOR(pg_catalog.>=) 0)
);
-- the same partial indexes as outbox's, per subscriber: delivered rows
-- leave them
CREATE INDEX okno_delivery_pending ON @extschema@.okno_delivery (subscriber, event_id) INCLUDE (available_at)
    WHERE delivered_at IS NULL AND parked_at IS NULL;
CREATE INDEX okno_delivery_parked ON @extschema@.okno_delivery (subscriber, event_id)
    WHERE parked_at IS NOT NULL AND delivered_at IS NULL;
CREATE INDEX okno_delivery_order ON @extschema@.okno_delivery (subscriber, booking, event_id)
    WHERE delivered_at IS NULL;
COMMENT ON TABLE @extschema@.okno_delivery IS
'each subscriber''s delivery state of the copied events it was not handed at once: pending, held back, retried, parked, or delivered since';
-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_delivery TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_subscriber', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_delivery', '');

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
    UNION ALL
    SELECT 'discarded event still pending',
           pg_catalog.format('event %s of subscriber %s', d.event_id, d.subscriber)
      FROM @extschema@.okno_discarded AS d
      JOIN @extschema@.okno_delivery AS x
        ON x.subscriber OPERATOR(pg_catalog.=) d.subscriber AND x.event_id OPERATOR(pg_catalog.=) d.event_id
     WHERE x.delivered_at IS NULL
    UNION ALL
    SELECT 'delivery state of an unknown subscriber',
           pg_catalog.format('event %s of subscriber %s', x.event_id, x.subscriber)
      FROM @extschema@.okno_delivery AS x
     WHERE NOT EXISTS (SELECT FROM @extschema@.okno_subscriber AS u
                        WHERE u.name OPERATOR(pg_catalog.=) x.subscriber)
    UNION ALL
    SELECT 'delivery state of a missing event',
           pg_catalog.format('event %s of subscriber %s', x.event_id, x.subscriber)
      FROM @extschema@.okno_delivery AS x
     WHERE NOT EXISTS (SELECT FROM @extschema@.outbox AS o
                        WHERE o.id OPERATOR(pg_catalog.=) x.event_id)
    UNION ALL
    SELECT 'event both delivered and parked',
           pg_catalog.format('event %s of subscriber %s', x.event_id, x.subscriber)
      FROM @extschema@.okno_delivery AS x
     WHERE x.delivered_at IS NOT NULL AND x.parked_at IS NOT NULL
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

-- 0.5.0: subscribers (the tables are above okno_verify)
CREATE FUNCTION @extschema@.okno_subscribe(subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_subscribe'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_subscribe(text) IS
'add a subscriber: it receives every event committed after this; false if it exists already';

CREATE FUNCTION @extschema@.okno_unsubscribe(subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_unsubscribe'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_unsubscribe(text) IS
'remove a subscriber and its delivery state; false if there is no such subscriber';

CREATE FUNCTION @extschema@.okno_drain(max_events integer, subscriber text)
RETURNS TABLE (event_id uuid, kind text, payload jsonb, attempts integer)
AS 'MODULE_PATHNAME', 'okno_drain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION @extschema@.okno_drain(integer, text) IS
'hand up to max_events events due for a subscriber to the caller, in id order, and mark them delivered for it, in the caller''s transaction';

CREATE FUNCTION @extschema@.okno_drain_once(subscriber text)
RETURNS TABLE (event_id uuid, kind text, payload jsonb)
AS 'MODULE_PATHNAME', 'okno_drain_once_0_2'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_drain_once(text) IS
'hand one event due for a subscriber to the caller and mark it delivered for it, in the caller''s transaction';

CREATE PROCEDURE @extschema@.okno_wait(timeout_ms integer, INOUT woken boolean, subscriber text)
AS 'MODULE_PATHNAME', 'okno_wait'
LANGUAGE C;

COMMENT ON PROCEDURE @extschema@.okno_wait(integer, boolean, text) IS
'wait up to timeout_ms for an event to be due for a subscriber: CALL okno_wait(ms, NULL, subscriber); woken is true when one may be, false at the timeout';

CREATE FUNCTION @extschema@.okno_record_failure(event_id uuid, error text, subscriber text)
RETURNS @extschema@.okno_delivery
AS 'MODULE_PATHNAME', 'okno_record_failure'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_record_failure(uuid, text, text) IS
'record a failed delivery to a subscriber: pending again after a backoff, or parked; returns its delivery state';

CREATE FUNCTION @extschema@.okno_release(event_id uuid, subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_release'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_release(uuid, text) IS
'hand an event drained for a subscriber back undelivered, without counting an attempt; false if not delivered to it';

CREATE FUNCTION @extschema@.okno_requeue(event_id uuid, subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_requeue'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_requeue(uuid, text) IS
'unpark an event for a subscriber: attempts reset, available now; false if it has no undelivered copy';

-- Each subscriber at a glance, the default one first: what okno_outbox_status
-- counts for the default subscriber, for every subscriber.  not_copied
-- counts the events committed since its drains last looked (they are also
-- in pending and due_now).
CREATE VIEW @extschema@.okno_subscribers AS
SELECT v.* FROM (
SELECT 'default'::pg_catalog.text AS subscriber, NULL::pg_catalog.timestamptz AS subscribed_at,
       s.pending, s.due_now, s.delayed, s.parked, s.held_back, 0::bigint AS not_copied,
       s.oldest_pending_age, NULL::pg_catalog.timestamptz AS copied_at
  FROM @extschema@.okno_outbox_status AS s
UNION ALL
SELECT u.name, u.subscribed_at,
       d.pending OPERATOR(pg_catalog.+) n.not_copied,
       d.due_now OPERATOR(pg_catalog.+) n.not_copied,
       d.pending OPERATOR(pg_catalog.-) d.due_now OPERATOR(pg_catalog.-) d.held_back,
       d.parked, d.held_back, n.not_copied,
       pg_catalog.now() OPERATOR(pg_catalog.-) LEAST(d.oldest, n.oldest),
       u.copied_at
  FROM @extschema@.okno_subscriber AS u,
       LATERAL (SELECT pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL) AS pending,
                       pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL AND NOT x.held AND (x.available_at IS NULL
                           OR x.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS due_now,
                       pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL AND x.held) AS held_back,
                       pg_catalog.count(*) FILTER (WHERE x.parked_at IS NOT NULL) AS parked,
                       pg_catalog.min(x.created_at) FILTER (WHERE x.parked_at IS NULL) AS oldest
                  FROM (SELECT e.created_at, p.available_at, p.parked_at,
                               NOT p.first AND EXISTS (SELECT FROM @extschema@.okno_delivery AS q
                                        WHERE q.subscriber OPERATOR(pg_catalog.=) p.subscriber
                                          AND q.booking OPERATOR(pg_catalog.=) p.booking
                                          AND q.delivered_at IS NULL
                                          AND q.event_id OPERATOR(pg_catalog.<>) p.event_id
                                          AND CASE WHEN (pg_catalog.get_byte(pg_catalog.uuid_send(q.event_id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7)
                                                        OPERATOR(pg_catalog.=) (pg_catalog.get_byte(pg_catalog.uuid_send(p.event_id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7)
                                                   THEN q.event_id OPERATOR(pg_catalog.<) p.event_id
                                                   ELSE pg_catalog.get_byte(pg_catalog.uuid_send(p.event_id), 6) OPERATOR(pg_catalog./) 16 OPERATOR(pg_catalog.=) 7 END) AS held
                          FROM @extschema@.okno_delivery AS p
                          JOIN @extschema@.outbox AS e ON e.id OPERATOR(pg_catalog.=) p.event_id
                         WHERE p.subscriber OPERATOR(pg_catalog.=) u.name AND p.delivered_at IS NULL) AS x) AS d,
       LATERAL (SELECT pg_catalog.count(*) AS not_copied, pg_catalog.min(e.created_at) AS oldest
                  FROM @extschema@.outbox AS e
                 WHERE e.created_xid OPERATOR(pg_catalog.>=) pg_catalog.pg_snapshot_xmin(u.copied_snapshot)
                   AND NOT pg_catalog.pg_visible_in_snapshot(e.created_xid, u.copied_snapshot)) AS n
) AS v
ORDER BY v.subscriber OPERATOR(pg_catalog.<>) 'default', v.subscriber;

COMMENT ON VIEW @extschema@.okno_subscribers IS
'each subscriber''s counts (the default one first): pending (due_now + delayed + held_back), parked, not yet copied, and the oldest wait';

-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT ON @extschema@.okno_subscribers TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;

-- okno_purge leaves what a subscriber still needs
CREATE OR REPLACE FUNCTION @extschema@.okno_purge(keys_older_than interval, delivered_older_than interval)
RETURNS TABLE (keys_deleted bigint, events_deleted bigint)
AS 'MODULE_PATHNAME', 'okno_purge_0_5'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_purge(interval, interval) IS
'delete idempotency keys and delivered events older than the given ages, in batches; never events a subscriber still needs';
