-- pgTAP: privileges after a trusted install.  A role that is not a
-- superuser and has CREATE on the database and on a schema installs okno
-- and creates the application's tables with okno_create_tables(): those
-- are its own.  On okno's own tables it may read and write and use the
-- sequence, with the right to pass that on, but holds neither TRIGGER nor
-- REFERENCES (either would let it run code of its own as a superuser),
-- while other roles hold nothing.  Runs in one transaction and rolls back.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE ROLE regress_tap_owner NOSUPERUSER;
CREATE ROLE regress_tap_stranger NOSUPERUSER;
SELECT format('GRANT CREATE ON DATABASE %I TO regress_tap_owner', current_database()) \gexec
CREATE SCHEMA okno_trusted AUTHORIZATION regress_tap_owner;

SET ROLE regress_tap_owner;
CREATE EXTENSION okno SCHEMA okno_trusted CASCADE;
DO $$ BEGIN PERFORM okno_trusted.okno_create_tables(); END $$;
RESET ROLE;

SELECT plan(64);

SELECT isnt_superuser('regress_tap_owner');
SELECT is((SELECT extowner::regrole::text FROM pg_extension WHERE extname = 'okno'), 'regress_tap_owner',
          'the installing role owns the extension');

SELECT is(pg_get_userbyid(c.relowner)::text, 'regress_tap_owner', 'the application''s ' || c.relname || ' is the owner''s')
  FROM pg_class c
 WHERE c.relnamespace = 'okno_trusted'::regnamespace
   AND c.relname IN ('actors', 'resources', 'bookings', 'idempotency', 'outbox',
                     'actors_id_seq', 'resources_id_seq', 'bookings_id_seq')
 ORDER BY c.relname;
SELECT table_privs_are('okno_trusted', t, 'regress_tap_owner',
           ARRAY['DELETE', 'INSERT', 'SELECT', 'TRUNCATE', 'UPDATE'],
           'the owner may read and write okno''s ' || t || ', and no more')
  FROM unnest(ARRAY['okno_purge_horizon', 'okno_discarded', 'okno_subscriber', 'okno_delivery', 'okno_key', 'okno_key_tombstone']) AS t;
SELECT ok(bool_and(has_table_privilege('regress_tap_owner', format('okno_trusted.%I', t), p || ' WITH GRANT OPTION')),
          'the owner may grant reading and writing okno''s ' || t)
  FROM unnest(ARRAY['okno_purge_horizon', 'okno_discarded', 'okno_subscriber', 'okno_delivery', 'okno_key', 'okno_key_tombstone']) AS t,
       unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p
 GROUP BY t;
SELECT sequence_privs_are('okno_trusted', 'okno_drain_hint', 'regress_tap_owner', ARRAY['SELECT', 'UPDATE', 'USAGE'],
           'the owner holds every privilege on okno_drain_hint');
SELECT table_privs_are('okno_trusted', t, 'regress_tap_stranger', ARRAY[]::text[],
           'another role holds no privilege on ' || t)
  FROM unnest(ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox',
                    'okno_purge_horizon', 'okno_discarded', 'okno_subscriber', 'okno_delivery',
                    'okno_key', 'okno_key_tombstone']) AS t;
SELECT function_privs_are('okno_trusted', f, a, 'regress_tap_owner', ARRAY['EXECUTE'],
           'the owner may execute ' || f)
  FROM (VALUES ('okno_create_booking', ARRAY['integer', 'text', 'jsonb']),
               ('okno_canonical', ARRAY['jsonb']),
               ('okno_fingerprint', ARRAY['jsonb']),
               ('okno_drain_once', ARRAY[]::text[])) AS v(f, a);
SELECT ok(has_table_privilege('regress_tap_owner', 'okno_trusted.okno_outbox_status', 'SELECT WITH GRANT OPTION'),
          'the owner may read the status view and grant reading it');
SELECT ok(NOT has_table_privilege('regress_tap_stranger', 'okno_trusted.okno_outbox_status', 'SELECT'),
          'another role may not read the status view');
SELECT ok(has_table_privilege('regress_tap_owner', 'okno_trusted.okno_subscribers', 'SELECT WITH GRANT OPTION'),
          'the owner may read the subscribers'' view and grant reading it');
SELECT ok(NOT has_table_privilege('regress_tap_stranger', 'okno_trusted.okno_subscribers', 'SELECT'),
          'another role may not read the subscribers'' view');
SELECT function_privs_are('okno_trusted', f, a, 'regress_tap_owner', ARRAY['EXECUTE'],
           'the owner may execute ' || f)
  FROM (VALUES ('okno_drain', ARRAY['integer']),
               ('okno_record_failure', ARRAY['uuid', 'text']),
               ('okno_release', ARRAY['uuid']),
               ('okno_requeue', ARRAY['uuid']),
               ('okno_get_booking', ARRAY['integer', 'bigint']),
               ('okno_cancel_booking', ARRAY['integer', 'bigint']),
               ('okno_purge', ARRAY['interval', 'interval']),
               ('okno_requeue_parked', ARRAY['text', 'text', 'text', 'timestamp with time zone']),
               ('okno_discard', ARRAY['uuid', 'text']),
               ('okno_subscribe', ARRAY['text']),
               ('okno_unsubscribe', ARRAY['text']),
               ('okno_drain', ARRAY['integer', 'text']),
               ('okno_drain_once', ARRAY['text']),
               ('okno_record_failure', ARRAY['uuid', 'text', 'text']),
               ('okno_release', ARRAY['uuid', 'text']),
               ('okno_requeue', ARRAY['uuid', 'text']),
               ('okno_outbox_counts', ARRAY[]::text[]),
               ('okno_subscriber_counts', ARRAY[]::text[]),
               ('okno_verify', ARRAY[]::text[]),
               ('okno_create_tables', ARRAY[]::text[]),
               ('okno_prepare_tables', ARRAY[]::text[])) AS v(f, a);
SELECT is((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'okno_trusted'::regnamespace AND prosecdef), 0,
          'no function is SECURITY DEFINER: callers need the table privileges');

SELECT * FROM finish();
ROLLBACK;
