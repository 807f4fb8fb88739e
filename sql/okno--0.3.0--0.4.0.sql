/* okno--0.3.0--0.4.0.sql: a shared starting point for new sessions' drains */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.4.0'" to load this file. \quit

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
-- (to okno's owner, whoever runs the update)
DO $okno$
BEGIN
    EXECUTE pg_catalog.format('GRANT ALL ON SEQUENCE @extschema@.okno_drain_hint TO %I WITH GRANT OPTION',
        (SELECT pg_catalog.pg_get_userbyid(e.extowner) FROM pg_catalog.pg_extension AS e
          WHERE e.extname OPERATOR(pg_catalog.=) 'okno'));
END
$okno$;
