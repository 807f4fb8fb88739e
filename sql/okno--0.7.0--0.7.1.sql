/* okno--0.7.0--0.7.1.sql: okno's owner holds its privileges on okno's tables again */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.7.1'" to load this file. \quit

-- The role that owns okno (pg_extension.extowner: the role that ran
-- CREATE EXTENSION) holds SELECT, INSERT, UPDATE, DELETE and TRUNCATE on
-- okno's tables, USAGE, SELECT and UPDATE on its sequence and SELECT on
-- its views, with the grant option: okno_idempotent, okno_purge,
-- okno_verify and the subscribers' calls read and write them as that role
-- (a superuser's call too, as the owner of the application's tables).  Up
-- to 0.7.0 the updates that created okno_subscriber, okno_delivery,
-- okno_discarded, okno_subscribers (0.5.0), okno_key and
-- okno_key_tombstone (0.7.0) granted them to the role that ran the update,
-- which is a superuser whenever a DBA updates okno, leaving okno's owner
-- without them.  Those updates grant to okno's owner now; this one grants
-- to it what a database updated before is missing.  Grants made to the
-- role that ran those updates stay (a superuser, who needs none; a role
-- may have been given them from it since).  Only okno's own objects are
-- touched: the application's tables are neither read nor altered.
DO $okno$
DECLARE
    owner_name pg_catalog.text := (SELECT pg_catalog.pg_get_userbyid(e.extowner)
                                     FROM pg_catalog.pg_extension AS e
                                    WHERE e.extname OPERATOR(pg_catalog.=) 'okno');
BEGIN
    EXECUTE pg_catalog.format(
        'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE'
        ' @extschema@.okno_discarded, @extschema@.okno_subscriber, @extschema@.okno_delivery,'
        ' @extschema@.okno_purge_horizon, @extschema@.okno_key, @extschema@.okno_key_tombstone'
        ' TO %I WITH GRANT OPTION', owner_name);
    EXECUTE pg_catalog.format(
        'GRANT USAGE, SELECT, UPDATE ON SEQUENCE @extschema@.okno_drain_hint TO %I WITH GRANT OPTION',
        owner_name);
    EXECUTE pg_catalog.format(
        'GRANT SELECT ON @extschema@.okno_outbox_status, @extschema@.okno_subscribers TO %I WITH GRANT OPTION',
        owner_name);
END
$okno$;
