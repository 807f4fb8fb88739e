/* okno.sql: okno's functions and its own tables */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION okno CASCADE" to load this file. \quit

-- Every name below is qualified with @extschema@ or pg_catalog, so nothing
-- resolves through the installing user's search_path (okno is trusted).

-- okno owns only its own objects.  The five tables it serves (actors,
-- resources, bookings, idempotency, outbox) are the application's: this
-- script neither creates, reads, alters nor requires them, since it runs
-- as the bootstrap superuser and pg_restore runs it before it creates the
-- application's tables.  okno binds to them by name in this schema at its
-- first use in a session (their owner creates them with
-- SELECT okno_create_tables(), or prepares a course database's with
-- SELECT okno_prepare_tables()), and nothing of okno's refers to them: no
-- view, no function's type, no foreign key of okno's tables.

-- The functions come in the groups of docs/REFERENCE.md, in its order
-- (bookings, keys, events, delivery, subscribers, dead letters,
-- maintenance, errors), each function's overloads together; then okno's
-- own tables and sequence, the views, and last the privileges and what
-- pg_dump dumps.  A table whose row type a function returns comes before
-- that function (okno_delivery, in Delivery).

-- Bookings

CREATE FUNCTION @extschema@.okno_create_booking(actor integer, key text, payload jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'okno_create_booking'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_create_booking(integer, text, jsonb) IS
'book a resource idempotently under (actor, key) and queue a booking_created event, in the caller''s transaction';

-- okno_create_booking, telling a replay from a creation
CREATE FUNCTION @extschema@.okno_create_booking_result(actor integer, key text, payload jsonb,
                                                      OUT card jsonb, OUT replayed boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'okno_create_booking_result'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_create_booking_result(integer, text, jsonb) IS
'okno_create_booking, also saying whether the card is a replay of a stored response';

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

-- A booking payload's canonical text and its SHA-256: okno's form
-- (fingerprint version 1), and with fingerprint_version the course's form
-- too (version 0), for keys its service stored
CREATE FUNCTION @extschema@.okno_canonical(payload jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_canonical'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_canonical(jsonb) IS
'the canonical text (fingerprint version 1) of a booking payload';

CREATE FUNCTION @extschema@.okno_canonical(payload jsonb, fingerprint_version smallint)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_canonical_version'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_canonical(jsonb, smallint) IS
'the canonical text of a booking payload in the given fingerprint version (1 okno''s, 0 the course''s)';

CREATE FUNCTION @extschema@.okno_fingerprint(payload jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_fingerprint'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_fingerprint(jsonb) IS
'lowercase hex SHA-256 of okno_canonical(payload)';

CREATE FUNCTION @extschema@.okno_fingerprint(payload jsonb, fingerprint_version smallint)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_fingerprint_version'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_fingerprint(jsonb, smallint) IS
'lowercase hex SHA-256 of okno_canonical(payload, fingerprint_version)';

-- Keys: idempotency keys of any operation.  okno_idempotent runs a
-- handler of the caller's for a new request and stores its response with
-- the key, in the caller's transaction; okno_key_claim and okno_key_store
-- do the same around the caller's own statements.  A request's fingerprint
-- is the SHA-256 of its RFC 8785 form (okno_canonical_json).

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

CREATE FUNCTION @extschema@.okno_canonical_json(value jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'okno_canonical_json'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_canonical_json(jsonb) IS
'the RFC 8785 (JSON Canonicalization Scheme) form of a JSON value';

-- Events from any function.  okno_emit writes an outbox event in the
-- caller's transaction; events of one order key are delivered in order (a
-- booking's events have its id as their key), NULL is none.
-- outbox.order_key is the application's column, added by
-- okno_prepare_tables().

CREATE FUNCTION @extschema@.okno_emit(kind text, payload jsonb, order_key text DEFAULT NULL)
RETURNS uuid
AS 'MODULE_PATHNAME', 'okno_emit'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_emit(text, jsonb, text) IS
'write an outbox event in the caller''s transaction; events with the same order_key are delivered in order; returns its id';

-- Where Citus distributes outbox, it is by an integer column bucket, a
-- function of the event's order key (its id as text for an event without
-- one), so that one key's events lie in one shard: okno writes it for its
-- own events, an application that writes outbox rows itself writes
-- okno_outbox_bucket(COALESCE(order key, id::text)).

CREATE FUNCTION @extschema@.okno_outbox_bucket(order_key text)
RETURNS integer
AS 'MODULE_PATHNAME', 'okno_outbox_bucket'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.okno_outbox_bucket(text) IS
'the outbox bucket (0 to 1023) of an order key: where Citus distributes outbox by bucket, an event''s is that of COALESCE(its order key, its id as text)';

-- Delivery.  The default subscriber keeps its delivery state in the
-- application's outbox itself; every other subscriber has its own:
-- okno_drain with a subscriber copies the events committed since its last
-- look (judged by the transaction that wrote them, outbox.created_xid,
-- against the snapshot it took then, as PgQ's consumers read their
-- batches), hands out at once those that nothing holds back, and keeps a
-- row of okno_delivery for each of the others (and for those that fail
-- later), from which it hands them out.

-- okno_delivery is here, not with okno's other tables below:
-- okno_record_failure(event_id, error, subscriber) returns its row type.
CREATE TABLE @extschema@.okno_delivery (
    subscriber text NOT NULL,
    event_id uuid NOT NULL,
    order_key text,             -- the event's order key
    first boolean NOT NULL,     -- a booking_created event (first of its booking)
    delivered_at timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    available_at timestamptz,
    parked_at timestamptz,
    -- outbox's bucket of the event where Citus distributes outbox by
    -- bucket (okno_distribute_own_tables() lays this table out with it),
    -- 0 on one server
    bucket integer NOT NULL DEFAULT 0,
    CONSTRAINT okno_delivery_pkey PRIMARY KEY (subscriber, event_id, bucket),
    CONSTRAINT okno_delivery_attempts_check CHECK (attempts OPERATOR(pg_catalog.>=) 0)
);
-- the same partial indexes as outbox's, per subscriber: delivered rows
-- leave them
CREATE INDEX okno_delivery_pending ON @extschema@.okno_delivery (subscriber, event_id) INCLUDE (available_at)
    WHERE delivered_at IS NULL AND parked_at IS NULL;
CREATE INDEX okno_delivery_parked ON @extschema@.okno_delivery (subscriber, event_id)
    WHERE parked_at IS NOT NULL AND delivered_at IS NULL;
CREATE INDEX okno_delivery_order ON @extschema@.okno_delivery (subscriber, order_key, event_id)
    WHERE delivered_at IS NULL;
COMMENT ON TABLE @extschema@.okno_delivery IS
'each subscriber''s delivery state of the copied events it was not handed at once: pending, held back, retried, parked, or delivered since';

CREATE FUNCTION @extschema@.okno_drain_once()
RETURNS TABLE (event_id uuid, kind text, payload jsonb)
AS 'MODULE_PATHNAME', 'okno_drain_once_0_2'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_drain_once() IS
'hand one due outbox event to the caller and mark it delivered, in the caller''s transaction';

CREATE FUNCTION @extschema@.okno_drain_once(subscriber text)
RETURNS TABLE (event_id uuid, kind text, payload jsonb)
AS 'MODULE_PATHNAME', 'okno_drain_once_0_2'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_drain_once(text) IS
'hand one event due for a subscriber to the caller and mark it delivered for it, in the caller''s transaction';

CREATE FUNCTION @extschema@.okno_drain(max_events integer DEFAULT 100)
RETURNS TABLE (event_id uuid, kind text, payload jsonb, attempts integer)
AS 'MODULE_PATHNAME', 'okno_drain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION @extschema@.okno_drain(integer) IS
'hand up to max_events due outbox events to the caller, in id order, and mark them delivered, in the caller''s transaction';

CREATE FUNCTION @extschema@.okno_drain(max_events integer, subscriber text)
RETURNS TABLE (event_id uuid, kind text, payload jsonb, attempts integer)
AS 'MODULE_PATHNAME', 'okno_drain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION @extschema@.okno_drain(integer, text) IS
'hand up to max_events events due for a subscriber to the caller, in id order, and mark them delivered for it, in the caller''s transaction';

-- The event's row as OUT parameters: the columns okno keeps, not the row
-- type of the application's outbox, to which nothing of okno's refers
CREATE FUNCTION @extschema@.okno_record_failure(event_id uuid, error text,
    OUT id uuid, OUT kind text, OUT payload jsonb, OUT created_at timestamptz,
    OUT delivered_at timestamptz, OUT attempts integer, OUT last_error text,
    OUT available_at timestamptz, OUT parked_at timestamptz, OUT created_xid xid8)
RETURNS record
AS 'MODULE_PATHNAME', 'okno_record_failure_0_6'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_record_failure(uuid, text) IS
'record a failed delivery: pending again after a backoff, or parked after okno.max_attempts; returns the event''s row';

CREATE FUNCTION @extschema@.okno_record_failure(event_id uuid, error text, subscriber text)
RETURNS @extschema@.okno_delivery
AS 'MODULE_PATHNAME', 'okno_record_failure'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_record_failure(uuid, text, text) IS
'record a failed delivery to a subscriber: pending again after a backoff, or parked; returns its delivery state';

CREATE FUNCTION @extschema@.okno_release(event_id uuid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_release'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_release(uuid) IS
'hand a drained event back undelivered, without counting an attempt; false if unknown or not delivered';

CREATE FUNCTION @extschema@.okno_release(event_id uuid, subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_release'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_release(uuid, text) IS
'hand an event drained for a subscriber back undelivered, without counting an attempt; false if not delivered to it';

CREATE FUNCTION @extschema@.okno_requeue(event_id uuid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_requeue'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_requeue(uuid) IS
'unpark an event: attempts reset, available now; false if unknown or delivered';

CREATE FUNCTION @extschema@.okno_requeue(event_id uuid, subscriber text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'okno_requeue'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_requeue(uuid, text) IS
'unpark an event for a subscriber: attempts reset, available now; false if it has no undelivered copy';

-- A relay waits inside the server for the next event (a procedure: it
-- ends the check's transaction, so no snapshot stays while it waits)
CREATE PROCEDURE @extschema@.okno_wait(timeout_ms integer, INOUT woken boolean DEFAULT NULL)
AS 'MODULE_PATHNAME', 'okno_wait'
LANGUAGE C;

COMMENT ON PROCEDURE @extschema@.okno_wait(integer, boolean) IS
'wait up to timeout_ms for an outbox event to be due; woken is true when one may be, false at the timeout';

CREATE PROCEDURE @extschema@.okno_wait(timeout_ms integer, INOUT woken boolean, subscriber text)
AS 'MODULE_PATHNAME', 'okno_wait'
LANGUAGE C;

COMMENT ON PROCEDURE @extschema@.okno_wait(integer, boolean, text) IS
'wait up to timeout_ms for an event to be due for a subscriber: CALL okno_wait(ms, NULL, subscriber); woken is true when one may be, false at the timeout';

-- Subscribers (their tables: okno_subscriber below, okno_delivery above)

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

-- Dead letters.  A parked event is requeued, or given up on purpose:
-- okno_discard keeps a record of what was discarded, by whom and when
-- (okno_verify checks it), and the event counts as done.

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

-- Maintenance.  okno_create_tables() creates those of the application's
-- five tables that are missing, as the course defines them with what okno
-- needs besides, owned by the caller, and prepares the others;
-- okno_prepare_tables() adds to existing tables (a course database's) what
-- okno needs and they lack, as their owner (columns with constant
-- defaults, no table rewritten; okno's partial indexes on outbox).  Both
-- are SECURITY INVOKER: they run with the caller's rights, never the
-- extension's, and return one line per change made.

CREATE FUNCTION @extschema@.okno_create_tables()
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'okno_create_tables'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_create_tables() IS
'create the application''s tables okno serves that are missing, owned by the caller, and prepare the others';

CREATE FUNCTION @extschema@.okno_prepare_tables()
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'okno_prepare_tables'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.okno_prepare_tables() IS
'add to the application''s tables what okno needs and they lack (columns, okno''s indexes on outbox), as their owner';

-- okno_distribute_tables() lays the five tables out on a Citus cluster,
-- on the coordinator, as README's "Scaling out with Citus" shows:
-- actors and resources reference tables, bookings distributed by
-- resource_id (its primary key becomes (resource_id, id)), idempotency by
-- actor_id, outbox by bucket, a function of the event's order key, so that
-- one key's events lie in one shard (outbox gets the integer column bucket
-- where it lacks it, each row its bucket, and its primary key (id) becomes
-- (bucket, id)).  PL/pgSQL, SECURITY INVOKER like the two above: Citus's
-- functions and the ALTER TABLEs run with the caller's rights, in the
-- caller's transaction.  It checks every table first and changes nothing
-- while one cannot be laid out; a table already laid out so is left as it
-- is.  okno's own tables stay each node's own.
CREATE FUNCTION @extschema@.okno_distribute_tables()
RETURNS TABLE (table_name text, layout text, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $okno$
#variable_conflict use_column
DECLARE
    -- the five tables in the order they are laid out, and the column each
    -- is distributed by (NULL: a reference table)
    names pg_catalog.text[] := ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'];
    -- >>> the outbox's distribution column: this line is the only place
    -- that names it (outbox's checks and its step below take it from here)
    columns pg_catalog.text[] := ARRAY[NULL, NULL, 'resource_id', 'actor_id', 'bucket'];
    -- <<<
    schema_oid pg_catalog.oid;
    schema_name pg_catalog.text;
    rels pg_catalog.oid[] := '{}';
    wants pg_catalog.text[] := '{}';
    todo pg_catalog.bool[] := '{}';
    missing pg_catalog.text[] := '{}';
    problems pg_catalog.text[] := '{}';
    fkey_tables pg_catalog.text[] := '{}';   -- the foreign keys dropped and added again:
    fkey_names pg_catalog.text[] := '{}';    -- table, name and definition
    fkey_defs pg_catalog.text[] := '{}';
    rel pg_catalog.oid;
    qname pg_catalog.text;
    cur pg_catalog.text;
    want pg_catalog.text;
    kind "char";
    pkey_cols pg_catalog.text[];
    pkey_name pg_catalog.text;
    id_pkeys pg_catalog.text[] := '{}';      -- a table's primary key on (id) alone, by name,
                                             -- to become (its distribution column, id)
    has_bucket boolean;                      -- whether outbox has the column columns[5],
    bucket_unfit pg_catalog.text;            -- and what keeps that from serving
    bucket_expr pg_catalog.text;             -- an event's bucket, in SQL
    r record;
    i integer;
    any_todo boolean := false;
    mode pg_catalog.text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) 'citus') THEN
        RAISE EXCEPTION 'okno_distribute_tables() needs Citus'
            USING ERRCODE = '0A000',
                  DETAIL = pg_catalog.format('The extension citus is not installed in database %I.',
                                             pg_catalog.current_database()),
                  HINT = 'Load Citus on every node (shared_preload_libraries = citus), run CREATE EXTENSION citus '
                         'in this database on the coordinator and add the workers, then call okno_distribute_tables() there.';
    END IF;
    IF NOT pg_catalog.citus_is_coordinator() THEN
        RAISE EXCEPTION 'okno_distribute_tables() runs on the Citus coordinator only'
            USING ERRCODE = '0A000',
                  DETAIL = 'This node is not the coordinator of its Citus cluster: only the coordinator distributes tables.',
                  HINT = 'Connect to the coordinator and call okno_distribute_tables() there.';
    END IF;

    SELECT n.oid, n.nspname INTO schema_oid, schema_name
      FROM pg_catalog.pg_extension AS e
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
     WHERE e.extname OPERATOR(pg_catalog.=) 'okno';

    -- the tables, and what Citus has of each
    FOR i IN 1 .. 5 LOOP
        SELECT c.oid, c.relkind INTO rel, kind
          FROM pg_catalog.pg_class AS c
         WHERE c.relname OPERATOR(pg_catalog.=) names[i] AND c.relnamespace OPERATOR(pg_catalog.=) schema_oid;
        IF rel IS NULL THEN
            missing := missing || pg_catalog.format('%s: missing', names[i]);
        ELSIF kind NOT IN ('r', 'p') THEN
            missing := missing || pg_catalog.format('%s: not a table (relkind %s)', names[i], kind);
        END IF;
        rels := rels || rel;
        want := CASE WHEN columns[i] IS NULL THEN 'reference table'
                     ELSE pg_catalog.format('distributed by %s', columns[i]) END;
        wants := wants || want;
        SELECT CASE WHEN p.partmethod OPERATOR(pg_catalog.=) 'h'
                    THEN pg_catalog.format('distributed by %s',
                                           pg_catalog.column_to_column_name(p.logicalrelid, p.partkey))
                    WHEN p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.repmodel OPERATOR(pg_catalog.=) 't'
                    THEN 'reference table'
                    WHEN p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.colocationid OPERATOR(pg_catalog.=) 0
                    THEN 'a Citus local table'
                    WHEN p.partmethod OPERATOR(pg_catalog.=) 'n'
                    THEN 'a single-shard distributed table'
                    ELSE pg_catalog.format('distributed by %s (partition method %s)',
                                           pg_catalog.column_to_column_name(p.logicalrelid, p.partkey), p.partmethod)
               END INTO cur
          FROM pg_catalog.pg_dist_partition AS p
         WHERE p.logicalrelid OPERATOR(pg_catalog.=) rel;
        todo := todo || (rel IS NOT NULL AND cur IS NULL);
        IF rel IS NOT NULL AND cur IS NULL THEN
            any_todo := true;
        ELSIF cur IS NOT NULL AND cur OPERATOR(pg_catalog.<>) want THEN
            problems := problems || pg_catalog.format(
                '%s is %s, where okno''s layout has it %s; fix: SELECT undistribute_table(%L), then call okno_distribute_tables() again',
                names[i], CASE WHEN cur OPERATOR(pg_catalog.=) 'reference table' THEN 'a reference table' ELSE cur END,
                CASE WHEN columns[i] IS NULL THEN 'a ' || want ELSE want END,
                pg_catalog.format('%I.%I', schema_name, names[i]));
        END IF;
        cur := NULL;
        rel := NULL;
    END LOOP;

    IF pg_catalog.cardinality(missing) OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'okno''s tables in schema % cannot be distributed', pg_catalog.quote_ident(schema_name)
            USING ERRCODE = 'OKB10',
                  DETAIL = pg_catalog.array_to_string(missing, E'\n'),
                  HINT = 'Create the missing tables with SELECT okno_create_tables(), as the role that is to own them, '
                         'then call okno_distribute_tables() again.';
    END IF;

    -- outbox's column bucket, where it has one already, is a plain
    -- integer: okno writes each event's where Citus distributes outbox by
    -- it, and its rows' are written here before Citus copies them
    qname := pg_catalog.format('%I.%I', schema_name, names[5]);
    SELECT true,
           CASE WHEN a.attgenerated OPERATOR(pg_catalog.<>) '' THEN 'a generated column'
                WHEN a.attidentity OPERATOR(pg_catalog.<>) '' THEN 'an identity column'
                WHEN a.atttypid OPERATOR(pg_catalog.<>) 'pg_catalog.int4'::pg_catalog.regtype::pg_catalog.oid
                THEN pg_catalog.format('of type %s', pg_catalog.format_type(a.atttypid, a.atttypmod))
           END
      INTO has_bucket, bucket_unfit
      FROM pg_catalog.pg_attribute AS a
     WHERE a.attrelid OPERATOR(pg_catalog.=) rels[5] AND a.attname OPERATOR(pg_catalog.=) columns[5]
       AND NOT a.attisdropped;
    has_bucket := COALESCE(has_bucket, false);
    IF bucket_unfit IS NOT NULL THEN
        problems := problems || pg_catalog.format(
            'outbox''s column %s is %s, where okno''s layout has it a plain integer; fix: %sALTER TABLE %s DROP COLUMN %I (okno_distribute_tables() adds it)',
            columns[5], bucket_unfit,
            CASE WHEN todo[5] THEN '' ELSE pg_catalog.format('SELECT undistribute_table(%L), then ', qname) END,
            qname, columns[5]);
    END IF;

    -- what a table to be distributed must be: its unique constraints and
    -- indexes hold its distribution column (bookings' primary key (id)
    -- becomes (resource_id, id) here, outbox's (bucket, id)), its primary
    -- key is what okno's calls look rows up by, and no foreign key points
    -- at it; outbox has order_key, of which an event's bucket is a function
    FOR i IN 1 .. 5 LOOP
        CONTINUE WHEN NOT todo[i];
        qname := pg_catalog.format('%I.%I', schema_name, names[i]);
        -- the owner itself, not a role that may act as it: a superuser's
        -- call would otherwise run the owner's code as a superuser (a CHECK
        -- constraint's function, evaluated as Citus copies the rows into
        -- the shards)
        IF (SELECT c.relowner FROM pg_catalog.pg_class AS c
             WHERE c.oid OPERATOR(pg_catalog.=) rels[i])
           OPERATOR(pg_catalog.<>) (SELECT r.oid FROM pg_catalog.pg_roles AS r
                                     WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
            RAISE EXCEPTION 'okno_distribute_tables() must be called by the owner of table %', names[i]
                USING ERRCODE = '42501',
                      DETAIL = pg_catalog.format('Table %s is owned by role %s; okno_distribute_tables() runs with the caller''s rights (SECURITY INVOKER) and changes nothing until it may change every table it has to as their owner.',
                                                 qname, (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class AS c
                                                          WHERE c.oid OPERATOR(pg_catalog.=) rels[i])),
                      HINT = 'Call it as the owner of okno''s tables (SET ROLE to it first, as a superuser).';
        END IF;
        CONTINUE WHEN columns[i] IS NULL;
        SELECT pg_catalog.array_agg(a.attname::pg_catalog.text ORDER BY a.attname), k.conname
          INTO pkey_cols, pkey_name
          FROM pg_catalog.pg_constraint AS k
          JOIN pg_catalog.pg_attribute AS a
            ON a.attrelid OPERATOR(pg_catalog.=) k.conrelid AND a.attnum OPERATOR(pg_catalog.=) ANY (k.conkey)
         WHERE k.conrelid OPERATOR(pg_catalog.=) rels[i] AND k.contype OPERATOR(pg_catalog.=) 'p'
         GROUP BY k.conname;
        IF pkey_cols OPERATOR(pg_catalog.=) ARRAY['id'] THEN
            id_pkeys[i] := pkey_name;
        END IF;
        IF names[i] OPERATOR(pg_catalog.=) 'bookings'
           AND (pkey_cols IS NULL OR pkey_cols NOT IN (ARRAY['id'], ARRAY['id', 'resource_id'])) THEN
            problems := problems || pg_catalog.format(
                'bookings'' primary key is %s, neither (id) nor (resource_id, id); fix: ALTER TABLE %s DROP CONSTRAINT ..., ADD PRIMARY KEY (resource_id, id)',
                COALESCE('(' || pg_catalog.array_to_string(pkey_cols, ', ') || ')', 'missing'), qname);
        ELSIF names[i] OPERATOR(pg_catalog.=) 'idempotency'
           AND (pkey_cols IS NULL OR pkey_cols OPERATOR(pg_catalog.<>) ARRAY['actor_id', 'request_key']) THEN
            problems := problems || pg_catalog.format(
                'idempotency''s primary key is %s, not (actor_id, request_key); fix: ALTER TABLE %s DROP CONSTRAINT ..., ADD PRIMARY KEY (actor_id, request_key)',
                COALESCE('(' || pg_catalog.array_to_string(pkey_cols, ', ') || ')', 'missing'), qname);
        ELSIF names[i] OPERATOR(pg_catalog.=) 'outbox' THEN
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                            WHERE a.attrelid OPERATOR(pg_catalog.=) rels[i]
                              AND a.attname OPERATOR(pg_catalog.=) 'order_key' AND NOT a.attisdropped) THEN
                problems := problems || pg_catalog.format(
                    'outbox has no column order_key (tables prepared for okno 0.7.0 or later have it), of which an event''s %s is a function; fix: SELECT * FROM okno_prepare_tables()',
                    columns[i]);
            END IF;
            -- (pkey_cols is in name order: either order of the two)
            IF pkey_cols IS NULL OR pkey_cols NOT IN (ARRAY['id'], ARRAY[columns[i], 'id'], ARRAY['id', columns[i]]) THEN
                problems := problems || pg_catalog.format(
                    'outbox''s primary key is %s, neither (id) nor (%s, id); fix: ALTER TABLE %s DROP CONSTRAINT ..., ADD PRIMARY KEY (id)',
                    COALESCE('(' || pg_catalog.array_to_string(pkey_cols, ', ') || ')', 'missing'), columns[i], qname);
            END IF;
        END IF;
        -- every other unique or exclusion index holds the distribution
        -- column (the primary keys of bookings and outbox are checked above,
        -- and made to hold it below)
        FOR r IN
            SELECT x.indexrelid::pg_catalog.regclass::pg_catalog.text AS index_name
              FROM pg_catalog.pg_index AS x
             WHERE x.indrelid OPERATOR(pg_catalog.=) rels[i]
               AND (x.indisunique OR x.indisexclusion)
               AND NOT (names[i] OPERATOR(pg_catalog.=) ANY (ARRAY['bookings', 'outbox']) AND x.indisprimary)
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                                WHERE a.attrelid OPERATOR(pg_catalog.=) rels[i]
                                  AND a.attname OPERATOR(pg_catalog.=) columns[i]
                                  AND a.attnum OPERATOR(pg_catalog.=) ANY (x.indkey::pg_catalog.int2[]))
             ORDER BY 1
        LOOP
            problems := problems || pg_catalog.format(
                '%s: the unique index %s does not hold %s, the column it is distributed by; fix: drop it, or add %s to it',
                names[i], r.index_name, columns[i], columns[i]);
        END LOOP;
    END LOOP;

    -- foreign keys: those between the five are dropped and added again
    -- after; one from another table onto a table to be distributed, or
    -- from a table to be laid out onto a table Citus does not have, is
    -- refused (Citus keeps neither)
    FOR r IN
        SELECT k.conname::pg_catalog.text AS conname, k.conrelid, k.confrelid,
               k.conrelid::pg_catalog.regclass::pg_catalog.text AS from_table,
               k.confrelid::pg_catalog.regclass::pg_catalog.text AS to_table,
               pg_catalog.pg_get_constraintdef(k.oid) AS definition
          FROM pg_catalog.pg_constraint AS k
         WHERE k.contype OPERATOR(pg_catalog.=) 'f'
           AND (k.conrelid OPERATOR(pg_catalog.=) ANY (rels) OR k.confrelid OPERATOR(pg_catalog.=) ANY (rels))
         ORDER BY k.conrelid, k.conname
    LOOP
        IF r.conrelid OPERATOR(pg_catalog.=) ANY (rels[1:2]) AND r.confrelid OPERATOR(pg_catalog.=) ANY (rels[1:2]) THEN
            CONTINUE;                        -- between reference tables: Citus keeps it
        ELSIF r.conrelid OPERATOR(pg_catalog.=) ANY (rels[3:5]) AND r.confrelid OPERATOR(pg_catalog.=) ANY (rels[1:2]) THEN
            -- onto actors or resources (bookings', idempotency's): dropped
            -- and added again where either side is to be laid out
            IF todo[pg_catalog.array_position(rels, r.conrelid)] OR todo[pg_catalog.array_position(rels, r.confrelid)] THEN
                fkey_tables := fkey_tables || r.from_table;
                fkey_names := fkey_names || r.conname;
                fkey_defs := fkey_defs || r.definition;
            END IF;
        ELSIF r.confrelid OPERATOR(pg_catalog.=) ANY (rels[3:5])
              AND todo[pg_catalog.array_position(rels, r.confrelid)] THEN
            problems := problems || pg_catalog.format(
                'the foreign key %s of %s references %s, which is to be distributed: Citus cannot keep it; fix: ALTER TABLE %s DROP CONSTRAINT %I',
                r.conname, r.from_table, r.to_table, r.from_table, r.conname);
        ELSIF r.conrelid OPERATOR(pg_catalog.=) ANY (rels) AND todo[pg_catalog.array_position(rels, r.conrelid)]
              AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition AS p
                               WHERE p.logicalrelid OPERATOR(pg_catalog.=) r.confrelid
                                 AND p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.repmodel OPERATOR(pg_catalog.=) 't') THEN
            problems := problems || pg_catalog.format(
                'the foreign key %s of %s references %s, which is not a reference table: Citus cannot keep it; fix: ALTER TABLE %s DROP CONSTRAINT %I',
                r.conname, r.from_table, r.to_table, r.from_table, r.conname);
        ELSIF r.confrelid OPERATOR(pg_catalog.=) ANY (rels[1:2]) AND todo[pg_catalog.array_position(rels, r.confrelid)]
              AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition AS p
                               WHERE p.logicalrelid OPERATOR(pg_catalog.=) r.conrelid) THEN
            problems := problems || pg_catalog.format(
                'the foreign key %s of %s references %s, which is to be a reference table: Citus would add %s to its metadata; fix: distribute %s first, or ALTER TABLE %s DROP CONSTRAINT %I',
                r.conname, r.from_table, r.to_table, r.from_table, r.from_table, r.from_table, r.conname);
        END IF;
    END LOOP;

    IF pg_catalog.cardinality(problems) OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'okno''s tables in schema % cannot be distributed as they are', pg_catalog.quote_ident(schema_name)
            USING ERRCODE = '55000',
                  DETAIL = pg_catalog.array_to_string(problems, E'\n'),
                  HINT = 'Change the tables as listed, as their owner, then call okno_distribute_tables() again: it changed nothing.';
    END IF;

    IF any_todo THEN
        -- Citus adds a foreign key onto a reference table only where the
        -- transaction made no parallel connections to the shards: all of it
        -- over one connection per node (sequential mode), the caller's
        -- setting back at the end
        mode := pg_catalog.current_setting('citus.multi_shard_modify_mode');
        PERFORM pg_catalog.set_config('citus.multi_shard_modify_mode', 'sequential', true);
        -- the foreign keys go first and come back last: with them, making
        -- actors and resources reference tables would add bookings and
        -- idempotency to Citus's metadata as local tables, which Citus then
        -- cannot distribute (an identity column)
        FOR i IN 1 .. pg_catalog.cardinality(fkey_names) LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s DROP CONSTRAINT %I', fkey_tables[i], fkey_names[i]);
        END LOOP;
        -- >>> the outbox's column columns[5], bucket, a function of the
        -- event's order key (its id as text for an event without one), so
        -- that one key's events lie in one shard: added where it is
        -- missing, and every row's bucket written before Citus copies the
        -- rows (okno writes it on its inserts from then on)
        IF todo[5] THEN
            IF NOT has_bucket THEN
                EXECUTE pg_catalog.format('ALTER TABLE %I.outbox ADD COLUMN %I integer', schema_name, columns[5]);
            END IF;
            -- okno_outbox_bucket(COALESCE(order key, id::text)), the order
            -- key as okno's index outbox_order_key has it
            bucket_expr := pg_catalog.format(
                '%I.okno_outbox_bucket(COALESCE(CASE WHEN kind OPERATOR(pg_catalog.=) ''booking_created'' '
                'OR kind OPERATOR(pg_catalog.=) ''booking_cancelled'' THEN payload OPERATOR(pg_catalog.->>) ''booking_id'' '
                'ELSE order_key END, id::pg_catalog.text))',
                schema_name);
            EXECUTE pg_catalog.format('UPDATE %I.outbox SET %I = %s WHERE %I IS DISTINCT FROM %s',
                                      schema_name, columns[5], bucket_expr, columns[5], bucket_expr);
            EXECUTE pg_catalog.format('ALTER TABLE %I.outbox ALTER COLUMN %I SET NOT NULL', schema_name, columns[5]);
        END IF;
        -- <<<
        -- a distributed table's unique constraints hold its distribution
        -- column: bookings' and outbox's primary key (id) becomes
        -- (resource_id, id) and (bucket, id), under its own name
        FOR i IN 1 .. 5 LOOP
            IF todo[i] AND id_pkeys[i] IS NOT NULL THEN
                EXECUTE pg_catalog.format('ALTER TABLE %I.%I DROP CONSTRAINT %I, ADD CONSTRAINT %I PRIMARY KEY (%I, id)',
                                          schema_name, names[i], id_pkeys[i], id_pkeys[i], columns[i]);
            END IF;
        END LOOP;
        IF todo[1] THEN
            PERFORM pg_catalog.create_reference_table(rels[1]::pg_catalog.regclass);
        END IF;
        IF todo[2] THEN
            PERFORM pg_catalog.create_reference_table(rels[2]::pg_catalog.regclass);
        END IF;
        IF todo[3] THEN
            PERFORM pg_catalog.create_distributed_table(rels[3]::pg_catalog.regclass, columns[3]);
        END IF;
        -- idempotency in a colocation group of its own: its shards hold
        -- actors' keys, bookings' hold resources' bookings; no statement
        -- joins the two on their distribution columns, so Citus need not
        -- keep equal hash ranges on one node (and can move each alone)
        IF todo[4] THEN
            PERFORM pg_catalog.create_distributed_table(rels[4]::pg_catalog.regclass, columns[4],
                                                        colocate_with => 'none');
        END IF;
        -- >>> the outbox: distributed by columns[5], bucket, in a colocation
        -- group of its own, as idempotency's: no statement joins outbox to
        -- another table on its bucket
        IF todo[5] THEN
            PERFORM pg_catalog.create_distributed_table(rels[5]::pg_catalog.regclass, columns[5],
                                                        colocate_with => 'none');
        END IF;
        -- <<<
        -- one constraint per ALTER TABLE: Citus adds a foreign key only alone
        FOR i IN 1 .. pg_catalog.cardinality(fkey_names) LOOP
            EXECUTE pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT %I %s', fkey_tables[i], fkey_names[i], fkey_defs[i]);
        END LOOP;
        -- Citus copied each table's rows into its shards and left them in
        -- the table itself, unseen: removed, so that no stale copy stays on
        -- the coordinator's disk (the five are distributed now, so the
        -- truncation's cascade along their foreign keys stays among them)
        FOR i IN 1 .. 5 LOOP
            IF todo[i] THEN
                PERFORM pg_catalog.truncate_local_data_after_distributing_table(rels[i]::pg_catalog.regclass);
            END IF;
        END LOOP;
        PERFORM pg_catalog.set_config('citus.multi_shard_modify_mode', mode, true);
    END IF;

    FOR i IN 1 .. 5 LOOP
        table_name := names[i];
        layout := wants[i];
        action := CASE WHEN todo[i] THEN 'distributed' ELSE 'already' END;
        RETURN NEXT;
    END LOOP;
END
$okno$;

COMMENT ON FUNCTION @extschema@.okno_distribute_tables() IS
'lay the application''s tables out on a Citus cluster, on the coordinator: actors and resources reference tables, bookings distributed by resource_id, idempotency by actor_id, outbox by bucket, a function of the event''s order key, so that one key''s events lie in one shard';

-- okno_distribute_own_tables() lays okno's own tables out on a Citus
-- cluster, on the coordinator: okno_key distributed by request_key,
-- okno_key_tombstone a reference table (a copy on every node: every new
-- request reads it, on the node it runs on), so that an operation's key
-- and a key's tombstone are the cluster's instead of each node's (okno's
-- lock of a key excludes requests on its own node only; the key's row in
-- its shard is then the arbiter), okno_purge_horizon a reference table
-- too (okno_purge records it, okno_verify reads it, on any node), and the
-- named subscribers' tables: okno_subscriber a reference table (every
-- writer reads it on its node), okno_delivery distributed by bucket with
-- outbox (an event's rows of delivery state in its shard), which needs
-- outbox distributed by bucket first (okno_distribute_tables()) and no
-- named subscriber yet (a subscriber of one server keeps a snapshot of
-- its copy, which means nothing on a cluster).  PL/pgSQL, SECURITY
-- INVOKER: Citus distributes a table as its owner, and these are okno's,
-- owned by the superuser that installed okno, so a superuser (or that
-- owner) calls it; it touches okno's objects only.  A table already
-- distributed so is left as it is.  okno_discarded stays each node's own.
CREATE FUNCTION @extschema@.okno_distribute_own_tables()
RETURNS TABLE (table_name text, layout text, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $okno$
#variable_conflict use_column
DECLARE
    names pg_catalog.text[] := ARRAY['okno_key', 'okno_key_tombstone', 'okno_purge_horizon',
                                     'okno_subscriber', 'okno_delivery'];
    -- the column each is distributed by (NULL: a reference table), and the
    -- table it is colocated with (NULL: none)
    columns pg_catalog.text[] := ARRAY['request_key', NULL, NULL, NULL, 'bucket'];
    colocated pg_catalog.text[] := ARRAY[NULL, NULL, NULL, NULL, 'outbox'];
    outbox_layout pg_catalog.text;
    want pg_catalog.text;
    schema_oid pg_catalog.oid;
    schema_name pg_catalog.text;
    rels pg_catalog.oid[] := '{}';
    todo pg_catalog.bool[] := '{}';
    problems pg_catalog.text[] := '{}';
    rel pg_catalog.oid;
    owner pg_catalog.oid;
    cur pg_catalog.text;
    mode pg_catalog.text;
    i integer;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) 'citus') THEN
        RAISE EXCEPTION 'okno_distribute_own_tables() needs Citus'
            USING ERRCODE = '0A000',
                  DETAIL = pg_catalog.format('The extension citus is not installed in database %I.',
                                             pg_catalog.current_database()),
                  HINT = 'Load Citus on every node (shared_preload_libraries = citus), run CREATE EXTENSION citus '
                         'in this database on the coordinator and add the workers, then call okno_distribute_own_tables() there.';
    END IF;
    IF NOT pg_catalog.citus_is_coordinator() THEN
        RAISE EXCEPTION 'okno_distribute_own_tables() runs on the Citus coordinator only'
            USING ERRCODE = '0A000',
                  DETAIL = 'This node is not the coordinator of its Citus cluster: only the coordinator distributes tables.',
                  HINT = 'Connect to the coordinator and call okno_distribute_own_tables() there.';
    END IF;

    SELECT n.oid, n.nspname INTO schema_oid, schema_name
      FROM pg_catalog.pg_extension AS e
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
     WHERE e.extname OPERATOR(pg_catalog.=) 'okno';

    FOR i IN 1 .. pg_catalog.cardinality(names) LOOP
        SELECT c.oid, c.relowner INTO rel, owner
          FROM pg_catalog.pg_class AS c
         WHERE c.relname OPERATOR(pg_catalog.=) names[i] AND c.relnamespace OPERATOR(pg_catalog.=) schema_oid;
        IF rel IS NULL THEN
            RAISE EXCEPTION 'okno''s table %.% does not exist', pg_catalog.quote_ident(schema_name), names[i]
                USING ERRCODE = '55000',
                      HINT = 'Update okno to its current version with ALTER EXTENSION okno UPDATE.';
        END IF;
        -- okno's tables belong to the superuser that installed okno: a role
        -- that is neither it nor a superuser may not change them
        IF owner OPERATOR(pg_catalog.<>) (SELECT r.oid FROM pg_catalog.pg_roles AS r
                                           WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
           AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r
                     WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
            RAISE EXCEPTION 'okno_distribute_own_tables() must be called by a superuser'
                USING ERRCODE = '42501',
                      DETAIL = pg_catalog.format('okno''s table %s is owned by role %s, which installed okno; '
                                                 'Citus distributes a table as its owner.',
                                                 names[i], pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(owner))),
                      HINT = pg_catalog.format('Connect as %s and call okno_distribute_own_tables() again.',
                                               pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(owner)));
        END IF;
        rels := rels || rel;
        SELECT CASE WHEN p.partmethod OPERATOR(pg_catalog.=) 'h'
                    THEN pg_catalog.format('distributed by %s',
                                           pg_catalog.column_to_column_name(p.logicalrelid, p.partkey))
                    WHEN p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.repmodel OPERATOR(pg_catalog.=) 't'
                    THEN 'a reference table'
                    ELSE pg_catalog.format('a Citus table of partition method %s', p.partmethod)
               END INTO cur
          FROM pg_catalog.pg_dist_partition AS p
         WHERE p.logicalrelid OPERATOR(pg_catalog.=) rel;
        todo := todo || (cur IS NULL);
        want := CASE WHEN columns[i] IS NULL THEN 'a reference table'
                     ELSE pg_catalog.format('distributed by %s', columns[i]) END;
        IF cur IS NOT NULL AND cur OPERATOR(pg_catalog.<>) want THEN
            problems := problems || pg_catalog.format(
                '%s is %s, where okno''s layout has it %s; fix: SELECT undistribute_table(%L), then call okno_distribute_own_tables() again',
                names[i], cur, want, pg_catalog.format('%I.%I', schema_name, names[i]));
        END IF;
        cur := NULL;
        rel := NULL;
    END LOOP;
    -- okno_delivery goes with outbox: an event's rows in its shard
    IF todo[5] THEN
        SELECT pg_catalog.column_to_column_name(p.logicalrelid, p.partkey) INTO outbox_layout
          FROM pg_catalog.pg_class AS c
          JOIN pg_catalog.pg_dist_partition AS p ON p.logicalrelid OPERATOR(pg_catalog.=) c.oid
         WHERE c.relname OPERATOR(pg_catalog.=) 'outbox' AND c.relnamespace OPERATOR(pg_catalog.=) schema_oid
           AND p.partmethod OPERATOR(pg_catalog.=) 'h';
        IF outbox_layout IS DISTINCT FROM 'bucket' THEN
            problems := problems || pg_catalog.format(
                'okno_delivery is distributed with outbox, by bucket, and %s.outbox is not distributed by bucket; fix: SELECT * FROM okno_distribute_tables() as outbox''s owner, then call okno_distribute_own_tables() again',
                pg_catalog.quote_ident(schema_name));
        END IF;
    END IF;
    IF todo[4] AND EXISTS (SELECT FROM @extschema@.okno_subscriber) THEN
        problems := problems || pg_catalog.format(
            'okno_subscriber has the subscribers %s, whose delivery state is one server''s (a snapshot of what each copied); fix: drain them, okno_unsubscribe() each, then call okno_distribute_own_tables() again and okno_subscribe() them',
            (SELECT pg_catalog.string_agg(u.name, ', ' ORDER BY u.name) FROM @extschema@.okno_subscriber AS u));
    ELSIF todo[5] AND EXISTS (SELECT FROM @extschema@.okno_delivery) THEN
        problems := problems || 'okno_delivery has rows of subscribers that are gone; fix: TRUNCATE okno_delivery, then call okno_distribute_own_tables() again';
    END IF;
    IF pg_catalog.cardinality(problems) OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'okno''s own tables in schema % cannot be distributed', pg_catalog.quote_ident(schema_name)
            USING ERRCODE = '55000',
                  DETAIL = pg_catalog.array_to_string(problems, E'\n'),
                  HINT = 'Change the tables as listed, then call okno_distribute_own_tables() again: it changed nothing.';
    END IF;

    IF true = ANY (todo) THEN
        -- the rows copied into the shards in the caller's transaction, over
        -- one connection per node, as okno_distribute_tables() does
        mode := pg_catalog.current_setting('citus.multi_shard_modify_mode');
        PERFORM pg_catalog.set_config('citus.multi_shard_modify_mode', 'sequential', true);
        FOR i IN 1 .. pg_catalog.cardinality(names) LOOP
            CONTINUE WHEN NOT todo[i];
            IF columns[i] IS NULL THEN
                PERFORM pg_catalog.create_reference_table(rels[i]::pg_catalog.regclass);
            ELSE
                PERFORM pg_catalog.create_distributed_table(rels[i]::pg_catalog.regclass, columns[i],
                                                            colocate_with => CASE WHEN colocated[i] IS NULL THEN 'none'
                                                                ELSE pg_catalog.format('%I.%I', schema_name, colocated[i]) END);
            END IF;
            PERFORM pg_catalog.truncate_local_data_after_distributing_table(rels[i]::pg_catalog.regclass);
        END LOOP;
        PERFORM pg_catalog.set_config('citus.multi_shard_modify_mode', mode, true);
    END IF;

    FOR i IN 1 .. pg_catalog.cardinality(names) LOOP
        table_name := names[i];
        layout := CASE WHEN columns[i] IS NULL THEN 'reference table'
                       ELSE pg_catalog.format('distributed by %s', columns[i]) END;
        action := CASE WHEN todo[i] THEN 'distributed' ELSE 'already' END;
        RETURN NEXT;
    END LOOP;
END
$okno$;

COMMENT ON FUNCTION @extschema@.okno_distribute_own_tables() IS
'lay okno''s own tables out on a Citus cluster, on the coordinator, as a superuser: okno_key distributed by request_key, okno_delivery by bucket with outbox, okno_key_tombstone, okno_purge_horizon and okno_subscriber reference tables, so that operations'' keys, tombstones, the purge horizon and named subscribers are the cluster''s';

CREATE FUNCTION @extschema@.okno_purge(keys_older_than interval, delivered_older_than interval)
RETURNS TABLE (keys_deleted bigint, events_deleted bigint)
AS 'MODULE_PATHNAME', 'okno_purge_0_7'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION @extschema@.okno_purge(interval, interval) IS
'delete idempotency keys (leaving tombstones) and delivered events older than the given ages, in batches; never events a subscriber still needs';

-- okno's invariants, in C: it reads the application's tables as okno's
-- calls do
CREATE FUNCTION @extschema@.okno_verify()
RETURNS TABLE (problem text, detail text)
AS 'MODULE_PATHNAME', 'okno_verify_0_7'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.okno_verify() IS
'okno''s invariants: one row per problem found, none when the data is consistent';

-- The rows of the views okno_outbox_status and okno_subscribers (below),
-- in C: they read the application's outbox as okno's calls do
CREATE FUNCTION @extschema@.okno_outbox_counts(OUT pending bigint, OUT due_now bigint,
    OUT delayed bigint, OUT parked bigint, OUT delivered bigint,
    OUT oldest_pending_age interval, OUT oldest_due_age interval, OUT held_back bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'okno_outbox_counts'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.okno_outbox_counts() IS
'the counts of okno_outbox_status';

CREATE FUNCTION @extschema@.okno_subscriber_counts(OUT subscriber text,
    OUT subscribed_at timestamptz, OUT pending bigint, OUT due_now bigint,
    OUT delayed bigint, OUT parked bigint, OUT held_back bigint, OUT not_copied bigint,
    OUT oldest_pending_age interval, OUT copied_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'okno_subscriber_counts'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.okno_subscriber_counts() IS
'the rows of okno_subscribers';

-- Errors

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
      ('subscriber_missing', 'OKB09', 404, 'subscriber does not exist'),
      ('tables_unfit', 'OKB10', 500, 'okno''s tables cannot serve it'),
      ('key_expired', 'OKB11', 410, 'idempotency key has expired'),
      ('request_in_progress', 'OKB12', 409, 'a request with this idempotency key is in progress'),
      ('concurrent_request', '40001', 503, 'could not serialize access due to a concurrent request; retry the transaction')
    ) AS e(code, sqlstate, http_status, message)
   ORDER BY e.sqlstate;
END;

COMMENT ON FUNCTION @extschema@.okno_errors() IS
'okno''s errors: code, SQLSTATE, HTTP status and message, for an HTTP layer to map';

-- okno's own tables and sequence (okno_delivery is in Delivery above)

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

-- Subscribers besides the default one, and how far each has copied the
-- outbox (okno_subscribe, okno_unsubscribe; Delivery above)
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

-- Parked events given up on purpose (okno_discard)
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

-- okno_purge records how far back it has purged, so that okno_verify can
-- tell a key or event purged on purpose from one that is missing.  One row
-- at most, written by okno_purge.
CREATE TABLE @extschema@.okno_purge_horizon (
    singleton boolean NOT NULL DEFAULT true,
    keys_purged_before timestamptz,
    events_purged_before timestamptz,
    -- bookings created before this were written before okno served the
    -- tables (by the course's service): okno_verify does not ask them for
    -- a key or an event
    checked_since timestamptz,
    CONSTRAINT okno_purge_horizon_pkey PRIMARY KEY (singleton),
    CONSTRAINT okno_purge_horizon_singleton CHECK (singleton)
);
COMMENT ON TABLE @extschema@.okno_purge_horizon IS
'how far back okno_purge has deleted keys and delivered events, and since when okno_verify checks bookings';

-- Where the first due outbox event was when a drain last scanned the pending
-- index from its start: a fresh session's first drain starts there instead of
-- walking the index entries that delivered events leave behind until VACUUM.
-- Only a hint (never a bound): the high 64 bits of that event's id, sign bit
-- flipped so that bigint order is uuid order.  okno reads and writes it as
-- the sequence's owner; it is not dumped (a restored database starts
-- without a hint).
CREATE SEQUENCE @extschema@.okno_drain_hint AS bigint
    MINVALUE -9223372036854775808 START WITH -9223372036854775808 NO CYCLE;
COMMENT ON SEQUENCE @extschema@.okno_drain_hint IS
'where okno_drain''s last scan from the start found the first due event (a hint for new sessions)';

-- Views

-- The outbox at a glance.  Everything but "delivered" is counted exactly
-- from the partial indexes (undelivered events only), so the view costs the
-- same however many delivered rows the table holds; "delivered" is
-- estimated from the cumulative statistics' live-row count (a fraction of a
-- second to a few seconds behind).  pending = due_now + delayed +
-- held_back: held_back counts the events that wait for an earlier event of
-- their booking, whatever their own time.  A view over the C function
-- okno_outbox_counts(), which reads the application's outbox as okno's
-- calls do.
CREATE VIEW @extschema@.okno_outbox_status AS
SELECT c.pending, c.due_now, c.delayed, c.parked, c.delivered,
       c.oldest_pending_age, c.oldest_due_age, c.held_back
  FROM @extschema@.okno_outbox_counts() AS c;

COMMENT ON VIEW @extschema@.okno_outbox_status IS
'outbox counts: pending (due_now + delayed + held_back), parked, delivered (estimated), and the oldest waits';

-- Each subscriber at a glance, the default one first: what okno_outbox_status
-- counts for the default subscriber, for every subscriber.  not_copied
-- counts the events committed since its drains last looked (they are also
-- in pending and due_now).  A view over the C function
-- okno_subscriber_counts().
CREATE VIEW @extschema@.okno_subscribers AS
SELECT c.subscriber, c.subscribed_at, c.pending, c.due_now, c.delayed, c.parked,
       c.held_back, c.not_copied, c.oldest_pending_age, c.copied_at
  FROM @extschema@.okno_subscriber_counts() AS c;

COMMENT ON VIEW @extschema@.okno_subscribers IS
'each subscriber''s counts (the default one first): pending (due_now + delayed + held_back), parked, not yet copied, and the oldest wait';

-- Privileges.  The script runs as the bootstrap superuser (okno is
-- trusted), which owns okno's objects; the role that runs CREATE EXTENSION
-- (@extowner@) is granted, with the grant option, what a caller needs of
-- okno's own tables, sequence and views (docs/PRIVILEGES.md).

GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_delivery
    TO @extowner@ WITH GRANT OPTION;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_key
    TO @extowner@ WITH GRANT OPTION;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_key_tombstone
    TO @extowner@ WITH GRANT OPTION;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_subscriber
    TO @extowner@ WITH GRANT OPTION;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_discarded
    TO @extowner@ WITH GRANT OPTION;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE @extschema@.okno_purge_horizon
    TO @extowner@ WITH GRANT OPTION;
GRANT USAGE, SELECT, UPDATE ON SEQUENCE @extschema@.okno_drain_hint
    TO @extowner@ WITH GRANT OPTION;
GRANT SELECT ON @extschema@.okno_outbox_status TO @extowner@ WITH GRANT OPTION;
GRANT SELECT ON @extschema@.okno_subscribers TO @extowner@ WITH GRANT OPTION;

-- pg_dump dumps the rows of okno's own tables (not the sequence
-- okno_drain_hint: a restored database starts without a hint).  Keep the
-- order: it is pg_extension.extconfig's, and the update scripts add the
-- tables in the same order (the regress test upgrade compares the two).

SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_purge_horizon', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_discarded', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_subscriber', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_delivery', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_key', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.okno_key_tombstone', '');
