-- pgTAP: okno's schema as the contract names it (tables, columns,
-- constraints, indexes, function signatures and properties): okno's own
-- objects, and the application's tables as okno_create_tables() makes
-- them.  Runs in one transaction and rolls back.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE SCHEMA okno_tap;
CREATE EXTENSION okno SCHEMA okno_tap CASCADE;
DO $$ BEGIN PERFORM okno_tap.okno_create_tables(); END $$;

SELECT plan(430);

-- tables
SELECT tables_are('okno_tap', ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox', 'okno_purge_horizon', 'okno_discarded',
    'okno_subscriber', 'okno_delivery', 'okno_key', 'okno_key_tombstone']);
SELECT columns_are('okno_tap', 'okno_purge_horizon', ARRAY['singleton', 'keys_purged_before', 'events_purged_before', 'checked_since']);
SELECT col_is_pk('okno_tap', 'okno_purge_horizon', 'singleton', 'okno_purge_horizon has one row at most');

-- actors, resources
SELECT columns_are('okno_tap', 'actors', ARRAY['id', 'name']);
SELECT col_type_is('okno_tap', 'actors', 'id', 'integer', 'actors.id is integer');
SELECT col_is_pk('okno_tap', 'actors', 'id', 'actors.id is the primary key');
SELECT col_not_null('okno_tap', 'actors', 'name', 'actors.name is NOT NULL');
SELECT col_type_is('okno_tap', 'actors', 'name', 'text', 'actors.name is text');
SELECT columns_are('okno_tap', 'resources', ARRAY['id', 'name']);
SELECT col_type_is('okno_tap', 'resources', 'id', 'integer', 'resources.id is integer');
SELECT col_is_pk('okno_tap', 'resources', 'id', 'resources.id is the primary key');
SELECT col_not_null('okno_tap', 'resources', 'name', 'resources.name is NOT NULL');
SELECT is((SELECT attidentity FROM pg_attribute WHERE attrelid = 'okno_tap.actors'::regclass AND attname = 'id'),
          'd'::"char", 'actors.id is an identity column (by default)');
SELECT is((SELECT attidentity FROM pg_attribute WHERE attrelid = 'okno_tap.resources'::regclass AND attname = 'id'),
          'd'::"char", 'resources.id is an identity column (by default)');

-- bookings
SELECT columns_are('okno_tap', 'bookings',
    ARRAY['id', 'resource_id', 'actor_id', 'starts_at', 'ends_at', 'status', 'created_at']);
SELECT col_type_is('okno_tap', 'bookings', 'id', 'bigint', 'bookings.id is bigint');
SELECT col_is_pk('okno_tap', 'bookings', 'id', 'bookings.id is the primary key');
SELECT is((SELECT attidentity FROM pg_attribute WHERE attrelid = 'okno_tap.bookings'::regclass AND attname = 'id'),
          'a'::"char", 'bookings.id is an identity column (always)');
SELECT col_type_is('okno_tap', 'bookings', 'resource_id', 'integer', 'bookings.resource_id is integer');
SELECT col_type_is('okno_tap', 'bookings', 'actor_id', 'integer', 'bookings.actor_id is integer');
SELECT col_type_is('okno_tap', 'bookings', 'starts_at', 'timestamp with time zone', 'bookings.starts_at is timestamptz');
SELECT col_type_is('okno_tap', 'bookings', 'ends_at', 'timestamp with time zone', 'bookings.ends_at is timestamptz');
SELECT col_type_is('okno_tap', 'bookings', 'status', 'text', 'bookings.status is text');
SELECT col_type_is('okno_tap', 'bookings', 'created_at', 'timestamp with time zone', 'bookings.created_at is timestamptz');
SELECT col_not_null('okno_tap', 'bookings', c, 'bookings.' || c || ' is NOT NULL')
  FROM unnest(ARRAY['resource_id', 'actor_id', 'starts_at', 'ends_at', 'status', 'created_at']) AS c;
SELECT col_default_is('okno_tap', 'bookings', 'status', 'confirmed', 'bookings.status defaults to confirmed');
SELECT col_default_is('okno_tap', 'bookings', 'created_at', 'now()', 'bookings.created_at defaults to now()');
SELECT fk_ok('okno_tap', 'bookings', 'resource_id', 'okno_tap', 'resources', 'id');
SELECT fk_ok('okno_tap', 'bookings', 'actor_id', 'okno_tap', 'actors', 'id');
SELECT is((SELECT pg_get_constraintdef(oid) FROM pg_constraint
            WHERE conrelid = 'okno_tap.bookings'::regclass AND conname = 'bookings_no_overlap'),
          'EXCLUDE USING gist (resource_id WITH =, tstzrange(starts_at, ends_at) WITH &&) WHERE ((status = ''confirmed''::text))',
          'bookings_no_overlap excludes overlapping confirmed periods of a resource');
SELECT is((SELECT pg_get_constraintdef(oid) FROM pg_constraint
            WHERE conrelid = 'okno_tap.bookings'::regclass AND conname = 'bookings_check'),
          'CHECK ((starts_at < ends_at))', 'bookings: starts_at < ends_at');
SELECT is((SELECT pg_get_constraintdef(oid) FROM pg_constraint
            WHERE conrelid = 'okno_tap.bookings'::regclass AND conname = 'bookings_status_check'),
          'CHECK ((status = ANY (ARRAY[''confirmed''::text, ''cancelled''::text])))', 'bookings.status is confirmed or cancelled');

-- idempotency
SELECT columns_are('okno_tap', 'idempotency',
    ARRAY['actor_id', 'request_key', 'fingerprint', 'fingerprint_version', 'response_body', 'created_at']);
SELECT col_type_is('okno_tap', 'idempotency', 'actor_id', 'integer', 'idempotency.actor_id is integer');
SELECT col_type_is('okno_tap', 'idempotency', 'request_key', 'character varying(80)', 'idempotency.request_key is varchar(80)');
SELECT col_type_is('okno_tap', 'idempotency', 'fingerprint', 'character(64)', 'idempotency.fingerprint is char(64)');
SELECT col_type_is('okno_tap', 'idempotency', 'fingerprint_version', 'smallint', 'idempotency.fingerprint_version is smallint');
SELECT col_type_is('okno_tap', 'idempotency', 'response_body', 'jsonb', 'idempotency.response_body is jsonb');
SELECT col_type_is('okno_tap', 'idempotency', 'created_at', 'timestamp with time zone', 'idempotency.created_at is timestamptz');
SELECT col_not_null('okno_tap', 'idempotency', c, 'idempotency.' || c || ' is NOT NULL')
  FROM unnest(ARRAY['actor_id', 'request_key', 'fingerprint', 'fingerprint_version', 'response_body', 'created_at']) AS c;
SELECT col_default_is('okno_tap', 'idempotency', 'fingerprint_version', 0::smallint, 'fingerprint_version defaults to 0, the course''s form (okno writes its own)');
SELECT col_is_pk('okno_tap', 'idempotency', ARRAY['actor_id', 'request_key']::name[], 'idempotency''s primary key is (actor_id, request_key)');
SELECT fk_ok('okno_tap', 'idempotency', 'actor_id', 'okno_tap', 'actors', 'id');

-- outbox
SELECT columns_are('okno_tap', 'outbox',
    ARRAY['id', 'kind', 'payload', 'created_at', 'delivered_at', 'attempts', 'last_error', 'available_at', 'parked_at', 'created_xid',
          'order_key']);
SELECT col_type_is('okno_tap', 'outbox', 'order_key', 'text', 'outbox.order_key is text (0.7.0: okno_emit''s order keys)');
SELECT col_is_null('okno_tap', 'outbox', 'order_key', 'outbox.order_key may be NULL (no order)');
SELECT col_type_is('okno_tap', 'outbox', 'id', 'uuid', 'outbox.id is uuid');
SELECT col_is_pk('okno_tap', 'outbox', 'id', 'outbox.id is the primary key');
SELECT col_type_is('okno_tap', 'outbox', 'kind', 'character varying(40)', 'outbox.kind is varchar(40)');
SELECT col_type_is('okno_tap', 'outbox', 'payload', 'jsonb', 'outbox.payload is jsonb');
SELECT col_type_is('okno_tap', 'outbox', 'delivered_at', 'timestamp with time zone', 'outbox.delivered_at is timestamptz');
SELECT col_not_null('okno_tap', 'outbox', c, 'outbox.' || c || ' is NOT NULL')
  FROM unnest(ARRAY['kind', 'payload', 'created_at']) AS c;
SELECT col_is_null('okno_tap', 'outbox', c, 'outbox.' || c || ' is nullable')
  FROM unnest(ARRAY['delivered_at', 'last_error', 'available_at', 'parked_at']) AS c;
SELECT col_type_is('okno_tap', 'outbox', 'attempts', 'integer', 'outbox.attempts is integer');
SELECT col_not_null('okno_tap', 'outbox', 'attempts', 'outbox.attempts is NOT NULL');
SELECT col_default_is('okno_tap', 'outbox', 'attempts', 0, 'outbox.attempts defaults to 0');
SELECT col_type_is('okno_tap', 'outbox', 'last_error', 'text', 'outbox.last_error is text');
SELECT col_type_is('okno_tap', 'outbox', 'available_at', 'timestamp with time zone', 'outbox.available_at is timestamptz');
SELECT col_type_is('okno_tap', 'outbox', 'parked_at', 'timestamp with time zone', 'outbox.parked_at is timestamptz');
SELECT col_type_is('okno_tap', 'outbox', 'created_xid', 'xid8', 'outbox.created_xid is xid8');
SELECT col_is_null('okno_tap', 'outbox', 'created_xid', 'outbox.created_xid is nullable (the events from before 0.5.0 have none; the default drain clears it once every subscriber has copied the event)');
SELECT col_default_is('okno_tap', 'outbox', 'created_xid', 'pg_current_xact_id()', 'outbox.created_xid is the writing transaction''s');
SELECT is((SELECT pg_get_expr(indpred, indrelid) FROM pg_index WHERE indexrelid = 'okno_tap.outbox_pending'::regclass),
          '((delivered_at IS NULL) AND (parked_at IS NULL))', 'outbox_pending covers pending, unparked events only');
SELECT is((SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indexrelid = 'okno_tap.outbox_pending'::regclass),
          'CREATE INDEX outbox_pending ON okno_tap.outbox USING btree (id) INCLUDE (available_at) WHERE ((delivered_at IS NULL) AND (parked_at IS NULL))',
          'outbox_pending carries available_at');
SELECT is((SELECT pg_get_expr(indpred, indrelid) FROM pg_index WHERE indexrelid = 'okno_tap.outbox_parked'::regclass),
          '((parked_at IS NOT NULL) AND (delivered_at IS NULL))', 'outbox_parked covers parked events only');

-- indexes
SELECT indexes_are('okno_tap', 'bookings', ARRAY['bookings_pkey', 'bookings_no_overlap']);
SELECT indexes_are('okno_tap', 'idempotency', ARRAY['idempotency_pkey']);
SELECT indexes_are('okno_tap', 'outbox', ARRAY['outbox_pkey', 'outbox_pending', 'outbox_parked', 'outbox_order_key', 'outbox_later', 'outbox_created_xid']);
SELECT is((SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indexrelid = 'okno_tap.outbox_created_xid'::regclass),
          'CREATE INDEX outbox_created_xid ON okno_tap.outbox USING btree (created_xid) WHERE (created_xid IS NOT NULL)',
          'outbox_created_xid finds the events of the transactions a subscriber has not copied');
SELECT is((SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indexrelid = 'okno_tap.outbox_later'::regclass),
          'CREATE INDEX outbox_later ON okno_tap.outbox USING btree (id) WHERE ((delivered_at IS NULL) AND ((kind)::text <> ''booking_created''::text))',
          'outbox_later holds the undelivered events that are not a booking''s first');
SELECT is((SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indexrelid = 'okno_tap.outbox_order_key'::regclass),
          E'CREATE INDEX outbox_order_key ON okno_tap.outbox USING btree ((\nCASE\n    WHEN (((kind)::text = ''booking_created''::text) OR ((kind)::text = ''booking_cancelled''::text)) THEN (payload ->> ''booking_id''::text)\n    ELSE order_key\nEND), id) WHERE (delivered_at IS NULL)',
          'outbox_order_key finds the undelivered events of an order key (a booking''s id for its events)');
SELECT is((SELECT pg_get_constraintdef(oid) FROM pg_constraint
            WHERE conrelid = 'okno_tap.outbox'::regclass AND conname = 'outbox_attempts_check'),
          'CHECK ((attempts >= 0))', 'outbox.attempts is never negative');

-- pg_dump dumps the rows of okno's own tables as extension data; the
-- application's tables it dumps as the tables they are
SELECT set_eq(
    $$SELECT unnest(extconfig)::regclass::text FROM pg_extension WHERE extname = 'okno'$$,
    ARRAY['okno_tap.okno_purge_horizon', 'okno_tap.okno_discarded', 'okno_tap.okno_subscriber', 'okno_tap.okno_delivery',
          'okno_tap.okno_key', 'okno_tap.okno_key_tombstone'],
    'okno''s own tables are its configuration relations, and only they');
-- the application's tables belong to whoever created them, are no
-- members of the extension, and nothing of okno's refers to them
SELECT is((SELECT count(*)::int FROM pg_class c
            WHERE c.relnamespace = 'okno_tap'::regnamespace AND c.relkind IN ('r', 'S')
              AND c.relname IN ('actors', 'resources', 'bookings', 'idempotency', 'outbox',
                                'actors_id_seq', 'resources_id_seq', 'bookings_id_seq')
              AND c.relowner = current_user::regrole), 8, 'the application''s tables and sequences belong to the role that created them');
SELECT is((SELECT count(*)::int FROM pg_depend d JOIN pg_class c ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
            WHERE d.deptype = 'e' AND c.relname IN ('actors', 'resources', 'bookings', 'idempotency', 'outbox',
                                                    'actors_id_seq', 'resources_id_seq', 'bookings_id_seq')),
          0, 'the application''s tables are no members of the extension');
SELECT is((SELECT count(*)::int FROM pg_depend d
            JOIN pg_depend m ON m.classid = d.classid AND m.objid = d.objid AND m.deptype = 'e'
                            AND m.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno')
            JOIN pg_class c ON c.oid = d.refobjid AND d.refclassid = 'pg_class'::regclass
           WHERE c.relname IN ('actors', 'resources', 'bookings', 'idempotency', 'outbox')),
          0, 'nothing of okno''s depends on the application''s tables (a restore creates okno before them)');
SELECT is((SELECT count(*)::int FROM pg_constraint k
            WHERE k.contype = 'f' AND k.conrelid::regclass::text ~ '^okno_tap\.okno_'),
          0, 'okno''s own tables have no foreign keys');

-- functions: signatures, results, volatility, strictness, parallel safety
SELECT functions_are('okno_tap', ARRAY['okno_create_booking', 'okno_canonical', 'okno_fingerprint', 'okno_drain_once',
    'okno_drain', 'okno_record_failure', 'okno_release', 'okno_requeue', 'okno_get_booking', 'okno_cancel_booking', 'okno_purge',
    'okno_verify', 'okno_errors', 'okno_create_booking_result', 'okno_wait',
    'okno_requeue_parked', 'okno_discard', 'okno_subscribe', 'okno_unsubscribe',
    'okno_outbox_counts', 'okno_subscriber_counts', 'okno_create_tables', 'okno_prepare_tables',
    'okno_canonical_json', 'okno_idempotent', 'okno_idempotent_result', 'okno_key_claim', 'okno_key_store',
    'okno_emit', 'okno_distribute_tables', 'okno_distribute_own_tables', 'okno_outbox_bucket']);
CREATE TEMP TABLE fn (name name, args name[], result text, signature text, vol text, par text);
INSERT INTO fn VALUES
  ('okno_create_booking', ARRAY['integer', 'text', 'jsonb'], 'jsonb', 'actor integer, key text, payload jsonb', 'volatile', 'u'),
  ('okno_canonical', ARRAY['jsonb'], 'text', 'payload jsonb', 'immutable', 's'),
  ('okno_fingerprint', ARRAY['jsonb'], 'text', 'payload jsonb', 'immutable', 's'),
  ('okno_canonical', ARRAY['jsonb', 'smallint'], 'text', 'payload jsonb, fingerprint_version smallint', 'immutable', 's'),
  ('okno_fingerprint', ARRAY['jsonb', 'smallint'], 'text', 'payload jsonb, fingerprint_version smallint', 'immutable', 's'),
  ('okno_drain_once', ARRAY[]::name[], 'TABLE(event_id uuid, kind text, payload jsonb)', '', 'volatile', 'u'),
  ('okno_drain', ARRAY['integer'], 'TABLE(event_id uuid, kind text, payload jsonb, attempts integer)', 'max_events integer DEFAULT 100', 'volatile', 'u'),
  ('okno_record_failure', ARRAY['uuid', 'text'], 'record',
   'event_id uuid, error text, OUT id uuid, OUT kind text, OUT payload jsonb, OUT created_at timestamp with time zone, OUT delivered_at timestamp with time zone, OUT attempts integer, OUT last_error text, OUT available_at timestamp with time zone, OUT parked_at timestamp with time zone, OUT created_xid xid8',
   'volatile', 'u'),
  ('okno_release', ARRAY['uuid'], 'boolean', 'event_id uuid', 'volatile', 'u'),
  ('okno_requeue', ARRAY['uuid'], 'boolean', 'event_id uuid', 'volatile', 'u'),
  ('okno_get_booking', ARRAY['integer', 'bigint'], 'jsonb', 'actor integer, booking_id bigint', 'stable', 'r'),
  ('okno_cancel_booking', ARRAY['integer', 'bigint'], 'jsonb', 'actor integer, booking_id bigint', 'volatile', 'u'),
  ('okno_purge', ARRAY['interval', 'interval'], 'TABLE(keys_deleted bigint, events_deleted bigint)', 'keys_older_than interval, delivered_older_than interval', 'volatile', 'u'),
  ('okno_create_booking_result', ARRAY['integer', 'text', 'jsonb'], 'record', 'actor integer, key text, payload jsonb, OUT card jsonb, OUT replayed boolean', 'volatile', 'u'),
  ('okno_requeue_parked', ARRAY['text', 'text', 'text', 'timestamp with time zone'], 'bigint',
   'subscriber text DEFAULT NULL::text, kind text DEFAULT NULL::text, error_like text DEFAULT NULL::text, parked_before timestamp with time zone DEFAULT NULL::timestamp with time zone',
   'volatile', 'u'),
  ('okno_discard', ARRAY['uuid', 'text'], 'boolean', 'event_id uuid, subscriber text DEFAULT ''default''::text', 'volatile', 'u'),
  ('okno_subscribe', ARRAY['text'], 'boolean', 'subscriber text', 'volatile', 'u'),
  ('okno_unsubscribe', ARRAY['text'], 'boolean', 'subscriber text', 'volatile', 'u'),
  ('okno_drain', ARRAY['integer', 'text'], 'TABLE(event_id uuid, kind text, payload jsonb, attempts integer)', 'max_events integer, subscriber text', 'volatile', 'u'),
  ('okno_drain_once', ARRAY['text'], 'TABLE(event_id uuid, kind text, payload jsonb)', 'subscriber text', 'volatile', 'u'),
  ('okno_record_failure', ARRAY['uuid', 'text', 'text'], 'okno_tap.okno_delivery', 'event_id uuid, error text, subscriber text', 'volatile', 'u'),
  ('okno_release', ARRAY['uuid', 'text'], 'boolean', 'event_id uuid, subscriber text', 'volatile', 'u'),
  ('okno_requeue', ARRAY['uuid', 'text'], 'boolean', 'event_id uuid, subscriber text', 'volatile', 'u'),
  ('okno_outbox_counts', ARRAY[]::name[], 'record',
   'OUT pending bigint, OUT due_now bigint, OUT delayed bigint, OUT parked bigint, OUT delivered bigint, OUT oldest_pending_age interval, OUT oldest_due_age interval, OUT held_back bigint',
   'stable', 'r'),
  ('okno_subscriber_counts', ARRAY[]::name[], 'SETOF record',
   'OUT subscriber text, OUT subscribed_at timestamp with time zone, OUT pending bigint, OUT due_now bigint, OUT delayed bigint, OUT parked bigint, OUT held_back bigint, OUT not_copied bigint, OUT oldest_pending_age interval, OUT copied_at timestamp with time zone',
   'stable', 'r'),
  ('okno_create_tables', ARRAY[]::name[], 'SETOF text', '', 'volatile', 'u'),
  ('okno_prepare_tables', ARRAY[]::name[], 'SETOF text', '', 'volatile', 'u'),
  ('okno_idempotent', ARRAY['text', 'text', 'text', 'jsonb', 'regprocedure'], 'jsonb',
   'operation text, scope text, key text, request jsonb, handler regprocedure', 'volatile', 'u'),
  ('okno_idempotent_result', ARRAY['text', 'text', 'text', 'jsonb', 'regprocedure'], 'record',
   'operation text, scope text, key text, request jsonb, handler regprocedure, OUT response jsonb, OUT replayed boolean', 'volatile', 'u'),
  ('okno_key_claim', ARRAY['text', 'text', 'text', 'jsonb'], 'jsonb', 'operation text, scope text, key text, request jsonb', 'volatile', 'u'),
  ('okno_key_store', ARRAY['text', 'text', 'text', 'jsonb'], 'jsonb', 'operation text, scope text, key text, response jsonb', 'volatile', 'u'),
  ('okno_emit', ARRAY['text', 'jsonb', 'text'], 'uuid', 'kind text, payload jsonb, order_key text DEFAULT NULL::text', 'volatile', 'u');
SELECT has_function('okno_tap', name, args, name || '(' || array_to_string(args, ', ') || ') exists') FROM fn ORDER BY name;
SELECT volatility_is('okno_tap', name, args, vol, name || ' is ' || vol) FROM fn ORDER BY name;
SELECT isnt_strict('okno_tap', name, args, name || ' is not strict: NULL arguments are errors') FROM fn ORDER BY name;
SELECT isnt_definer('okno_tap', name, args, name || ' is SECURITY INVOKER') FROM fn ORDER BY name;
SELECT function_lang_is('okno_tap', name, args, 'c', name || ' is written in C') FROM fn ORDER BY name;
-- okno_outbox_bucket is a pure function of its text, NULL for NULL (an
-- expression of outbox's columns where Citus distributes it by bucket)
SELECT has_function('okno_tap', 'okno_outbox_bucket', ARRAY['text'], 'okno_outbox_bucket(text) exists');
SELECT function_returns('okno_tap', 'okno_outbox_bucket', ARRAY['text'], 'integer', 'okno_outbox_bucket returns an integer');
SELECT volatility_is('okno_tap', 'okno_outbox_bucket', ARRAY['text'], 'immutable', 'okno_outbox_bucket is immutable');
SELECT is_strict('okno_tap', 'okno_outbox_bucket', ARRAY['text'], 'okno_outbox_bucket is strict');
SELECT is((SELECT p.proparallel::text FROM pg_proc p WHERE p.oid = 'okno_tap.okno_outbox_bucket(text)'::regprocedure),
    's', 'okno_outbox_bucket is parallel safe');
SELECT function_lang_is('okno_tap', 'okno_outbox_bucket', ARRAY['text'], 'c', 'okno_outbox_bucket is written in C');
-- okno_distribute_tables is PL/pgSQL (Citus's functions, called by name), SECURITY INVOKER
SELECT has_function('okno_tap', 'okno_distribute_tables', ARRAY[]::name[], 'okno_distribute_tables() exists');
SELECT function_returns('okno_tap', 'okno_distribute_tables', ARRAY[]::name[], 'setof record', 'okno_distribute_tables returns a set');
SELECT volatility_is('okno_tap', 'okno_distribute_tables', ARRAY[]::name[], 'volatile', 'okno_distribute_tables is volatile');
SELECT isnt_definer('okno_tap', 'okno_distribute_tables', ARRAY[]::name[], 'okno_distribute_tables is SECURITY INVOKER');
-- okno_distribute_own_tables likewise (run by a superuser: okno's own tables)
SELECT has_function('okno_tap', 'okno_distribute_own_tables', ARRAY[]::name[], 'okno_distribute_own_tables() exists');
SELECT function_returns('okno_tap', 'okno_distribute_own_tables', ARRAY[]::name[], 'setof record', 'okno_distribute_own_tables returns a set');
SELECT volatility_is('okno_tap', 'okno_distribute_own_tables', ARRAY[]::name[], 'volatile', 'okno_distribute_own_tables is volatile');
SELECT isnt_definer('okno_tap', 'okno_distribute_own_tables', ARRAY[]::name[], 'okno_distribute_own_tables is SECURITY INVOKER');
-- okno_wait is a procedure (CALL), in C, SECURITY INVOKER
SELECT has_function('okno_tap', 'okno_wait', ARRAY['integer', 'boolean'], 'okno_wait(integer, boolean) exists');
SELECT is((SELECT p.prokind::text FROM pg_proc p WHERE p.oid = 'okno_tap.okno_wait(integer, boolean)'::regprocedure),
    'p', 'okno_wait is a procedure');
SELECT isnt_definer('okno_tap', 'okno_wait', ARRAY['integer', 'boolean'], 'okno_wait is SECURITY INVOKER');
SELECT function_lang_is('okno_tap', 'okno_wait', ARRAY['integer', 'boolean'], 'c', 'okno_wait is written in C');
SELECT has_function('okno_tap', 'okno_wait', ARRAY['integer', 'boolean', 'text'], 'okno_wait(integer, boolean, text) exists (a subscriber''s wait)');
SELECT is((SELECT p.prokind::text FROM pg_proc p WHERE p.oid = 'okno_tap.okno_wait(integer, boolean, text)'::regprocedure),
    'p', 'okno_wait(integer, boolean, text) is a procedure');
SELECT isnt_definer('okno_tap', 'okno_wait', ARRAY['integer', 'boolean', 'text'], 'okno_wait(integer, boolean, text) is SECURITY INVOKER');
SELECT has_function('okno_tap', 'okno_verify', ARRAY[]::name[], 'okno_verify() exists');
SELECT function_returns('okno_tap', 'okno_verify', ARRAY[]::name[], 'setof record', 'okno_verify returns a set');
SELECT is(pg_get_function_result('okno_tap.okno_verify()'::regprocedure), 'TABLE(problem text, detail text)', 'okno_verify returns (problem, detail)');
SELECT volatility_is('okno_tap', 'okno_verify', ARRAY[]::name[], 'stable', 'okno_verify is stable');
SELECT isnt_definer('okno_tap', 'okno_verify', ARRAY[]::name[], 'okno_verify is SECURITY INVOKER');
SELECT function_lang_is('okno_tap', 'okno_verify', ARRAY[]::name[], 'c', 'okno_verify is written in C (a SQL body would refer to the application''s tables)');
SELECT is(pg_get_function_result('okno_tap.okno_errors()'::regprocedure), 'TABLE(code text, sqlstate text, http_status integer, message text)', 'okno_errors returns (code, sqlstate, http_status, message)');
SELECT volatility_is('okno_tap', 'okno_errors', ARRAY[]::name[], 'immutable', 'okno_errors is immutable');
SELECT is((SELECT proparallel::text FROM pg_proc WHERE oid = 'okno_tap.okno_verify()'::regprocedure), 'r', 'okno_verify is parallel restricted');
SELECT is(pg_get_function_result(p.oid), fn.result, fn.name || ' returns ' || fn.result)
  FROM fn JOIN pg_proc p ON p.proname = fn.name AND p.pronamespace = 'okno_tap'::regnamespace
   AND pg_catalog.oidvectortypes(p.proargtypes) = array_to_string(fn.args, ', ')
 ORDER BY fn.name, fn.args;
SELECT is(pg_get_function_arguments(p.oid), fn.signature, fn.name || '''s arguments')
  FROM fn JOIN pg_proc p ON p.proname = fn.name AND p.pronamespace = 'okno_tap'::regnamespace
   AND pg_catalog.oidvectortypes(p.proargtypes) = array_to_string(fn.args, ', ')
 ORDER BY fn.name, fn.args;
SELECT is(p.proparallel::text, fn.par, fn.name || ' parallel ' || fn.par)
  FROM fn JOIN pg_proc p ON p.proname = fn.name AND p.pronamespace = 'okno_tap'::regnamespace
   AND pg_catalog.oidvectortypes(p.proargtypes) = array_to_string(fn.args, ', ')
 ORDER BY fn.name, fn.args;

-- 0.7.0: okno_canonical_json, a pure function of its argument: STRICT
SELECT has_function('okno_tap', 'okno_canonical_json', ARRAY['jsonb'], 'okno_canonical_json(jsonb) exists');
SELECT is(pg_get_function_result('okno_tap.okno_canonical_json(jsonb)'::regprocedure), 'text', 'okno_canonical_json returns text');
SELECT volatility_is('okno_tap', 'okno_canonical_json', ARRAY['jsonb'], 'immutable', 'okno_canonical_json is immutable');
SELECT is_strict('okno_tap', 'okno_canonical_json', ARRAY['jsonb'], 'okno_canonical_json is strict: NULL in, NULL out');
SELECT is((SELECT proparallel::text FROM pg_proc WHERE oid = 'okno_tap.okno_canonical_json(jsonb)'::regprocedure), 's', 'okno_canonical_json is parallel safe');
SELECT function_lang_is('okno_tap', 'okno_canonical_json', ARRAY['jsonb'], 'c', 'okno_canonical_json is written in C');

-- 0.7.0: operations' keys and the tombstones of expired keys
SELECT columns_are('okno_tap', 'okno_key', ARRAY['operation', 'scope', 'request_key', 'fingerprint', 'response', 'created_at']);
SELECT col_is_pk('okno_tap', 'okno_key', ARRAY['operation', 'scope', 'request_key'], 'okno_key is keyed by operation, scope and key');
SELECT is((SELECT array_agg(c.collname ORDER BY a.attnum) FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
            WHERE a.attrelid = 'okno_tap.okno_key'::regclass AND a.attname IN ('operation', 'scope', 'request_key')),
          ARRAY['C', 'C', 'C']::name[], 'okno_key''s key columns compare bytes ("C")');
SELECT col_type_is('okno_tap', 'okno_key', 'fingerprint', 'bytea', 'okno_key.fingerprint is bytea (a SHA-256 digest)');
SELECT col_type_is('okno_tap', 'okno_key', 'response', 'jsonb', 'okno_key.response is jsonb');
SELECT columns_are('okno_tap', 'okno_key_tombstone', ARRAY['key_hash', 'expired_at']);
SELECT col_is_pk('okno_tap', 'okno_key_tombstone', 'key_hash', 'okno_key_tombstone is keyed by the key''s hash');
SELECT indexes_are('okno_tap', 'okno_key', ARRAY['okno_key_pkey']);
SELECT indexes_are('okno_tap', 'okno_key_tombstone', ARRAY['okno_key_tombstone_pkey']);

-- 0.6.0: no event trigger (0.5.0's okno_drop_guard is retired)
SELECT ok(NOT EXISTS (SELECT FROM pg_depend WHERE classid = 'pg_event_trigger'::regclass AND deptype = 'e'
                     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno')),
          'okno has no event trigger');

-- 0.5.0: the record of discarded events
SELECT columns_are('okno_tap', 'okno_discarded', ARRAY['event_id', 'subscriber', 'kind', 'payload', 'attempts',
    'last_error', 'parked_at', 'discarded_at', 'discarded_by']);
SELECT col_is_pk('okno_tap', 'okno_discarded', ARRAY['event_id', 'subscriber', 'discarded_at'], 'okno_discarded is keyed by event, subscriber and time (an event reopened and discarded again keeps both records)');

-- 0.5.0: subscribers and their delivery state
SELECT columns_are('okno_tap', 'okno_subscriber', ARRAY['name', 'subscribed_at', 'since', 'copied_snapshot',
    'copied_system', 'copied_at']);
SELECT col_is_pk('okno_tap', 'okno_subscriber', 'name', 'okno_subscriber is keyed by name');
SELECT col_type_is('okno_tap', 'okno_subscriber', 'copied_snapshot', 'pg_snapshot', 'a subscriber''s position is a snapshot');
SELECT is((SELECT pg_get_constraintdef(oid) FROM pg_constraint
            WHERE conrelid = 'okno_tap.okno_subscriber'::regclass AND conname = 'okno_subscriber_name_check'),
          'CHECK (((name ~ ''^[a-z][a-z0-9_-]{0,62}$''::text) AND (name <> ''default''::text)))',
          'a subscriber''s name follows the rule, and is not "default"');
SELECT columns_are('okno_tap', 'okno_delivery', ARRAY['subscriber', 'event_id', 'order_key', 'first', 'delivered_at',
    'attempts', 'last_error', 'available_at', 'parked_at', 'bucket']);
SELECT col_is_pk('okno_tap', 'okno_delivery', ARRAY['subscriber', 'event_id', 'bucket'], 'okno_delivery is keyed by subscriber, event and bucket (outbox''s, where Citus distributes them)');
SELECT col_default_is('okno_tap', 'okno_delivery', 'bucket', '0', 'okno_delivery.bucket is 0 on one server');
SELECT indexes_are('okno_tap', 'okno_delivery', ARRAY['okno_delivery_pkey', 'okno_delivery_pending', 'okno_delivery_parked', 'okno_delivery_order']);
SELECT is((SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indexrelid = 'okno_tap.okno_delivery_pending'::regclass),
          'CREATE INDEX okno_delivery_pending ON okno_tap.okno_delivery USING btree (subscriber, event_id) INCLUDE (available_at) WHERE ((delivered_at IS NULL) AND (parked_at IS NULL))',
          'okno_delivery_pending holds each subscriber''s pending, unparked events');
SELECT is((SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indexrelid = 'okno_tap.okno_delivery_order'::regclass),
          'CREATE INDEX okno_delivery_order ON okno_tap.okno_delivery USING btree (subscriber, order_key, event_id) WHERE (delivered_at IS NULL)',
          'okno_delivery_order finds a booking''s undelivered events of a subscriber');
SELECT has_view('okno_tap', 'okno_subscribers', 'okno_subscribers exists');
SELECT columns_are('okno_tap', 'okno_subscribers',
    ARRAY['subscriber', 'subscribed_at', 'pending', 'due_now', 'delayed', 'parked', 'held_back', 'not_copied',
          'oldest_pending_age', 'copied_at']);

-- the status view
SELECT has_view('okno_tap', 'okno_outbox_status', 'okno_outbox_status exists');
SELECT columns_are('okno_tap', 'okno_outbox_status',
    ARRAY['pending', 'due_now', 'delayed', 'parked', 'delivered', 'oldest_pending_age', 'oldest_due_age', 'held_back']);

-- the extension itself
SELECT has_extension('okno');
SELECT is((SELECT extrelocatable FROM pg_extension WHERE extname = 'okno'), false, 'okno is not relocatable');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'okno'), (SELECT default_version FROM pg_available_extensions WHERE name = 'okno'), 'okno is at its default version');
SELECT is((SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'okno'), 'okno_tap', 'installed into the schema given');
SELECT is((SELECT trusted FROM pg_available_extension_versions WHERE name = 'okno' AND version = '0.8.0'), true, 'okno is trusted');
SELECT is((SELECT requires FROM pg_available_extension_versions WHERE name = 'okno' AND version = '0.8.0'), ARRAY['btree_gist']::name[], 'okno requires btree_gist');
SELECT is((SELECT array_agg(version ORDER BY version) FROM pg_available_extension_versions WHERE name = 'okno'), ARRAY['0.8.0']::text[], 'only the current version, 0.8.0, can be installed (no older full script is installed)');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.1.0' AND target = '0.2.0' AND path = '0.1.0--0.2.0'), 'an update path leads from 0.1.0 to 0.2.0');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.2.0' AND target = '0.3.0' AND path = '0.2.0--0.3.0'), 'an update path leads from 0.2.0 to 0.3.0');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.3.0' AND target = '0.4.0' AND path = '0.3.0--0.4.0'), 'an update path leads from 0.3.0 to 0.4.0');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.4.0' AND target = '0.4.1' AND path = '0.4.0--0.4.1'), 'an update path leads from 0.4.0 to 0.4.1');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.4.1' AND target = '0.5.0' AND path = '0.4.1--0.5.0'), 'an update path leads from 0.4.1 to 0.5.0');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.5.0' AND target = '0.6.0' AND path = '0.5.0--0.6.0'), 'an update path leads from 0.5.0 to 0.6.0');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.6.0' AND target = '0.7.0' AND path = '0.6.0--0.7.0'), 'an update path leads from 0.6.0 to 0.7.0');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.7.0' AND target = '0.7.1' AND path = '0.7.0--0.7.1'), 'an update path leads from 0.7.0 to 0.7.1');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.7.1' AND target = '0.8.0' AND path = '0.7.1--0.8.0'), 'an update path leads from 0.7.1 to 0.8.0');
SELECT ok(EXISTS (SELECT FROM pg_extension_update_paths('okno') WHERE source = '0.1.0' AND target = '0.8.0' AND path = '0.1.0--0.2.0--0.3.0--0.4.0--0.4.1--0.5.0--0.6.0--0.7.0--0.7.1--0.8.0'), 'an update path leads from 0.1.0 to 0.8.0');
-- the drain hint: a sequence okno owns, not dumped (a restored database
-- starts without a hint), readable only by its owner
SELECT has_sequence('okno_tap', 'okno_drain_hint', 'the drain hint is a sequence');
SELECT ok(NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'okno' AND 'okno_tap.okno_drain_hint'::regclass = ANY (extconfig)),
          'the drain hint is not dumped');

SELECT * FROM finish();
ROLLBACK;
