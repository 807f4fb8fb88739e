--
-- roles: the privilege recipe of docs/PRIVILEGES.md.  An application role
-- that creates, reads and cancels bookings, a relay role that delivers
-- events, a maintenance role that purges and verifies, and a role without
-- grants; each may do what it is for and gets 42501 for everything else,
-- writing nothing.  Every privilege of the recipe is shown to be needed,
-- and what the table privileges also allow directly is shown too, as is
-- the SECURITY DEFINER variant.  The roles are created here and dropped at
-- the end; everything in between runs in one transaction that is rolled
-- back, so okno's rows and ACLs end as they were (only the identity
-- sequences have moved on: sequences are not transactional).
--

-- the ACLs of okno's objects and of the application's five tables now, to
-- compare at the end
SELECT md5(string_agg(acl, ';' ORDER BY acl)) AS acls_before FROM (
    SELECT format('%s %s', c.oid::regclass, c.relacl) AS acl
      FROM pg_class c
     WHERE c.oid IN (SELECT d.objid FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e'
                        AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno'))
        OR c.oid IN ('actors'::regclass, 'resources'::regclass, 'bookings'::regclass,
                     'idempotency'::regclass, 'outbox'::regclass)
    UNION ALL
    SELECT format('%s.%s %s', a.attrelid::regclass, a.attname, a.attacl)
      FROM pg_attribute a
     WHERE (a.attrelid IN (SELECT d.objid FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e'
                              AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno'))
            OR a.attrelid IN ('actors'::regclass, 'resources'::regclass, 'bookings'::regclass,
                              'idempotency'::regclass, 'outbox'::regclass))
       AND a.attacl IS NOT NULL
    UNION ALL
    SELECT format('%s %s', p.oid::regprocedure, p.proacl)
      FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
     WHERE d.deptype = 'e' AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno')
) AS acls \gset

CREATE ROLE regress_okno_app NOLOGIN;
CREATE ROLE regress_okno_relay NOLOGIN;
CREATE ROLE regress_okno_maint NOLOGIN;
CREATE ROLE regress_okno_nobody NOLOGIN;
-- for the SECURITY DEFINER variant at the end
CREATE ROLE regress_okno_api NOLOGIN;
CREATE ROLE regress_okno_client NOLOGIN;

BEGIN;

-- helpers, run by the superuser: as_role(role, sql) runs sql as that role
-- and returns its first column, or "SQLSTATE message"; a failure leaves
-- nothing behind (its subtransaction is rolled back)
CREATE SCHEMA roles_test;
CREATE FUNCTION roles_test.as_role(r name, q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    res text;
BEGIN
    EXECUTE format('SET LOCAL ROLE %I', r);
    IF q ~* '^\s*SELECT' THEN
        EXECUTE q INTO res;
    ELSE
        EXECUTE q;
    END IF;
    RESET ROLE;
    RETURN coalesce(res, 'ok');
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END
$$;
-- "SQLSTATE message" as it is, any other result as "ok"
CREATE FUNCTION roles_test.outcome(res text) RETURNS text
LANGUAGE sql AS $$ SELECT CASE WHEN res ~ '^[0-9A-Z]{5} ' THEN res ELSE 'ok' END $$;
-- everything a call could leave behind: okno's rows, the identity
-- sequences, the caller's advisory locks
CREATE FUNCTION roles_test.snapshot() RETURNS text
LANGUAGE sql AS $$
    SELECT md5(concat_ws('|',
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM actors t),
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM resources t),
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM bookings t),
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM idempotency t),
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM outbox t),
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM okno_purge_horizon t),
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM okno_discarded t),
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM okno_key t),
        (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM okno_key_tombstone t),
        (SELECT last_value FROM bookings_id_seq),
        (SELECT last_value FROM actors_id_seq),
        (SELECT last_value FROM resources_id_seq),
        (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())))
$$;

-- a fixture of this test's own: an actor and a resource (their ids depend
-- on what ran before, so they are never printed)
INSERT INTO actors (name) VALUES ('roles actor') RETURNING id AS actor \gset
INSERT INTO resources (name) VALUES ('roles room') RETURNING id AS resource \gset
SELECT format('{"resource_id":%s,"starts_at":"2032-05-01T10:00:00Z","ends_at":"2032-05-01T11:00:00Z"}', :resource) AS p1,
       format('{"resource_id":%s,"starts_at":"2032-05-01T12:00:00Z","ends_at":"2032-05-01T13:00:00Z"}', :resource) AS p2 \gset
-- events other tests left pending are set aside, so that the relay's
-- drains below hand out this test's events only
UPDATE outbox SET delivered_at = clock_timestamp() WHERE delivered_at IS NULL AND parked_at IS NULL;

--
-- The recipe, exactly as docs/PRIVILEGES.md gives it
--
-- 0. No EXECUTE on okno's functions for PUBLIC: each role gets the ones
--    it is for.  Every function of the extension, so that running this
--    again after ALTER EXTENSION okno UPDATE covers new ones.  (The
--    functions belong to the bootstrap superuser: this needs a superuser.)
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT d.objid::regprocedure FROM pg_depend d
              WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
                AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno') LOOP
        EXECUTE format('REVOKE EXECUTE ON ROUTINE %s FROM PUBLIC', f);
    END LOOP;
END
$$;

-- 1. the application: create, replay, read and cancel bookings (and read
--    the error catalogue, for mapping errors to HTTP)
GRANT EXECUTE ON FUNCTION okno_create_booking(integer, text, jsonb),
    okno_create_booking_result(integer, text, jsonb),
    okno_get_booking(integer, bigint), okno_cancel_booking(integer, bigint), okno_errors()
  TO regress_okno_app;
GRANT SELECT (id) ON actors, resources TO regress_okno_app;
GRANT SELECT (id, resource_id, actor_id, starts_at, ends_at, status),
      INSERT (resource_id, actor_id, starts_at, ends_at),
      UPDATE (status)
   ON bookings TO regress_okno_app;
GRANT SELECT (actor_id, request_key, fingerprint, fingerprint_version, response_body),
      INSERT (actor_id, request_key, fingerprint, fingerprint_version, response_body)
   ON idempotency TO regress_okno_app;
GRANT INSERT (id, kind, payload) ON outbox TO regress_okno_app;
--    events from any function (0.7.0)
GRANT EXECUTE ON FUNCTION okno_emit(text, jsonb, text) TO regress_okno_app;
GRANT INSERT (order_key) ON outbox TO regress_okno_app;
--    idempotency keys of operations (0.7.0)
GRANT EXECUTE ON FUNCTION okno_idempotent(text, text, text, jsonb, regprocedure),
    okno_idempotent_result(text, text, text, jsonb, regprocedure),
    okno_key_claim(text, text, text, jsonb), okno_key_store(text, text, text, jsonb)
  TO regress_okno_app;
GRANT SELECT (operation, scope, request_key, fingerprint, response),
      INSERT (operation, scope, request_key, fingerprint, response)
   ON okno_key TO regress_okno_app;

-- 2. the relay: drain, record failures, release, requeue, read the status,
--    and the dead-letter tools: requeue in bulk, discard
GRANT EXECUTE ON FUNCTION okno_drain_once(), okno_drain(integer),
    okno_record_failure(uuid, text), okno_release(uuid), okno_requeue(uuid),
    okno_requeue_parked(text, text, text, timestamptz), okno_discard(uuid, text)
  TO regress_okno_relay;
GRANT SELECT (id, kind, payload, created_at, delivered_at, attempts, last_error, available_at, parked_at,
              order_key),  -- 0.7.0: events wait for the earlier ones of their order key
      UPDATE (delivered_at, attempts, last_error, available_at, parked_at)
   ON outbox TO regress_okno_relay;
GRANT INSERT ON okno_discarded TO regress_okno_relay;
GRANT EXECUTE ON FUNCTION okno_outbox_counts() TO regress_okno_relay;
GRANT SELECT ON okno_outbox_status TO regress_okno_relay;
--    and for subscribers
GRANT EXECUTE ON FUNCTION okno_drain(integer, text), okno_drain_once(text),
    okno_record_failure(uuid, text, text), okno_release(uuid, text), okno_requeue(uuid, text)
  TO regress_okno_relay;
GRANT SELECT (created_xid) ON outbox TO regress_okno_relay;
GRANT SELECT, UPDATE ON okno_subscriber TO regress_okno_relay;
GRANT SELECT, INSERT, UPDATE, DELETE ON okno_delivery TO regress_okno_relay;
GRANT EXECUTE ON FUNCTION okno_subscriber_counts() TO regress_okno_relay;
GRANT SELECT ON okno_subscribers TO regress_okno_relay;

-- 3. maintenance: retention and the invariant checker
GRANT EXECUTE ON FUNCTION okno_purge(interval, interval), okno_verify() TO regress_okno_maint;
GRANT SELECT (id, actor_id, created_at)   -- 0.7.0: no longer resource_id, starts_at, ends_at
   ON bookings TO regress_okno_maint;
GRANT SELECT (actor_id, request_key, fingerprint, fingerprint_version, response_body, created_at), DELETE
   ON idempotency TO regress_okno_maint;
GRANT SELECT (id, kind, payload, delivered_at, attempts, last_error, parked_at), DELETE
   ON outbox TO regress_okno_maint;
GRANT SELECT (singleton, keys_purged_before, events_purged_before, checked_since),
      INSERT (singleton, keys_purged_before, events_purged_before),
      UPDATE (keys_purged_before, events_purged_before)
   ON okno_purge_horizon TO regress_okno_maint;
GRANT SELECT (event_id, subscriber, kind, payload) ON okno_discarded TO regress_okno_maint;
--    operations' keys and the tombstones the purge leaves (0.7.0)
GRANT SELECT (operation, scope, request_key, fingerprint, created_at), DELETE
   ON okno_key TO regress_okno_maint;
GRANT SELECT, INSERT, UPDATE, DELETE ON okno_key_tombstone TO regress_okno_maint;
--    and the subscriptions
GRANT EXECUTE ON FUNCTION okno_subscribe(text), okno_unsubscribe(text) TO regress_okno_maint;
GRANT SELECT (created_xid) ON outbox TO regress_okno_maint;
GRANT SELECT, INSERT, DELETE ON okno_subscriber TO regress_okno_maint;
GRANT SELECT, DELETE ON okno_delivery TO regress_okno_maint;

-- (regress_okno_nobody gets nothing)

-- after step 0 no okno function is executable by a role without grants
SELECT count(*) AS okno_functions,
       count(*) FILTER (WHERE has_function_privilege('regress_okno_nobody', d.objid, 'EXECUTE')) AS executable_by_nobody
  FROM pg_depend d
 WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno');

--
-- Each role does what it is for
--
SET ROLE regress_okno_app;
SELECT okno_create_booking(:actor, 'roles-1', :'p1') AS card \gset
SELECT :'card'::jsonb - 'id' - 'actor_id' - 'resource_id' AS created,
       (:'card'::jsonb ->> 'actor_id')::int = :actor AS actor_ok,
       (:'card'::jsonb ->> 'resource_id')::int = :resource AS resource_ok;
SELECT okno_create_booking(:actor, 'roles-1', :'p1') = :'card'::jsonb AS replayed;
SELECT card = :'card'::jsonb AS same_card, replayed FROM okno_create_booking_result(:actor, 'roles-1', :'p1');
SELECT sqlstate, code, http_status FROM okno_errors() WHERE sqlstate IN ('OKB04', 'OKB05');
SELECT (:'card'::jsonb ->> 'id')::bigint AS booking \gset
SELECT okno_get_booking(:actor, :booking) = :'card'::jsonb AS got;
SELECT okno_cancel_booking(:actor, :booking) ->> 'status' AS cancelled;
SELECT okno_get_booking(:actor, :booking) ->> 'status' AS status_now;
RESET ROLE;
SELECT id AS ev FROM outbox
 WHERE kind = 'booking_created' AND payload = jsonb_build_object('booking_id', :booking) \gset

SET ROLE regress_okno_relay;
SELECT count(*) AS drained, count(*) FILTER (WHERE payload = jsonb_build_object('booking_id', :booking)) AS of_the_booking
  FROM okno_drain(10000);
SELECT okno_release(:'ev') AS released;
SELECT attempts, last_error, delivered_at IS NULL AS pending, available_at > now() AS delayed
  FROM okno_record_failure(:'ev', 'recipient down');
SELECT okno_requeue(:'ev') AS requeued;
SELECT event_id = :'ev' AS drained_again FROM okno_drain_once();
SELECT pending >= 0 AND parked >= 0 AS status_readable FROM okno_outbox_status;
RESET ROLE;

SET ROLE regress_okno_maint;
SELECT keys_deleted >= 0 AND events_deleted >= 0 AS purged FROM okno_purge('30 days', '30 days');
SELECT count(*) AS problems FROM okno_verify();
SELECT okno_subscribe('roles-sub') AS subscribed;
RESET ROLE;
-- the subscriber has the event (this transaction's events are copied once
-- it commits: the state is written here)
INSERT INTO okno_delivery (subscriber, event_id, order_key, first, delivered_at)
VALUES ('roles-sub', :'ev', :'booking', true, now());

SET ROLE regress_okno_relay;
SELECT count(*) AS drained FROM okno_drain(10, 'roles-sub');
SELECT attempts, last_error, delivered_at IS NULL AS pending
  FROM okno_record_failure(:'ev', 'recipient down', 'roles-sub');
SELECT okno_requeue(:'ev', 'roles-sub') AS requeued;
SELECT event_id = :'ev' AS drained_again FROM okno_drain_once('roles-sub');
SELECT okno_release(:'ev', 'roles-sub') AS released;
SELECT subscriber, pending FROM okno_subscribers WHERE subscriber = 'roles-sub';
RESET ROLE;

--
-- Everything else fails with 42501 and writes nothing.  The operations,
-- and which role each one is for:
--
-- a parked event for the dead-letter tools (of no booking: okno_verify
-- does not count it)
INSERT INTO outbox (id, kind, payload, attempts, last_error, parked_at)
VALUES ('01900000-0000-7000-8000-0000000000ff', 'roles_probe', '{}', 3, 'recipient down', now())
RETURNING id AS parked \gset
-- the operations' handler, where every role can call it (a function of
-- PUBLIC's EXECUTE in a schema of PUBLIC's USAGE)
CREATE FUNCTION public.roles_strip_nulls(r jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE RETURN pg_catalog.jsonb_strip_nulls(r);
CREATE TABLE roles_test.ops (ord int PRIMARY KEY, op text, sql text, for_role name);
INSERT INTO roles_test.ops VALUES
  (1, 'create', format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'roles-2', :'p2'), 'regress_okno_app'),
  (2, 'replay', format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'roles-1', :'p1'), 'regress_okno_app'),
  (3, 'create_result', format('SELECT replayed FROM okno_create_booking_result(%s, %L, %L)', :actor, 'roles-1', :'p1'), 'regress_okno_app'),
  (4, 'get', format('SELECT okno_get_booking(%s, %s)', :actor, :booking), 'regress_okno_app'),
  (5, 'cancel', format('SELECT okno_cancel_booking(%s, %s)', :actor, :booking), 'regress_okno_app'),
  (6, 'errors', 'SELECT count(*) FROM okno_errors()', 'regress_okno_app'),
  (7, 'drain_once', 'SELECT count(*) FROM okno_drain_once()', 'regress_okno_relay'),
  (8, 'drain', 'SELECT count(*) FROM okno_drain(10)', 'regress_okno_relay'),
  (9, 'record_failure', format('SELECT attempts FROM okno_record_failure(%L, %L)', :'ev', 'x'), 'regress_okno_relay'),
  (10, 'release', format('SELECT okno_release(%L)', :'ev'), 'regress_okno_relay'),
  (11, 'requeue', format('SELECT okno_requeue(%L)', :'ev'), 'regress_okno_relay'),
  (12, 'status', 'SELECT pending FROM okno_outbox_status', 'regress_okno_relay'),
  (13, 'purge', 'SELECT keys_deleted FROM okno_purge(''0 seconds'', ''0 seconds'')', 'regress_okno_maint'),
  (14, 'verify', 'SELECT count(*) FROM okno_verify()', 'regress_okno_maint'),
  (15, 'canonical', format('SELECT okno_canonical(%L)', :'p1'), NULL),
  (16, 'fingerprint', format('SELECT okno_fingerprint(%L)', :'p1'), NULL),
  (17, 'discard', format('SELECT okno_discard(%L)', :'parked'), 'regress_okno_relay'),
  (18, 'requeue_parked', 'SELECT okno_requeue_parked(kind => ''roles_probe'')', 'regress_okno_relay'),
  (19, 'subscribe', 'SELECT okno_subscribe(''roles-probe'')', 'regress_okno_maint'),
  (20, 'unsubscribe', 'SELECT okno_unsubscribe(''roles-probe'')', 'regress_okno_maint'),
  (21, 'drain_subscriber', 'SELECT count(*) FROM okno_drain(10, ''roles-sub'')', 'regress_okno_relay'),
  (22, 'drain_once_subscriber', 'SELECT count(*) FROM okno_drain_once(''roles-sub'')', 'regress_okno_relay'),
  (23, 'release_subscriber', format('SELECT okno_release(%L, %L)', :'ev', 'roles-sub'), 'regress_okno_relay'),
  (24, 'record_failure_subscriber', format('SELECT attempts FROM okno_record_failure(%L, %L, %L)', :'ev', 'x', 'roles-sub'), 'regress_okno_relay'),
  (25, 'requeue_subscriber', format('SELECT okno_requeue(%L, %L)', :'ev', 'roles-sub'), 'regress_okno_relay'),
  (26, 'subscribers', 'SELECT count(*) FROM okno_subscribers', 'regress_okno_relay'),
  (27, 'idempotent', 'SELECT okno_idempotent(''roles'', ''s'', ''roles-op'', ''{"a": null}'', ''public.roles_strip_nulls(jsonb)'')', 'regress_okno_app'),
  (28, 'idempotent_result', 'SELECT replayed FROM okno_idempotent_result(''roles'', ''s'', ''roles-op-2'', ''{}'', ''public.roles_strip_nulls(jsonb)'')', 'regress_okno_app'),
  (29, 'claim_and_store', 'SELECT count(okno_key_store(''roles'', ''s'', ''roles-claim'', ''{"ok": 1}'')) FROM (SELECT okno_key_claim(''roles'', ''s'', ''roles-claim'', ''{}'') AS c OFFSET 0) AS x WHERE x.c IS NULL', 'regress_okno_app'),
  (30, 'canonical_json', 'SELECT okno_canonical_json(''{"b": 1, "a": 2}'')', NULL),
  (31, 'emit', 'SELECT okno_emit(''roles_probe'', ''{}'', ''roles-key'') IS NOT NULL', 'regress_okno_app');
CREATE TABLE roles_test.roles (ord int, r name);
INSERT INTO roles_test.roles VALUES
  (1, 'regress_okno_app'), (2, 'regress_okno_relay'), (3, 'regress_okno_maint'), (4, 'regress_okno_nobody');

SELECT roles_test.snapshot() AS before \gset
SELECT r.r AS role, o.op, roles_test.outcome(roles_test.as_role(r.r, o.sql)) AS result
  FROM roles_test.roles r CROSS JOIN roles_test.ops o
 WHERE o.for_role IS DISTINCT FROM r.r
 ORDER BY r.ord, o.ord;
SELECT roles_test.snapshot() = :'before' AS nothing_written;

-- what the relay may not do: read the stored responses, directly or
-- through okno
SELECT roles_test.as_role('regress_okno_relay', 'SELECT response_body FROM idempotency LIMIT 1') AS select_idempotency,
       roles_test.as_role('regress_okno_relay', format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'roles-1', :'p1')) AS replay;
-- nor can the role without grants touch any table
SELECT t AS "table", roles_test.as_role('regress_okno_nobody', format('SELECT count(*) FROM %s', t)) AS "select",
       roles_test.as_role('regress_okno_nobody', format('DELETE FROM %s', t)) AS "delete"
  FROM unnest(ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox', 'okno_purge_horizon', 'okno_discarded',
                    'okno_subscriber', 'okno_delivery', 'okno_key', 'okno_key_tombstone']) AS t;
SELECT roles_test.snapshot() = :'before' AS nothing_written;

--
-- Every privilege of the recipe is needed: without any one of them, the
-- role's own operations fail (the first failing one is shown)
--
CREATE FUNCTION roles_test.without(r name, priv text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    o record;
    res text := 'nothing failed';
BEGIN
    BEGIN
        IF priv IS NOT NULL THEN
            EXECUTE format('REVOKE %s FROM %I', priv, r);
        END IF;
        FOR o IN SELECT * FROM roles_test.ops WHERE for_role = r ORDER BY ord LOOP
            res := roles_test.as_role(r, o.sql);
            IF res ~ '^[0-9A-Z]{5} ' THEN
                res := o.op || ': ' || res;
                EXIT;
            END IF;
            res := 'nothing failed';
        END LOOP;
        RAISE EXCEPTION USING ERRCODE = 'RB000';    -- undo the revoke and the calls
    EXCEPTION WHEN SQLSTATE 'RB000' THEN
        NULL;
    END;
    RETURN res;
END
$$;
-- the privileges each role holds on okno's objects, from the catalogs
CREATE VIEW roles_test.granted AS
SELECT g.grantee::regrole::name AS r,
       format('%s ON %s', g.privilege_type, c.oid::regclass) AS priv
  FROM pg_class c, aclexplode(c.relacl) g
 WHERE c.relnamespace = 'public'::regnamespace AND g.grantee::regrole::text LIKE 'regress_okno_%'
UNION ALL
SELECT g.grantee::regrole::name,
       format('%s (%s) ON %s', g.privilege_type, quote_ident(a.attname), a.attrelid::regclass)
  FROM pg_attribute a, aclexplode(a.attacl) g
 WHERE a.attrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)
   AND g.grantee::regrole::text LIKE 'regress_okno_%'
UNION ALL
SELECT g.grantee::regrole::name, format('EXECUTE ON FUNCTION %s', p.oid::regprocedure)
  FROM pg_proc p, aclexplode(p.proacl) g
 WHERE p.pronamespace = 'public'::regnamespace AND g.grantee::regrole::text LIKE 'regress_okno_%';

SELECT g.r AS role, g.priv AS "without", roles_test.without(g.r, g.priv) AS first_failure
  FROM roles_test.granted g JOIN roles_test.roles r ON r.r = g.r
 ORDER BY r.ord, g.priv COLLATE "C";
SELECT g.r AS role, count(*) AS privileges, count(*) FILTER (WHERE roles_test.without(g.r, g.priv) ~ ': 42501 ') AS each_needed
  FROM roles_test.granted g GROUP BY g.r ORDER BY g.r;
-- and with all of them nothing fails
SELECT r.r AS role, roles_test.without(r.r, NULL) AS with_the_recipe
  FROM roles_test.roles r WHERE r.r <> 'regress_okno_nobody' ORDER BY r.ord;

--
-- Without step 0 (PUBLIC keeps EXECUTE, as after CREATE EXTENSION): the
-- table privileges alone still refuse every operation that writes; only
-- okno_canonical, okno_fingerprint and okno_errors, which read no table,
-- run for anyone, and a replay for maintenance, which reads every column a
-- replay reads (okno_verify needs them since 0.5.0) and writes nothing
--
SAVEPOINT public_execute;
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT d.objid::regprocedure FROM pg_depend d
              WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
                AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno') LOOP
        EXECUTE format('GRANT EXECUTE ON ROUTINE %s TO PUBLIC', f);
    END LOOP;
END
$$;
SELECT roles_test.snapshot() AS before \gset
SELECT r.r AS role, o.op, roles_test.outcome(roles_test.as_role(r.r, o.sql)) AS result
  FROM roles_test.roles r CROSS JOIN roles_test.ops o
 WHERE o.for_role IS DISTINCT FROM r.r
 ORDER BY r.ord, o.ord;
SELECT roles_test.snapshot() = :'before' AS nothing_written;
ROLLBACK TO SAVEPOINT public_execute;

--
-- What the table privileges also allow, without okno (all rolled back
-- here): the application may insert bookings, keys and events, cancel or
-- un-cancel any booking, and read every actor's stored responses; the
-- relay may mark any event delivered; maintenance may delete any key or
-- event.  Column privileges keep the rest out of reach.
--
CREATE TABLE roles_test.problems_before AS SELECT * FROM okno_verify();
SAVEPOINT direct;
SELECT r AS role, op, roles_test.as_role(r, sql) AS result FROM (VALUES
  (1, 'regress_okno_app', 'insert a booking',
      format('INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at) VALUES (%s, %s, %L, %L)',
             :resource, :actor, '2032-05-02 10:00+00', '2032-05-02 11:00+00')),
  (2, 'regress_okno_app', 'insert a booking with its id',
      format('INSERT INTO bookings (id, resource_id, actor_id, starts_at, ends_at) OVERRIDING SYSTEM VALUE VALUES (-1, %s, %s, %L, %L)',
             :resource, :actor, '2032-05-03 10:00+00', '2032-05-03 11:00+00')),
  (3, 'regress_okno_app', 'insert a cancelled booking',
      format('INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at, status) VALUES (%s, %s, %L, %L, %L)',
             :resource, :actor, '2032-05-04 10:00+00', '2032-05-04 11:00+00', 'cancelled')),
  (4, 'regress_okno_app', 'un-cancel a booking', format('UPDATE bookings SET status = %L WHERE id = %s', 'confirmed', :booking)),
  (5, 'regress_okno_app', 'move a booking', format('UPDATE bookings SET starts_at = starts_at WHERE id = %s', :booking)),
  (6, 'regress_okno_app', 'delete a booking', format('DELETE FROM bookings WHERE id = %s', :booking)),
  (7, 'regress_okno_app', 'truncate', 'TRUNCATE bookings'),
  (8, 'regress_okno_app', 'read every stored response', 'SELECT count(*) > 0 FROM (SELECT actor_id, response_body FROM idempotency) s'),
  (9, 'regress_okno_app', 'read a key''s age', 'SELECT max(created_at) FROM idempotency'),
  (10, 'regress_okno_app', 'plant a stored response',
      format('INSERT INTO idempotency (actor_id, request_key, fingerprint, fingerprint_version, response_body) VALUES (%s, %L, %L, 1, %L)',
             :actor, 'roles-planted', repeat('0', 64), '{"id": 0}')),
  (11, 'regress_okno_app', 'rewrite a stored response', format('UPDATE idempotency SET response_body = %L WHERE request_key = %L', '{}', 'roles-1')),
  (12, 'regress_okno_app', 'delete a stored response', format('DELETE FROM idempotency WHERE request_key = %L', 'roles-1')),
  (13, 'regress_okno_app', 'insert an event', 'INSERT INTO outbox (id, kind, payload) VALUES (gen_random_uuid(), ''booking_created'', ''{"booking_id": 0}'')'),
  (14, 'regress_okno_app', 'read events', 'SELECT count(*) FROM outbox'),
  (15, 'regress_okno_relay', 'mark every event delivered', 'UPDATE outbox SET delivered_at = now() WHERE delivered_at IS NULL AND parked_at IS NULL'),
  (16, 'regress_okno_relay', 'rewrite a payload', 'UPDATE outbox SET payload = ''{}'''),
  (17, 'regress_okno_relay', 'insert an event', 'INSERT INTO outbox (id, kind, payload) VALUES (gen_random_uuid(), ''x'', ''{}'')'),
  (18, 'regress_okno_relay', 'delete events', 'DELETE FROM outbox'),
  (19, 'regress_okno_relay', 'read bookings', 'SELECT count(*) FROM bookings'),
  (20, 'regress_okno_maint', 'delete a stored response', format('DELETE FROM idempotency WHERE request_key = %L', 'roles-1')),
  (21, 'regress_okno_maint', 'delete pending events', 'DELETE FROM outbox WHERE delivered_at IS NULL'),
  (22, 'regress_okno_maint', 'change a booking', 'UPDATE bookings SET status = status')
) AS d(ord, r, op, sql) ORDER BY ord;
-- what okno_verify makes of the direct writes
SELECT problem, count(*)
  FROM (SELECT * FROM okno_verify() EXCEPT ALL SELECT * FROM roles_test.problems_before) AS p
 GROUP BY problem ORDER BY problem COLLATE "C";
ROLLBACK TO SAVEPOINT direct;

--
-- The SECURITY DEFINER variant: wrappers with a fixed search_path, owned by
-- a role that holds the application's privileges; the client role may call
-- the wrappers and nothing else
--
GRANT EXECUTE ON FUNCTION okno_create_booking(integer, text, jsonb),
    okno_get_booking(integer, bigint), okno_cancel_booking(integer, bigint)
  TO regress_okno_api;
GRANT SELECT (id) ON actors, resources TO regress_okno_api;
GRANT SELECT (id, resource_id, actor_id, starts_at, ends_at, status),
      INSERT (resource_id, actor_id, starts_at, ends_at),
      UPDATE (status)
   ON bookings TO regress_okno_api;
GRANT SELECT (actor_id, request_key, fingerprint, fingerprint_version, response_body),
      INSERT (actor_id, request_key, fingerprint, fingerprint_version, response_body)
   ON idempotency TO regress_okno_api;
GRANT INSERT (id, kind, payload) ON outbox TO regress_okno_api;
CREATE SCHEMA okno_api AUTHORIZATION regress_okno_api;
SET ROLE regress_okno_api;
CREATE FUNCTION okno_api.create_booking(actor integer, key text, payload jsonb) RETURNS jsonb
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT public.okno_create_booking(actor, key, payload);
END;
CREATE FUNCTION okno_api.get_booking(actor integer, booking_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT public.okno_get_booking(actor, booking_id);
END;
CREATE FUNCTION okno_api.cancel_booking(actor integer, booking_id bigint) RETURNS jsonb
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT public.okno_cancel_booking(actor, booking_id);
END;
-- a new function is executable by PUBLIC (ALTER DEFAULT PRIVILEGES ... IN
-- SCHEMA cannot take that away): revoke it explicitly
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA okno_api FROM PUBLIC;
GRANT USAGE ON SCHEMA okno_api TO regress_okno_client;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA okno_api TO regress_okno_client;
RESET ROLE;

SET ROLE regress_okno_client;
SELECT okno_api.create_booking(:actor, 'roles-3', :'p2') AS card3 \gset
SELECT :'card3'::jsonb - 'id' - 'actor_id' - 'resource_id' AS created_through_the_wrapper;
SELECT okno_api.create_booking(:actor, 'roles-3', :'p2') = :'card3'::jsonb AS replayed,
       okno_api.get_booking(:actor, (:'card3'::jsonb ->> 'id')::bigint) = :'card3'::jsonb AS got,
       okno_api.cancel_booking(:actor, (:'card3'::jsonb ->> 'id')::bigint) ->> 'status' AS cancelled;
RESET ROLE;
SELECT roles_test.snapshot() AS before \gset
SELECT op, roles_test.as_role('regress_okno_client', sql) AS result FROM (VALUES
  (0, 'a reused key, through the wrapper', format('SELECT okno_api.create_booking(%s, %L, %L)', :actor, 'roles-3', :'p1')),
  (1, 'okno directly', format('SELECT okno_create_booking(%s, %L, %L)', :actor, 'roles-4', :'p1')),
  (2, 'insert a booking', format('INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at) VALUES (%s, %s, %L, %L)',
             :resource, :actor, '2032-05-02 10:00+00', '2032-05-02 11:00+00')),
  (3, 'read stored responses', 'SELECT count(*) FROM idempotency'),
  (4, 'read bookings', 'SELECT count(*) FROM bookings'),
  (5, 'insert an event', 'INSERT INTO outbox (id, kind, payload) VALUES (gen_random_uuid(), ''x'', ''{}'')')
) AS d(ord, op, sql) ORDER BY ord;
SELECT roles_test.snapshot() = :'before' AS nothing_written;
-- the wrappers run as their owner, with their own search_path
SELECT p.proname, p.prosecdef, pg_get_userbyid(p.proowner) AS owner, p.proconfig,
       has_function_privilege('regress_okno_nobody', p.oid, 'EXECUTE') AS nobody_may_call
  FROM pg_proc p WHERE p.pronamespace = 'okno_api'::regnamespace ORDER BY 1;

ROLLBACK;

-- nothing is left: okno's ACLs are as they were, and the roles go
SELECT md5(string_agg(acl, ';' ORDER BY acl)) = :'acls_before' AS acls_as_before FROM (
    SELECT format('%s %s', c.oid::regclass, c.relacl) AS acl
      FROM pg_class c
     WHERE c.oid IN (SELECT d.objid FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e'
                        AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno'))
        OR c.oid IN ('actors'::regclass, 'resources'::regclass, 'bookings'::regclass,
                     'idempotency'::regclass, 'outbox'::regclass)
    UNION ALL
    SELECT format('%s.%s %s', a.attrelid::regclass, a.attname, a.attacl)
      FROM pg_attribute a
     WHERE (a.attrelid IN (SELECT d.objid FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e'
                              AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno'))
            OR a.attrelid IN ('actors'::regclass, 'resources'::regclass, 'bookings'::regclass,
                              'idempotency'::regclass, 'outbox'::regclass))
       AND a.attacl IS NOT NULL
    UNION ALL
    SELECT format('%s %s', p.oid::regprocedure, p.proacl)
      FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
     WHERE d.deptype = 'e' AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno')
) AS acls;
SELECT to_regnamespace('roles_test') IS NULL AS no_roles_test, to_regnamespace('okno_api') IS NULL AS no_okno_api,
       (SELECT count(*) FROM actors WHERE name = 'roles actor') AS fixture_actors;
DROP ROLE regress_okno_app;
DROP ROLE regress_okno_relay;
DROP ROLE regress_okno_maint;
DROP ROLE regress_okno_nobody;
DROP ROLE regress_okno_api;
DROP ROLE regress_okno_client;
SELECT count(*) AS roles_left FROM pg_roles
 WHERE rolname IN ('regress_okno_app', 'regress_okno_relay', 'regress_okno_maint',
                   'regress_okno_nobody', 'regress_okno_api', 'regress_okno_client');
