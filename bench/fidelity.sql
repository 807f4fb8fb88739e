-- bench/fidelity.sql: the plpgsql baseline must do what okno does, or the
-- comparison means nothing.  Run by tools/bench before measuring, in a
-- transaction that is rolled back; prints one line "fidelity: N checks, M differ"
-- and the differing checks.  standard input is test/vectors/vectors.tsv.
\set ON_ERROR_STOP 1
BEGIN;

CREATE TEMP TABLE vec (payload text, canonical text, fingerprint text);
\copy vec FROM pstdin

-- the outcome of a statement: 'ok:' and its result, or the SQLSTATE
CREATE FUNCTION pg_temp.outcome(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE stmt INTO r;
  RETURN 'ok:' || coalesce(r, 'NULL');
EXCEPTION WHEN OTHERS THEN
  RETURN 'error:' || SQLSTATE;
END $$;

CREATE TEMP TABLE checks (what text, okno text, plp text);
-- what okno_verify reports before (the benchmark's seed data may have
-- bookings whose events were drained and truncated away)
CREATE TEMP TABLE verify_before AS SELECT * FROM okno_verify();

-- 1. the 64 independent vectors: canonical text and fingerprint
INSERT INTO checks
SELECT 'vector ' || payload, canonical || ' ' || fingerprint,
       pg_temp.outcome(format('SELECT plp.canonical(%L)', payload)) || ' '
       || pg_temp.outcome(format('SELECT plp.fingerprint(%L)', payload))
  FROM vec;
UPDATE checks SET okno = 'ok:' || split_part(okno, ' ', 1) || ' ok:' || split_part(okno, ' ', 2)
 WHERE what LIKE 'vector %';

-- 2. payloads that must be rejected (and a few accepted forms)
CREATE TEMP TABLE payloads (p text);
INSERT INTO payloads VALUES
  ('[]'), ('"text"'), ('1'), ('null'), ('{}'), ('true'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z"}'),
  ('{"resource_id":1,"ends_at":"2026-12-01T10:00:00Z"}'),
  ('{"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z","note":"x"}'),
  ('{"Resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":"1","starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":true,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":null,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":[1],"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":0,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":-0,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":-1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1.5,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1.0000000001,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":0.5,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":2147483648,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":2147483647.5,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1e400,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1e-400,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":1764572400,"ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":null,"ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":false}'),
  ('{"resource_id":1,"starts_at":"now","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"today","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"infinity"}'),
  ('{"resource_id":1,"starts_at":"epoch","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01 10:00:00+03:00","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+0300","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00 Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":" 2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z ","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Europe/Moscow","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00MSK","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"20261201T100000Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"+2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"12026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00.Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00.1234567Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00,5Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00.1234567","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"２０２６-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-02-29T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-04-31T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-13-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-00-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-00T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T24:00:00Z","ends_at":"2026-12-02T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:60:00Z","ends_at":"2026-12-02T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2016-12-31T23:59:60Z","ends_at":"2017-01-01T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+24:00","ends_at":"2026-12-02T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+05:60","ends_at":"2026-12-02T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"0000-12-31T23:59:59Z","ends_at":"2026-12-02T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"0001-01-01T00:00:00+00:01","ends_at":"2026-12-02T11:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"9999-12-31T23:30:00-01:00"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T10:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T11:00:00Z","ends_at":"2026-12-01T10:00:00Z"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T07:00:00Z"}'),
  ('{"resource_id":"x","starts_at":"now","ends_at":"now","zzz":1}'),
  ('{"resource_id":"x","ends_at":"now"}'),
  ('{"resource_id":0,"starts_at":"now","ends_at":"now"}'),
  ('{"resource_id":1,"starts_at":"now","ends_at":"then"}'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}'),
  ('{"resource_id":1.0,"starts_at":"2026-12-01t07:00:00z","ends_at":"2026-12-01T08:00:00-00:00"}'),
  ('{"resource_id":1e0,"starts_at":"2026-12-01T07:00:00.000000Z","ends_at":"2026-12-01T08:00:00.0+00:00"}'),
  ('{"resource_id":2147483647,"starts_at":"2026-12-01T07:00:00.5Z","ends_at":"2026-12-01T07:00:00.500001Z"}'),
  ('{"resource_id":1,"starts_at":"2024-02-29T23:59:59.999999+23:59","ends_at":"2024-03-01T00:00:00-23:59"}'),
  ('{"resource_id":1,"starts_at":"0000-12-31T23:00:00-01:00","ends_at":"9999-12-31T23:59:59.999999Z"}'),
  ('{"resource_id":1,"starts_at":"1969-07-20T20:17:40Z","ends_at":"1970-01-01T00:00:00Z"}'),
  ('{"resource_id":10E-1,"starts_at":"2026-12-01t07:00:00-00:00","ends_at":"2026-12-01T08:00:00+00:00"}');
INSERT INTO checks
SELECT 'canonical ' || p, pg_temp.outcome(format('SELECT okno_canonical(%L)', p)),
       pg_temp.outcome(format('SELECT plp.canonical(%L)', p))
  FROM payloads;
INSERT INTO checks VALUES ('canonical NULL', pg_temp.outcome('SELECT okno_canonical(NULL)'),
                           pg_temp.outcome('SELECT plp.canonical(NULL)'));

-- 3. keys
INSERT INTO checks
SELECT 'key ' || coalesce(k, 'NULL'),
       pg_temp.outcome(format('SELECT okno_create_booking(1, %L, %L)', k, '[]')),
       pg_temp.outcome(format('SELECT plp.create_booking(1, %L, %L)', k, '[]'))
  FROM (VALUES (NULL), (''), ('a b'), (' a'), ('a/b'), ('a:b'), (E'a\nb'), ('ключ'), ('é'),
               (repeat('x', 81)), ('ok-key.1_'), (repeat('k', 80))) AS t(k);

-- 4. the create contract, step by step, both ways round: each implementation
-- replays what the other stored, byte for byte
INSERT INTO actors (id, name) VALUES (900001, 'fidelity');
INSERT INTO resources (id, name) VALUES (900001, 'fidelity room'), (900002, 'fidelity room 2');
CREATE FUNCTION pg_temp.pl(r int, s text, e text) RETURNS text LANGUAGE sql AS $$
  SELECT format('{"resource_id":%s,"starts_at":"%s","ends_at":"%s"}', r, s, e) $$;
CREATE FUNCTION pg_temp.same(what text, a text, b text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO checks VALUES (what, a, b) $$;
-- okno creates, plp replays (the same card), plp rejects a reuse, okno too
SELECT pg_temp.same('okno create / plp replay',
  pg_temp.outcome(format('SELECT okno_create_booking(900001, %L, %L)', 'f1', pg_temp.pl(900001, '2031-01-01T10:00:00+03:00', '2031-01-01T11:00:00+03:00'))),
  pg_temp.outcome(format('SELECT plp.create_booking(900001, %L, %L)', 'f1', pg_temp.pl(900001, '2031-01-01T07:00:00Z', '2031-01-01T08:00:00Z'))));
SELECT pg_temp.same('key_reused',
  pg_temp.outcome(format('SELECT okno_create_booking(900001, %L, %L)', 'f1', pg_temp.pl(900001, '2031-01-01T07:00:00Z', '2031-01-01T09:00:00Z'))),
  pg_temp.outcome(format('SELECT plp.create_booking(900001, %L, %L)', 'f1', pg_temp.pl(900001, '2031-01-01T07:00:00Z', '2031-01-01T09:00:00Z'))));
SELECT pg_temp.same('slot_busy',
  pg_temp.outcome(format('SELECT okno_create_booking(900001, %L, %L)', 'f2', pg_temp.pl(900001, '2031-01-01T07:30:00Z', '2031-01-01T09:00:00Z'))),
  pg_temp.outcome(format('SELECT plp.create_booking(900001, %L, %L)', 'f2', pg_temp.pl(900001, '2031-01-01T07:30:00Z', '2031-01-01T09:00:00Z'))));
SELECT pg_temp.same('actor_missing',
  pg_temp.outcome(format('SELECT okno_create_booking(900009, %L, %L)', 'f3', pg_temp.pl(900001, '2031-02-01T07:30:00Z', '2031-02-01T09:00:00Z'))),
  pg_temp.outcome(format('SELECT plp.create_booking(900009, %L, %L)', 'f3', pg_temp.pl(900001, '2031-02-01T07:30:00Z', '2031-02-01T09:00:00Z'))));
SELECT pg_temp.same('actor NULL',
  pg_temp.outcome(format('SELECT okno_create_booking(NULL, %L, %L)', 'f3', pg_temp.pl(900001, '2031-02-01T07:30:00Z', '2031-02-01T09:00:00Z'))),
  pg_temp.outcome(format('SELECT plp.create_booking(NULL, %L, %L)', 'f3', pg_temp.pl(900001, '2031-02-01T07:30:00Z', '2031-02-01T09:00:00Z'))));
SELECT pg_temp.same('resource_missing',
  pg_temp.outcome(format('SELECT okno_create_booking(900001, %L, %L)', 'f3', pg_temp.pl(900009, '2031-02-01T07:30:00Z', '2031-02-01T09:00:00Z'))),
  pg_temp.outcome(format('SELECT plp.create_booking(900001, %L, %L)', 'f3', pg_temp.pl(900009, '2031-02-01T07:30:00Z', '2031-02-01T09:00:00Z'))));
SELECT pg_temp.same('payload NULL',
  pg_temp.outcome($$SELECT okno_create_booking(900001, 'f3', NULL)$$),
  pg_temp.outcome($$SELECT plp.create_booking(900001, 'f3', NULL)$$));
-- plp creates, okno replays
SELECT pg_temp.same('plp create / okno replay',
  (SELECT 'ok:' || (plp.create_booking(900001, 'f4', pg_temp.pl(900002, '2031-03-01T10:00:00.25-05:00', '2031-03-01T11:00:00-05:00')::jsonb) - 'id')::text),
  (SELECT 'ok:' || (okno_create_booking(900001, 'f4', pg_temp.pl(900002, '2031-03-01T15:00:00.250000Z', '2031-03-01T16:00:00Z')::jsonb) - 'id')::text));
SELECT pg_temp.same('plp create: one booking, one key, one event',
  (SELECT 'ok:' || count(*) FROM bookings WHERE actor_id = 900001),
  (SELECT 'ok:' || (SELECT count(*) FROM idempotency WHERE actor_id = 900001)
     + (SELECT count(*) FROM outbox o JOIN bookings b ON b.id = (o.payload->>'booking_id')::bigint
         WHERE b.actor_id = 900001 AND o.kind = 'booking_created') - 2));
SELECT pg_temp.same('plp event id is a UUID v7',
  'ok:7', (SELECT 'ok:' || substr(o.id::text, 15, 1) FROM outbox o JOIN bookings b ON b.id = (o.payload->>'booking_id')::bigint
            WHERE b.actor_id = 900001 AND b.resource_id = 900002));
SELECT pg_temp.same('okno_verify: nothing new after both',
  'ok:0', (SELECT 'ok:' || count(*) FROM (SELECT * FROM okno_verify() EXCEPT ALL SELECT * FROM verify_before) AS v));

SELECT format('fidelity: %s checks, %s differ', count(*), count(*) FILTER (WHERE okno IS DISTINCT FROM plp))
  FROM checks;
SELECT what, okno, plp FROM checks WHERE okno IS DISTINCT FROM plp;
ROLLBACK;
