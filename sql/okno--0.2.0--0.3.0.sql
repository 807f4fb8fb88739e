/* okno--0.2.0--0.3.0.sql: okno_verify, okno_errors, okno_create_booking_result */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.3.0'" to load this file. \quit

-- 0.3.0: the invariant checker

-- okno_purge records how far back it has purged, so that okno_verify can
-- tell a key or event purged on purpose from one that is missing.  One row
-- at most, written by okno_purge.
CREATE TABLE @extschema@.okno_purge_horizon (
    singleton boolean NOT NULL DEFAULT true,
    keys_purged_before timestamptz,
    events_purged_before timestamptz,
    CONSTRAINT okno_purge_horizon_pkey PRIMARY KEY (singleton),
    CONSTRAINT okno_purge_horizon_singleton CHECK (singleton)
);
COMMENT ON TABLE @extschema@.okno_purge_horizon IS
'how far back okno_purge has deleted keys and delivered events';
-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT ALL ON TABLE @extschema@.okno_purge_horizon TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_purge_horizon', '');

CREATE OR REPLACE FUNCTION @extschema@.okno_purge(keys_older_than interval, delivered_older_than interval)
RETURNS TABLE (keys_deleted bigint, events_deleted bigint)
AS 'MODULE_PATHNAME', 'okno_purge_0_3'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

-- The body is parsed once, here (BEGIN ATOMIC), so every name in it is
-- bound now and no caller's search_path can change what it reads.
CREATE FUNCTION @extschema@.okno_verify()
RETURNS TABLE (problem text, detail text)
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
  WITH horizon AS (
    SELECT COALESCE((SELECT h.keys_purged_before FROM @extschema@.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS keys,
           COALESCE((SELECT h.events_purged_before FROM @extschema@.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS events
  ),
  keyed AS (
    SELECT i.actor_id, i.request_key, i.fingerprint, i.response_body,
           CASE WHEN pg_catalog.jsonb_typeof(i.response_body OPERATOR(pg_catalog.->) 'id') OPERATOR(pg_catalog.=) 'number'
                THEN (i.response_body OPERATOR(pg_catalog.->>) 'id')::pg_catalog.numeric END AS booking_id,
           -- the instants as stored in the response, when they have okno's form
           CASE WHEN (i.response_body OPERATOR(pg_catalog.->>) 'starts_at') OPERATOR(pg_catalog.~) '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$'
                THEN (i.response_body OPERATOR(pg_catalog.->>) 'starts_at')::pg_catalog.timestamptz END AS starts_at,
           CASE WHEN (i.response_body OPERATOR(pg_catalog.->>) 'ends_at') OPERATOR(pg_catalog.~) '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$'
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
        OR (k.response_body OPERATOR(pg_catalog.->>) 'actor_id') IS DISTINCT FROM b.actor_id::pg_catalog.text
        OR (k.response_body OPERATOR(pg_catalog.->>) 'resource_id') IS DISTINCT FROM b.resource_id::pg_catalog.text
        OR k.starts_at IS DISTINCT FROM b.starts_at
        OR k.ends_at IS DISTINCT FROM b.ends_at
    UNION ALL
    SELECT 'booking without booking_created event',
           pg_catalog.format('booking %s of actor %s', b.id, b.actor_id)
      FROM @extschema@.bookings AS b, horizon
     WHERE b.created_at OPERATOR(pg_catalog.>=) horizon.events
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
  ) AS v
  ORDER BY 1, 2;
END;

COMMENT ON FUNCTION @extschema@.okno_verify() IS
'okno''s invariants: one row per problem found, none when the data is consistent';

-- okno_create_booking, telling a replay from a creation
CREATE FUNCTION @extschema@.okno_create_booking_result(actor integer, key text, payload jsonb,
                                                      OUT card jsonb, OUT replayed boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'okno_create_booking_result'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_create_booking_result(integer, text, jsonb) IS
'okno_create_booking, also saying whether the card is a replay of a stored response';

-- okno's errors as data, for any HTTP layer to map
CREATE FUNCTION @extschema@.okno_errors()
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
      ('concurrent_request', '40001', 503, 'could not serialize access due to a concurrent request; retry the transaction')
    ) AS e(code, sqlstate, http_status, message)
   ORDER BY e.sqlstate;
END;

COMMENT ON FUNCTION @extschema@.okno_errors() IS
'okno''s errors: code, SQLSTATE, HTTP status and message, for an HTTP layer to map';
