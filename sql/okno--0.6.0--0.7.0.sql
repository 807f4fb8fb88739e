/* okno--0.6.0--0.7.0.sql: idempotency keys of any operation */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.7.0'" to load this file. \quit

-- Only okno's own objects change: its functions and tables.  Nothing of
-- the application's tables is read or altered: the column outbox.order_key
-- and the index outbox_order_key that okno 0.7.0 needs are the owner's to
-- add, with SELECT okno_prepare_tables(); until then okno answers
-- tables_unfit (OKB10), listing them.

-- okno_delivery keeps an event's order key as text (okno_emit's keys, a
-- booking's id for its events); 0.5.0 kept the booking, payload ->
-- 'booking_id', as jsonb.  (Altering it also makes every session bind
-- again, and so use 0.7.0's statements from its next call.)
ALTER TABLE @extschema@.okno_delivery RENAME COLUMN booking TO order_key;
ALTER TABLE @extschema@.okno_delivery ALTER COLUMN order_key TYPE text
    USING order_key OPERATOR(pg_catalog.#>>) '{}'::pg_catalog.text[];

-- okno_purge leaves tombstones of the keys it deletes (bookings' and
-- operations') and purges them after okno.key_tombstone_age; okno_verify
-- checks operations' keys and tombstones.  Same signatures, same
-- privileges.
CREATE OR REPLACE FUNCTION @extschema@.okno_purge(keys_older_than interval, delivered_older_than interval)
RETURNS TABLE (keys_deleted bigint, events_deleted bigint)
AS 'MODULE_PATHNAME', 'okno_purge_0_7'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_purge(interval, interval) IS
'delete idempotency keys (leaving tombstones) and delivered events older than the given ages, in batches; never events a subscriber still needs';

CREATE OR REPLACE FUNCTION @extschema@.okno_verify()
RETURNS TABLE (problem text, detail text)
AS 'MODULE_PATHNAME', 'okno_verify_0_7'
LANGUAGE C STABLE PARALLEL RESTRICTED;

-- key_expired and request_in_progress
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
      ('tables_unfit', 'OKB10', 500, 'okno''s tables cannot serve it'),
      ('key_expired', 'OKB11', 410, 'idempotency key has expired'),
      ('request_in_progress', 'OKB12', 409, 'a request with this idempotency key is in progress'),
      ('concurrent_request', '40001', 503, 'could not serialize access due to a concurrent request; retry the transaction')
    ) AS e(code, sqlstate, http_status, message)
   ORDER BY e.sqlstate;
END;


-- 0.7.0: idempotency keys of any operation.  okno_idempotent runs a
-- handler of the caller's for a new request and stores its response with
-- the key, in the caller's transaction; okno_key_claim and okno_key_store
-- do the same around the caller's own statements.  A request's fingerprint
-- is the SHA-256 of its RFC 8785 form (okno_canonical_json).
CREATE TABLE @extschema@.okno_key (
    operation text COLLATE pg_catalog."C" NOT NULL,
    scope text COLLATE pg_catalog."C" NOT NULL,
    request_key text COLLATE pg_catalog."C" NOT NULL,
    fingerprint bytea NOT NULL,         -- SHA-256 of the request's RFC 8785 form
    response jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    CONSTRAINT okno_key_pkey PRIMARY KEY (operation, scope, request_key)
);
COMMENT ON TABLE @extschema@.okno_key IS
'idempotency keys of operations (okno_idempotent, okno_key_claim): the request''s fingerprint and the stored response';
-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_key TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;

-- What okno_purge leaves of an expired key (a booking's or an
-- operation's): the SHA-256 of its identity and when it expired, kept for
-- okno.key_tombstone_age.  A retry with the key is answered key_expired.
CREATE TABLE @extschema@.okno_key_tombstone (
    key_hash bytea NOT NULL,
    expired_at timestamptz NOT NULL,
    CONSTRAINT okno_key_tombstone_pkey PRIMARY KEY (key_hash)
);
COMMENT ON TABLE @extschema@.okno_key_tombstone IS
'expired idempotency keys: the hash of each key''s identity and when okno_purge removed its response';
-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_key_tombstone TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;

SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_key', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_key_tombstone', '');

CREATE FUNCTION @extschema@.okno_canonical_json(value jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_canonical_json'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_canonical_json(jsonb) IS
'the RFC 8785 (JSON Canonicalization Scheme) form of a JSON value';

CREATE FUNCTION @extschema@.okno_idempotent(operation text, scope text, key text,
                                            request jsonb, handler regprocedure)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_idempotent'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_idempotent(text, text, text, jsonb, regprocedure) IS
'run handler(request) once per (operation, scope, key) and store its response, in the caller''s transaction; a retry replays the stored response';

CREATE FUNCTION @extschema@.okno_idempotent_result(operation text, scope text, key text,
                                                   request jsonb, handler regprocedure,
                                                   OUT response jsonb, OUT replayed boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'okno_idempotent_result'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_idempotent_result(text, text, text, jsonb, regprocedure) IS
'okno_idempotent, also saying whether the response is a replay of a stored one';

CREATE FUNCTION @extschema@.okno_key_claim(operation text, scope text, key text, request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_key_claim'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_key_claim(text, text, text, jsonb) IS
'the stored response of (operation, scope, key) to replay, or NULL: the key is claimed, and okno_key_store must store the response before the commit';

CREATE FUNCTION @extschema@.okno_key_store(operation text, scope text, key text, response jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_key_store'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_key_store(text, text, text, jsonb) IS
'store the response of a key this transaction claimed with okno_key_claim; returns it';

-- events from any function
CREATE FUNCTION @extschema@.okno_emit(kind text, payload jsonb, order_key text DEFAULT NULL)
RETURNS uuid
AS 'MODULE_PATHNAME', 'okno_emit'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_emit(text, jsonb, text) IS
'write an outbox event in the caller''s transaction; events with the same order_key are delivered in order; returns its id';
