--
-- drain_hint: a session's first drain starts where the last scan from the
-- start found the first due event (the sequence okno_drain_hint), and falls
-- back to a scan from the start when nothing is found from there
--
SET client_min_messages = warning;
-- the hint an id gives: its high 64 bits, sign bit flipped
CREATE SCHEMA drain_hint_test;
CREATE FUNCTION drain_hint_test.hint_of(u uuid) RETURNS bigint LANGUAGE sql AS
$$ SELECT ('x' || substr(replace(u::text, '-', ''), 1, 16))::bit(64)::bigint # (-9223372036854775808)::bigint $$;
SELECT drain_hint_test.hint_of('00000000-0000-0000-0000-000000000000') AS nil,
       drain_hint_test.hint_of('7fffffff-ffff-ffff-0000-000000000000') AS middle_minus,
       drain_hint_test.hint_of('80000000-0000-0000-0000-000000000000') AS middle,
       drain_hint_test.hint_of('ffffffff-ffff-ffff-ffff-ffffffffffff') AS top;
-- events other tests left pending are set aside
UPDATE outbox SET delivered_at = clock_timestamp() WHERE delivered_at IS NULL AND parked_at IS NULL;
-- no hint yet
ALTER SEQUENCE okno_drain_hint RESTART;
SELECT pg_sequence_last_value('okno_drain_hint') IS NULL AS no_hint;
INSERT INTO outbox (id, kind, payload) VALUES
  ('01900000-0000-7000-8000-00000000000a', 'hint_test', '{"e":"a"}'),
  ('01910000-0000-7000-8000-00000000000b', 'hint_test', '{"e":"b"}'),
  ('01920000-0000-7000-8000-00000000000c', 'hint_test', '{"e":"c"}');

-- a new session without a hint scans from the start, and records where it
-- found the first event
\c
SELECT payload FROM okno_drain_once();
SELECT pg_sequence_last_value('okno_drain_hint') = drain_hint_test.hint_of('01900000-0000-7000-8000-00000000000a') AS hint_is_a;

-- a new session starts from the hint: with the hint at c, c comes before b
SELECT setval('okno_drain_hint', drain_hint_test.hint_of('01920000-0000-7000-8000-00000000000c')) IS NOT NULL AS hint_set_to_c;
\c
SELECT payload FROM okno_drain_once();
-- nothing after c: a scan from the start finds b, and the hint follows
SELECT payload FROM okno_drain_once();
SELECT pg_sequence_last_value('okno_drain_hint') = drain_hint_test.hint_of('01910000-0000-7000-8000-00000000000b') AS hint_is_b;
SELECT payload FROM okno_drain_once();

-- a hint above every event: nothing from there, so from the start
INSERT INTO outbox (id, kind, payload) VALUES ('01930000-0000-7000-8000-00000000000d', 'hint_test', '{"e":"d"}');
SELECT setval('okno_drain_hint', drain_hint_test.hint_of('ffffffff-ffff-ffff-ffff-ffffffffffff')) IS NOT NULL AS hint_at_top;
\c
SELECT payload FROM okno_drain_once();
SELECT pg_sequence_last_value('okno_drain_hint') = drain_hint_test.hint_of('01930000-0000-7000-8000-00000000000d') AS hint_is_d;

-- the lowest hint is the start itself
INSERT INTO outbox (id, kind, payload) VALUES ('00000000-0000-0000-0000-000000000001', 'hint_test', '{"e":"e"}');
SELECT setval('okno_drain_hint', -9223372036854775808) IS NOT NULL AS hint_at_bottom;
\c
SELECT payload FROM okno_drain_once();
SELECT pg_sequence_last_value('okno_drain_hint') = -9223372036854775808 AS hint_is_bottom;

-- an event whose id has exactly the hint's high bits and nothing below
INSERT INTO outbox (id, kind, payload) VALUES ('01940000-0000-7000-0000-000000000000', 'hint_test', '{"e":"exact"}');
SELECT setval('okno_drain_hint', drain_hint_test.hint_of('01940000-0000-7000-0000-000000000000')) IS NOT NULL AS hint_set;
\c
SELECT payload FROM okno_drain_once();

-- okno_drain(n): a batch from the hint, in id order, then what lies below
INSERT INTO outbox (id, kind, payload) VALUES
  ('01950000-0000-7000-8000-00000000000f', 'hint_test', '{"e":"f"}'),
  ('01960000-0000-7000-8000-000000000010', 'hint_test', '{"e":"g"}'),
  ('01970000-0000-7000-8000-000000000011', 'hint_test', '{"e":"h"}');
SELECT setval('okno_drain_hint', drain_hint_test.hint_of('01960000-0000-7000-8000-000000000010')) IS NOT NULL AS hint_at_g;
\c
SELECT payload, attempts FROM okno_drain(10);
SELECT payload, attempts FROM okno_drain(10);
SELECT payload, attempts FROM okno_drain(10);

-- a drain that rolls back moved the hint (setval is not transactional), and
-- the event is handed out again all the same
INSERT INTO outbox (id, kind, payload) VALUES ('01980000-0000-7000-8000-000000000012', 'hint_test', '{"e":"i"}');
\c
BEGIN;
SELECT payload FROM okno_drain_once();
ROLLBACK;
SELECT pg_sequence_last_value('okno_drain_hint') = drain_hint_test.hint_of('01980000-0000-7000-8000-000000000012') AS hint_is_i;
SELECT payload FROM okno_drain_once();

-- a delayed event behind the hint is found by the scan from the start once
-- nothing else is due
INSERT INTO outbox (id, kind, payload, available_at) VALUES
  ('01990000-0000-7000-8000-000000000013', 'hint_test', '{"e":"j"}', clock_timestamp() + interval '1 hour');
INSERT INTO outbox (id, kind, payload) VALUES ('019a0000-0000-7000-8000-000000000014', 'hint_test', '{"e":"k"}');
\c
SELECT payload FROM okno_drain_once();
UPDATE outbox SET available_at = NULL WHERE id = '01990000-0000-7000-8000-000000000013';
\c
SELECT payload FROM okno_drain_once();
SELECT payload FROM okno_drain_once();

-- a drainer needs no privilege on the hint: okno reads and writes it as
-- the sequence's owner
CREATE ROLE regress_okno_hint_relay;
GRANT EXECUTE ON FUNCTION okno_drain_once(), okno_drain(integer) TO regress_okno_hint_relay;
GRANT SELECT (id, kind, payload, attempts, delivered_at, parked_at, available_at, order_key), UPDATE (delivered_at)
   ON outbox TO regress_okno_hint_relay;
INSERT INTO outbox (id, kind, payload) VALUES ('019b0000-0000-7000-8000-000000000015', 'hint_test', '{"e":"l"}');
ALTER SEQUENCE okno_drain_hint RESTART;
\c
SET ROLE regress_okno_hint_relay;
SELECT payload FROM okno_drain_once();
SELECT last_value FROM okno_drain_hint;
RESET ROLE;
SELECT pg_sequence_last_value('okno_drain_hint') = drain_hint_test.hint_of('019b0000-0000-7000-8000-000000000015') AS hint_is_l;
REVOKE ALL ON outbox FROM regress_okno_hint_relay;
REVOKE ALL ON FUNCTION okno_drain_once(), okno_drain(integer) FROM regress_okno_hint_relay;
DROP ROLE regress_okno_hint_relay;

-- nothing left behind, and every test event was delivered exactly once
SELECT count(*) AS pending FROM outbox WHERE delivered_at IS NULL AND parked_at IS NULL;
SELECT count(*) AS test_events, count(delivered_at) AS delivered FROM outbox WHERE kind = 'hint_test';
SELECT * FROM okno_verify() WHERE detail LIKE '%hint_test%';
DROP SCHEMA drain_hint_test CASCADE;
