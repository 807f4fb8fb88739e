-- test/stress/bad_input.sql: the generator and oracle of bad_input.sh.
--
-- Loaded into a fresh database by bad_input.sh.  It installs okno, seeds
-- three actors and four resources, and creates schema "stress" with
--
--   stress.run(total, seed, batch)   a procedure that makes `total` calls of
--                                    okno's functions with random, mutated
--                                    and valid inputs, each in its own
--                                    subtransaction (a BEGIN ... EXCEPTION
--                                    block), committing every `batch` calls;
--   stress.calls                     one row per call: function, outcome
--                                    ('ok', 'ok_created', 'ok_replayed' or
--                                    the SQLSTATE);
--   stress.unexpected                every call whose outcome is not a
--                                    documented one, or that broke an
--                                    oracle, with its input.
--
-- Every outcome is checked against the contract in docs/REFERENCE.md
-- where the input says what it must be:
--   * okno_create_booking: a key outside ^[A-Za-z0-9_.-]{1,80}$ is OKB01;
--     a good key with a payload built to be invalid is OKB02; a good key
--     with a valid payload ends in success, OKB03, OKB04, OKB05 or OKB06,
--     or OKB11 when okno_purge left a tombstone of the key (0.7.0);
--     a replay (an equivalent form of a stored request) returns the stored
--     response unchanged; other data under a stored key is OKB04; any call
--     in a read-only transaction is 25006;
--   * okno_canonical / okno_fingerprint: a payload built to be valid gives
--     exactly the canonical text computed here independently (and its
--     SHA-256); one built to be invalid is OKB02; any success has the
--     canonical shape, and the fingerprint is the SHA-256 of the canonical
--     text;
--   * okno_drain: max_events outside 1..10000 or NULL is 22023, otherwise
--     at most max_events rows, all of them delivered afterwards;
--   * okno_record_failure: a NULL argument is 22004, an unknown event
--     OKB08; the stored last_error is the longest prefix of the text that
--     fits in 2000 bytes at a character boundary;
--   * okno_release / okno_requeue: NULL is 22004; the boolean answer matches
--     the event's state before the call;
--   * okno_get_booking / okno_cancel_booking: success exactly when the
--     booking exists and belongs to the actor, otherwise OKB07;
--   * okno_purge: a NULL age, or one with a negative field, is 22023,
--     otherwise success.
-- Inputs built to be ambiguous (random byte mutations) only have to end
-- in a documented outcome.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;

CREATE EXTENSION okno CASCADE;
DO $$ BEGIN PERFORM okno_create_tables(); END $$;
INSERT INTO public.actors (id, name) VALUES (1, 'ann'), (2, 'boris'), (3, 'clara');
INSERT INTO public.resources (id, name) VALUES (1, 'room 1'), (2, 'room 2'), (3, 'room 3'), (4, 'hall');

CREATE SCHEMA stress;

-- kind: what the input says the outcome must be (create: 'read-only',
-- 'bad key', 'replay', 'reuse', 'valid', 'invalid', 'mutated';
-- canonical and fingerprint: 'valid', 'invalid', 'mutated')
CREATE UNLOGGED TABLE stress.calls (fn text NOT NULL, outcome text NOT NULL, kind text);
CREATE TABLE stress.unexpected (
    seq bigint NOT NULL,          -- the step that made the call
    fn text NOT NULL,
    outcome text NOT NULL,
    problem text NOT NULL,
    message text,
    input text
);
-- event ids seen (from drains and creates), to feed the outbox functions
CREATE UNLOGGED TABLE stress.ring (slot integer PRIMARY KEY, id uuid NOT NULL);
CREATE TABLE stress.counters (name text PRIMARY KEY, n bigint NOT NULL);
-- inputs that PostgreSQL's jsonb input itself rejected (never sent to okno)
INSERT INTO stress.counters VALUES ('not_json', 0), ('ring', 0);

-- the documented SQLSTATEs: anything else is a failure
CREATE FUNCTION stress.documented(st text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT st = ANY (ARRAY['OKB01','OKB02','OKB03','OKB04','OKB05','OKB06','OKB07','OKB08',
                         'OKB11','22023','22004','40001','25006'])
$$;

-- whether okno_purge left a tombstone of this booking's key (0.7.0: a
-- retry with it is then OKB11)
CREATE FUNCTION stress.expired(actor integer, k text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT FROM public.okno_key_tombstone AS t
                  WHERE t.key_hash = sha256(convert_to(':' || k || ':' || actor, 'UTF8')))
$$;

-- a random integer in lo..hi
CREATE FUNCTION stress.rnd(lo bigint, hi bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$ SELECT lo + floor(random() * (hi - lo + 1))::bigint $$;

CREATE FUNCTION stress.pick(a text[]) RETURNS text
LANGUAGE sql VOLATILE AS $$ SELECT a[1 + floor(random() * cardinality(a))::int] $$;

-- an input, printable on one line and short
CREATE FUNCTION stress.show(s text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN s IS NULL THEN 'NULL'
              ELSE regexp_replace(
                     CASE WHEN length(s) > 160
                          THEN left(s, 120) || format('...(%s chars, %s bytes)...', length(s), octet_length(s)) || right(s, 20)
                          ELSE s END,
                     '[\x01-\x1f\x7f]', '?', 'g') END
$$;

-- ------------------------------------------------------------------ keys
-- A key of len characters of class cls:
--   0 the allowed set  1 letters and digits  2 allowed + one space
--   3 ASCII punctuation  4 quotes and backslash  5 control characters
--   6 multibyte UTF-8  7 everything mixed  8 whitespace
--   9 allowed + one look-alike (Cyrillic a, fullwidth digit, dotless i)
CREATE FUNCTION stress.key_of(len integer, cls integer) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  allowed constant text := 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-';
  punct constant text := '!"#$%&''()*+,/:;<=>?@[\]^`{|}~';
  quotes constant text := '''"`\';
  ctrl text;
  multi text;
  ws text;
  pool text;
  k text;
  pos integer;
BEGIN
  IF len <= 0 THEN RETURN ''; END IF;
  SELECT string_agg(chr(c), '') INTO ctrl FROM generate_series(1, 31) AS c;
  ctrl := ctrl || chr(127);
  multi := 'éжЖ中文ß' || chr(128512) || chr(769) || chr(65279) || chr(8232) || chr(65297)
           || chr(305) || chr(304) || chr(160) || chr(8203) || chr(1072) || chr(65533) || chr(1114109);
  ws := ' ' || chr(9) || chr(10) || chr(13) || chr(11) || chr(12);
  pool := CASE cls
            WHEN 0 THEN allowed
            WHEN 1 THEN 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
            WHEN 2 THEN allowed
            WHEN 3 THEN punct
            WHEN 4 THEN quotes
            WHEN 5 THEN ctrl
            WHEN 6 THEN multi
            WHEN 7 THEN allowed || punct || ctrl || multi || ws
            WHEN 8 THEN ws
            ELSE allowed END;
  SELECT string_agg(substr(pool, 1 + floor(random() * length(pool))::int, 1), '')
    INTO k FROM generate_series(1, len);
  IF cls IN (2, 9) THEN
    pos := 1 + floor(random() * len)::int;
    k := overlay(k PLACING (CASE WHEN cls = 2 THEN ' '
                                 ELSE stress.pick(ARRAY[chr(1072), chr(65297), chr(305), chr(304)]) END)
                 FROM pos FOR 1);
  END IF;
  RETURN k;
END $$;

CREATE FUNCTION stress.key_ok(k text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT k IS NOT NULL AND octet_length(k) BETWEEN 1 AND 80 AND k ~ '^[A-Za-z0-9_.-]+$'
$$;

-- ------------------------------------------------------------ timestamps
-- A generated timestamp: its text, whether the contract makes it valid
-- ('v'), invalid ('x') or leaves it to be seen ('?'), and for 'v' the
-- instant's canonical text, computed here without okno.
CREATE TYPE stress.gen AS (txt text, expect text, canon text);

-- canonical text of a UTC instant (timestamp without time zone, in UTC)
CREATE FUNCTION stress.canon_ts(u timestamp) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(u, 'YYYY-MM-DD"T"HH24:MI:SS')
         || CASE WHEN extract(microseconds FROM u)::bigint % 1000000 <> 0
                 THEN '.' || lpad((extract(microseconds FROM u)::bigint % 1000000)::text, 6, '0')
                 ELSE '' END
         || 'Z'
$$;

-- a earlier than b, for two canonical texts (not by text order: a
-- fraction sorts before 'Z')
CREATE FUNCTION stress.canon_lt(a text, b text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$ SELECT rtrim(a, 'Z')::timestamp < rtrim(b, 'Z')::timestamp $$;

-- A random instant: mostly near 2026, some anywhere in 0001..9999, some at
-- both ends of the range (a day either side of it).
CREATE FUNCTION stress.rand_instant() RETURNS timestamp
LANGUAGE plpgsql VOLATILE AS $$
DECLARE r float8 := random();
BEGIN
  IF r < 0.5 THEN
    RETURN timestamp '2026-01-01' + stress.rnd(0, 2 * 366 * 86400) * interval '1 second';
  ELSIF r < 0.75 THEN
    RETURN timestamp '0001-01-01' + stress.rnd(0, 3652058::bigint * 86400 - 1) * interval '1 second';
  ELSIF r < 0.87 THEN
    RETURN timestamp '0001-01-01' + stress.rnd(-86400, 2 * 86400) * interval '1 second';
  ELSE
    RETURN timestamp '9999-12-31 23:59:59' + stress.rnd(-2 * 86400, 86400) * interval '1 second';
  END IF;
END $$;

-- Write the UTC instant u (whole seconds) with frac_digits fractional
-- digits (us is the microsecond part, already a multiple of what those
-- digits can hold when frac_digits <= 6) in a random valid-looking form.
CREATE FUNCTION stress.render_ts(u0 timestamp, frac_digits integer, us integer) RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  u timestamp := date_trunc('second', u0) + us * interval '1 microsecond';
  off integer;
  loc timestamp;
  d text;
  frac text := '';
  zone text;
  sep text := CASE WHEN random() < 0.8 THEN 'T' ELSE 't' END;
  expect text := 'v';
  r float8 := random();
BEGIN
  IF r < 0.3 THEN
    off := 0;
  ELSIF r < 0.45 THEN
    off := stress.pick(ARRAY['1439', '-1439', '1', '-1', '60', '-60', '330', '-210', '845'])::integer;
  ELSE
    off := stress.rnd(-1439, 1439);
  END IF;
  loc := date_trunc('second', u) + off * interval '1 minute';
  IF loc < timestamp '0001-01-01' THEN
    d := '0000-' || to_char(loc, 'MM-DD');
    IF to_char(loc, 'MM-DD') <> '12-31' THEN expect := 'x'; END IF;
  ELSE
    d := to_char(loc, 'YYYY-MM-DD');
  END IF;
  IF loc >= timestamp '10000-01-01' THEN expect := 'x'; END IF;     -- a 5-digit year
  IF u < timestamp '0001-01-01' OR u >= timestamp '10000-01-01' THEN expect := 'x'; END IF;
  IF frac_digits > 0 THEN
    frac := '.' || left(lpad(us::text, 6, '0'), least(frac_digits, 6));
    IF frac_digits > 6 THEN
      frac := frac || substr('123456789', 1, frac_digits - 6);
      expect := 'x';
    END IF;
  END IF;
  IF off = 0 THEN
    zone := stress.pick(ARRAY['Z', 'z', '+00:00', '-00:00']);
  ELSE
    zone := CASE WHEN off > 0 THEN '+' ELSE '-' END
            || lpad((abs(off) / 60)::text, 2, '0') || ':' || lpad((abs(off) % 60)::text, 2, '0');
  END IF;
  RETURN (d || sep || to_char(loc, 'HH24:MI:SS') || frac || zone,
          expect,
          CASE WHEN expect = 'v' THEN stress.canon_ts(u) END)::stress.gen;
END $$;

-- A valid rendering of u with a random number (0..6) of fraction digits;
-- the microseconds are chosen to fit the digits.
CREATE FUNCTION stress.valid_ts(u timestamp) RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE n integer := stress.pick(ARRAY['0','0','0','1','2','3','6','6'])::integer;
BEGIN
  RETURN stress.render_ts(u, n, (floor(random() * 10 ^ n) * 10 ^ (6 - n))::integer);
END $$;

-- The same instant (u with us microseconds) in another valid form, for
-- replays and equivalences.
CREATE FUNCTION stress.same_ts(u timestamp) RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  us integer := (extract(microseconds FROM u)::bigint % 1000000)::integer;
  n integer;
BEGIN
  IF us = 0 THEN n := stress.pick(ARRAY['0', '0', '1', '6'])::integer;
  ELSIF us % 100000 = 0 THEN n := stress.pick(ARRAY['1', '3', '6'])::integer;
  ELSE n := 6; END IF;
  RETURN stress.render_ts(u, n, us);
END $$;

-- A timestamp that the contract rejects: one part of a valid one replaced
-- by a corner, or a whole-string corner.
CREATE FUNCTION stress.bad_ts() RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  part integer := stress.rnd(0, 7)::integer;
  dt text := '2026-12-01';
  sep text := 'T';
  hh text := '10';
  mi text := '00';
  ss text := '00';
  frac text := '';
  zone text := '+03:00';
BEGIN
  CASE part
  WHEN 0 THEN
    dt := stress.pick(ARRAY['2025-02-29', '2100-02-29', '1900-02-29', '2024-02-30', '2026-02-31',
      '2026-04-31', '2026-06-31', '2026-09-31', '2026-11-31', '2026-13-01', '2026-00-10', '2026-12-00',
      '2026-12-32', '2026-1-01', '2026-01-1', '26-12-01', '+2026-12-01', '2026/12/01', '20261201',
      '２０２６-12-01', '2026-12-0１', '0000-00-00', '-001-12-01', '10000-01-01', '2026-12-01x', ' 2026-12-01',
      '2026 -12-01', '2026-12', '9999-12-32', '0000-01-01']);
    IF dt = '0000-01-01' THEN zone := 'Z'; END IF;
  WHEN 1 THEN
    sep := stress.pick(ARRAY[' ', '_', '', 'TT', 'T ', '  ', chr(9), 'x', 'Tt', chr(160), '/']);
  WHEN 2 THEN
    hh := stress.pick(ARRAY['24', '25', '99', '-1', '1', '001', '2', 'T10', '１0']);
  WHEN 3 THEN
    mi := stress.pick(ARRAY['60', '99', '5', '005', '-0', '6O']);
  WHEN 4 THEN
    ss := stress.pick(ARRAY['60', '61', '99', '5', '005', '-1', '60.5']);
  WHEN 5 THEN
    frac := stress.pick(ARRAY['.', '.1234567', '.12345678', '.123456789', '.000000000', ',5', '.5e1',
      '..5', '.-1', '. 5', '.１', '.+5', '.0000001']);
  WHEN 6 THEN
    zone := stress.pick(ARRAY['+24:00', '-24:00', '+25:00', '-25:00', '+99:99', '+00:60', '+12:60',
      '+0000', '+00', '+0', '+000:00', '+00:00:00', '', 'UTC', 'GMT', ' Z', 'Z ', 'ZZ', '+1:00',
      '+01:0', chr(8722) || '05:00', '+05:30Z', 'Europe/Moscow', '+ 01:00', 'z+01:00', 'EST',
      '+24:01', '-99:00', '+23:60', 'Zz', '+03:00' || chr(10)]);
  ELSE
    -- whole-string corners: leap seconds, hour 24, special words, range ends
    RETURN (stress.pick(ARRAY['now', 'today', 'tomorrow', 'yesterday', 'infinity', '-infinity',
      'epoch', 'allballs', '', ' ', '2026-12-01', '10:00:00Z', '2026-12-01T10:00:00',
      '2026-12-01T10:00Z', '2026-12-01T10Z', '20261201T100000Z', '2026-335T10:00:00Z',
      '2026-W49-2T10:00:00Z', 'J2461011', ' 2026-12-01T10:00:00Z', '2026-12-01T10:00:00Z ',
      'Tue, 01 Dec 2026 10:00:00 GMT', '1606816800', '2026-12-01T10:00:00.Z',
      '2026-12-01T10:00:00+03:00[Europe/Moscow]', '2026-12-01T10:00:00 +03:00',
      '2026-12-01 10:00:00+03', '0000-01-01T00:00:00Z', '0000-12-31T23:59:59.999999Z',
      '0000-12-31T23:59:59.999999+00:00', '0001-01-01T00:00:00+00:01', '0001-01-01T00:59:59+01:00',
      '9999-12-31T23:59:59-00:01', '9999-12-31T23:00:00-01:00', '10000-01-01T00:00:00Z',
      '9999-12-31T24:00:00Z', '2026-12-01T24:00:00Z', '2026-12-31T24:00:00+03:00',
      '2016-12-31T23:59:60Z', '1990-12-31T15:59:60-08:00', '2026-12-01T10:00:60.5Z',
      '-0001-01-01T00:00:00Z', '2026-12-01T10:00:00+03:00 BC', '2026-12-01T10:00:00+24:00',
      '2026-12-01T10:00:00-24:00', '2026-12-01T10:00:00.1234567Z', '2026-02-29T10:00:00Z',
      '2026-02-30T10:00:00Z', '2024-02-30T00:00:00Z', '2100-02-29T00:00:00Z',
      '2026-12-01t10:00:00', '2026-12-01T10:00:00.', '2026-12-01T10:00:00,5Z',
      '2026-12-01T10:00:00+3:00', '2026-12-01T10:00:00+0300', '2026-12-01T10:00:00Z+03:00',
      '2026-12-01T10:00:00' || chr(65279) || 'Z', '２０２６-12-01T10:00:00Z']), 'x', NULL)::stress.gen;
  END CASE;
  RETURN (dt || sep || hh || ':' || mi || ':' || ss || frac || zone, 'x', NULL)::stress.gen;
END $$;

-- Explicit valid corners and their canonical text.
CREATE FUNCTION stress.corner_ts() RETURNS stress.gen
LANGUAGE sql VOLATILE AS $$
  SELECT (c[1], 'v', c[2])::stress.gen
    FROM (SELECT stress.pick(ARRAY[
      '0000-12-31T23:00:00-01:00|0001-01-01T00:00:00Z',
      '0000-12-31T00:01:00-23:59|0001-01-01T00:00:00Z',
      '0000-12-31T23:59:59.999999-00:01|0001-01-01T00:00:59.999999Z',
      '0001-01-01T00:00:00Z|0001-01-01T00:00:00Z',
      '0001-01-01T00:00:00-00:00|0001-01-01T00:00:00Z',
      '0001-01-01t23:58:59+23:58|0001-01-01T00:00:59Z',
      '9999-12-31T23:59:59.999999Z|9999-12-31T23:59:59.999999Z',
      '9999-12-31T23:59:59.999999z|9999-12-31T23:59:59.999999Z',
      '9999-12-31T23:59:59+00:01|9999-12-31T23:58:59Z',
      '9999-12-31T23:59:00+23:59|9999-12-31T00:00:00Z',
      '9999-12-31T00:00:00-23:59|9999-12-31T23:59:00Z',
      '2024-02-29T12:00:00Z|2024-02-29T12:00:00Z',
      '2000-02-29T00:00:00+00:00|2000-02-29T00:00:00Z',
      '1600-02-29T23:59:59.5-00:00|1600-02-29T23:59:59.500000Z',
      '2024-03-01T00:30:00+01:00|2024-02-29T23:30:00Z',
      '2026-12-31T23:59:59.000000Z|2026-12-31T23:59:59Z',
      '2026-12-31T23:59:59.0Z|2026-12-31T23:59:59Z',
      '2026-12-01T10:00:00.000001+00:00|2026-12-01T10:00:00.000001Z',
      '2026-12-01T10:00:00.10+03:00|2026-12-01T07:00:00.100000Z',
      '1970-01-01T00:00:00Z|1970-01-01T00:00:00Z',
      '1969-12-31T23:59:59.999999Z|1969-12-31T23:59:59.999999Z',
      '2026-01-01T00:00:00+23:59|2025-12-31T00:01:00Z',
      '2026-12-31T23:59:59-23:59|2027-01-01T23:58:59Z'
    ]) AS s) AS p,
    LATERAL string_to_array(p.s, '|') AS c
$$;

-- A char-level mutation of a valid timestamp: anything may happen.
CREATE FUNCTION stress.mutate(s text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  pos integer := 1 + floor(random() * greatest(length(s), 1))::int;
  c text := stress.pick(ARRAY['0', '1', '9', ':', '-', '+', 'T', 'Z', 't', 'z', '.', ' ', ',', 'é', '/', '2', '6']);
  r float8 := random();
BEGIN
  IF r < 0.4 THEN RETURN overlay(s PLACING c FROM pos FOR 1);
  ELSIF r < 0.7 THEN RETURN overlay(s PLACING '' FROM pos FOR 1);
  ELSE RETURN overlay(s PLACING c FROM pos FOR 0);
  END IF;
END $$;

-- Any timestamp: 50% valid, 35% invalid, 5% explicit corners, 10% mutated.
CREATE FUNCTION stress.any_ts() RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE r float8 := random(); g stress.gen;
BEGIN
  IF r < 0.45 THEN RETURN stress.valid_ts(stress.rand_instant());
  ELSIF r < 0.50 THEN
    -- 7 to 9 fraction digits: invalid
    RETURN stress.render_ts(stress.rand_instant(), stress.rnd(7, 9)::integer, stress.rnd(0, 999999)::integer);
  ELSIF r < 0.85 THEN RETURN stress.bad_ts();
  ELSIF r < 0.90 THEN RETURN stress.corner_ts();
  ELSE
    g := stress.valid_ts(stress.rand_instant());
    RETURN (stress.mutate(g.txt), '?', NULL)::stress.gen;
  END IF;
END $$;

-- ------------------------------------------------------------- resource_id
-- (JSON text, expectation, canonical integer)
CREATE FUNCTION stress.valid_rid(r bigint) RETURNS stress.gen
LANGUAGE sql VOLATILE AS $$
  SELECT (stress.pick(ARRAY[r::text, r::text, r || '.0', r || 'e0', r || 'E+0', (r * 10) || 'e-1',
                            r || '.000000000000000000000', (r * 100) || 'E-2', '0.' || r || 'e' || length(r::text),
                            r || '.0e0']),
          'v', r::text)::stress.gen
$$;

CREATE FUNCTION stress.bad_rid() RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE r float8 := random(); d integer;
BEGIN
  IF r < 0.85 THEN
    RETURN (stress.pick(ARRAY['0', '-1', '-0', '0.0', '-0.0', '0e0', '0.5', '1.5', '2147483648', '1e400', '-1e400',
      '1e-400', '9223372036854775808', '1e10', '-2147483648', '0.999999999999999999999',
      '1.0000000000000000001', '2147483647.5', '2147483648e0', '21474836480e-1', '4294967297',
      '"1"', '" 1"', '"1.0"', 'true', 'false', 'null', '[]', '{}', '[1]', '{"id":1}', '"NaN"', '"Infinity"',
      '-2147483649', '1e-1', '18446744073709551617', '"' || repeat('9', 400) || '"', repeat('9', 400),
      '0.' || repeat('0', 400) || '1', '1' || repeat('0', 1000)]), 'x', NULL)::stress.gen;
  ELSIF r < 0.95 THEN
    d := stress.pick(ARRAY['2', '10', '100', '1000', '2000'])::integer;
    IF random() < 0.5 THEN
      RETURN (repeat('[', d) || '1' || repeat(']', d), 'x', NULL)::stress.gen;
    ELSE
      RETURN (repeat('{"a":', d) || '1' || repeat('}', d), 'x', NULL)::stress.gen;
    END IF;
  ELSE
    RETURN ('[' || (SELECT string_agg(g::text, ',') FROM generate_series(1, 100000) AS g) || ']', 'x', NULL)::stress.gen;
  END IF;
END $$;

-- ----------------------------------------------------------------- payloads
-- Assemble a payload from three JSON value texts, keys in a random order,
-- sometimes with whitespace.
CREATE FUNCTION stress.assemble(rid text, s text, e text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  parts text[] := ARRAY['"resource_id":' || rid, '"starts_at":' || s, '"ends_at":' || e];
  sp text := CASE WHEN random() < 0.8 THEN '' ELSE stress.pick(ARRAY[' ', E'\n', E'\t', '  ', E' \r\n ']) END;
  perm integer[] := stress.pick(ARRAY['{1,2,3}', '{1,3,2}', '{2,1,3}', '{2,3,1}', '{3,1,2}', '{3,2,1}'])::integer[];
BEGIN
  RETURN '{' || sp || parts[perm[1]] || sp || ',' || sp || parts[perm[2]] || sp || ',' || sp || parts[perm[3]] || sp || '}';
END $$;

CREATE FUNCTION stress.canon_text(rid text, s text, e text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT '{"ends_at":"' || e || '","resource_id":' || rid || ',"starts_at":"' || s || '"}'
$$;

-- A valid payload for (r, u_start, u_end), in a random form.
CREATE FUNCTION stress.valid_payload(r bigint, us timestamp, ue timestamp) RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE rid stress.gen := stress.valid_rid(r); s stress.gen := stress.same_ts(us); e stress.gen := stress.same_ts(ue);
BEGIN
  RETURN (stress.assemble(rid.txt, to_json(s.txt)::text, to_json(e.txt)::text),
          CASE WHEN s.expect = 'v' AND e.expect = 'v' AND us < ue THEN 'v' ELSE 'x' END,
          stress.canon_text(rid.canon, s.canon, e.canon))::stress.gen;
END $$;

-- A slot of the booking grid: 14 days x 12 hours, 60 to 120 minutes, on
-- four resources (and a missing one), so that slots collide often.
CREATE FUNCTION stress.grid_payload() RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  s timestamp := timestamp '2026-12-01 08:00' + stress.rnd(0, 13) * interval '1 day'
                 + stress.rnd(0, 11) * interval '1 hour'
                 + CASE WHEN random() < 0.2 THEN interval '30 minutes' ELSE interval '0' END;
  r float8 := random();
  res bigint := CASE WHEN r < 0.94 THEN stress.rnd(1, 4) WHEN r < 0.98 THEN 5 ELSE 2147483647 END;
BEGIN
  RETURN stress.valid_payload(res, s, s + stress.pick(ARRAY['60', '90', '120'])::integer * interval '1 minute');
END $$;

-- A payload of any kind, with its expectation.
CREATE FUNCTION stress.any_payload() RETURNS stress.gen
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r float8 := random();
  rid stress.gen;
  s stress.gen;
  e stress.gen;
  u timestamp;
  huge text;
  k text;
  v text;
BEGIN
  IF r < 0.30 THEN
    -- valid, random instants anywhere in the range
    u := stress.rand_instant();
    IF u >= timestamp '9999-12-31' THEN u := u - interval '2 days'; END IF;
    IF u < timestamp '0001-01-01' THEN u := u + interval '2 days'; END IF;
    s := stress.valid_ts(u);
    e := stress.valid_ts(u + stress.rnd(1, 86400) * interval '1 second');
    rid := stress.valid_rid(CASE WHEN random() < 0.9 THEN stress.rnd(1, 10) ELSE stress.rnd(1, 2147483647) END);
    RETURN (stress.assemble(rid.txt, to_json(s.txt)::text, to_json(e.txt)::text),
            CASE WHEN s.expect = 'v' AND e.expect = 'v' AND stress.canon_lt(s.canon, e.canon) THEN 'v'
                 WHEN s.expect = 'v' AND e.expect = 'v' THEN 'x' ELSE 'x' END,
            CASE WHEN s.expect = 'v' AND e.expect = 'v' THEN stress.canon_text(rid.canon, s.canon, e.canon) END)::stress.gen;
  ELSIF r < 0.60 THEN
    -- one timestamp from the whole generator (valid, corner, invalid or mutated)
    s := stress.any_ts();
    e := stress.valid_ts(timestamp '9999-12-30' + stress.rnd(0, 86399) * interval '1 second');
    rid := stress.valid_rid(stress.rnd(1, 4));
    IF random() < 0.5 THEN
      RETURN (stress.assemble(rid.txt, to_json(s.txt)::text, to_json(e.txt)::text),
              CASE WHEN s.expect = 'v' AND e.expect = 'v' AND stress.canon_lt(s.canon, e.canon) THEN 'v'
                   WHEN s.expect = '?' THEN '?'
                   WHEN s.expect = 'v' AND e.expect = 'v' THEN 'x' ELSE 'x' END,
              CASE WHEN s.expect = 'v' THEN stress.canon_text(rid.canon, s.canon, e.canon) END)::stress.gen;
    ELSE
      -- as ends_at, with a start at the very beginning
      e := s;
      s := stress.valid_ts(timestamp '0001-01-01' + stress.rnd(0, 86399) * interval '1 second');
      RETURN (stress.assemble(rid.txt, to_json(s.txt)::text, to_json(e.txt)::text),
              CASE WHEN s.expect = 'v' AND e.expect = 'v' AND stress.canon_lt(s.canon, e.canon) THEN 'v'
                   WHEN e.expect = '?' THEN '?'
                   WHEN s.expect = 'v' AND e.expect = 'v' THEN 'x' ELSE 'x' END,
              CASE WHEN e.expect = 'v' THEN stress.canon_text(rid.canon, s.canon, e.canon) END)::stress.gen;
    END IF;
  ELSIF r < 0.68 THEN
    -- a bad resource_id
    rid := stress.bad_rid();
    s := stress.valid_ts(timestamp '2026-12-01 10:00');
    e := stress.valid_ts(timestamp '2026-12-01 11:00');
    RETURN (stress.assemble(rid.txt, to_json(s.txt)::text, to_json(e.txt)::text), 'x', NULL)::stress.gen;
  ELSIF r < 0.74 THEN
    -- timestamps of the wrong JSON type
    v := stress.pick(ARRAY['1', '1764583200', 'null', 'true', '[]', '{}', '["2026-12-01T10:00:00Z"]',
                           '{"at":"2026-12-01T10:00:00Z"}', '1e400', '-0']);
    s := stress.valid_ts(timestamp '2026-12-01 10:00');
    IF random() < 0.5 THEN
      RETURN (stress.assemble('1', v, to_json(s.txt)::text), 'x', NULL)::stress.gen;
    ELSE
      RETURN (stress.assemble('1', to_json(s.txt)::text, v), 'x', NULL)::stress.gen;
    END IF;
  ELSIF r < 0.78 THEN
    -- the order of the instants: equal, reversed, one microsecond apart
    u := stress.rand_instant();
    IF u >= timestamp '9999-12-31' THEN u := u - interval '2 days'; END IF;
    IF u < timestamp '0001-01-01' THEN u := u + interval '2 days'; END IF;
    rid := stress.valid_rid(1);
    CASE stress.rnd(0, 2)
    WHEN 0 THEN
      s := stress.same_ts(u); e := stress.same_ts(u);
      RETURN (stress.assemble(rid.txt, to_json(s.txt)::text, to_json(e.txt)::text), 'x', NULL)::stress.gen;
    WHEN 1 THEN
      s := stress.same_ts(u + interval '1 hour'); e := stress.same_ts(u);
      RETURN (stress.assemble(rid.txt, to_json(s.txt)::text, to_json(e.txt)::text), 'x', NULL)::stress.gen;
    ELSE
      RETURN stress.valid_payload(1, u, u + interval '1 microsecond');
    END CASE;
  ELSIF r < 0.88 THEN
    -- structure: wrong top-level type, a missing key, an extra key
    s := stress.valid_ts(timestamp '2026-12-02 10:00');
    e := stress.valid_ts(timestamp '2026-12-02 11:00');
    CASE stress.rnd(0, 3)
    WHEN 0 THEN
      RETURN (stress.pick(ARRAY['[]', '{}', '"x"', '1', 'null', 'true', 'false', '0', '""', '[{}]',
        '[' || stress.assemble('1', to_json(s.txt)::text, to_json(e.txt)::text) || ']',
        to_json(stress.assemble('1', to_json(s.txt)::text, to_json(e.txt)::text))::text,
        '{"payload":' || stress.assemble('1', to_json(s.txt)::text, to_json(e.txt)::text) || '}']),
        'x', NULL)::stress.gen;
    WHEN 1 THEN
      RETURN (stress.pick(ARRAY[
        '{"starts_at":' || to_json(s.txt) || ',"ends_at":' || to_json(e.txt) || '}',
        '{"resource_id":1,"ends_at":' || to_json(e.txt) || '}',
        '{"resource_id":1,"starts_at":' || to_json(s.txt) || '}',
        '{"resource_id":1}']), 'x', NULL)::stress.gen;
    ELSE
      k := stress.pick(ARRAY['x', '', 'Resource_id', 'resource_id ', ' resource_id', 'resourceId', 'id',
        'actor_id', 'status', 'starts_at2', 'STARTS_AT', 'é', '"', '\\', 'ends_at' || chr(8203),
        stress.key_of(stress.rnd(1, 200)::integer, 7)]);
      IF random() < 0.05 THEN k := repeat('k', 1048576); END IF;
      RETURN (stress.assemble('1', to_json(s.txt)::text, to_json(e.txt)::text || ',' || to_json(k)::text || ':'
              || stress.pick(ARRAY['1', 'null', '"x"', '{}', '[]'])), 'x', NULL)::stress.gen;
    END CASE;
  ELSIF r < 0.93 THEN
    -- duplicate keys: jsonb keeps the last one
    s := stress.valid_ts(timestamp '2026-12-03 10:00');
    e := stress.valid_ts(timestamp '2026-12-03 11:00');
    IF random() < 0.5 THEN
      -- the last one is valid
      RETURN ('{"resource_id":"bad","starts_at":"never","resource_id":2,"ends_at":' || to_json(e.txt)
              || ',"starts_at":' || to_json(s.txt) || '}', s.expect, stress.canon_text('2', s.canon, e.canon))::stress.gen;
    ELSE
      -- the last one is not
      RETURN ('{"resource_id":2,"starts_at":' || to_json(s.txt) || ',"ends_at":' || to_json(e.txt)
              || ',"ends_at":"2026-12-03T24:00:00Z"}', 'x', NULL)::stress.gen;
    END IF;
  ELSIF r < 0.95 THEN
    -- huge strings (about 1 MB)
    huge := CASE stress.rnd(0, 3) WHEN 0 THEN repeat('2026-12-01T10:00:00Z', 52429)
                                  WHEN 1 THEN repeat('9', 1048576)
                                  WHEN 2 THEN repeat('é', 524288)
                                  ELSE '2026-12-01T10:00:00' || repeat('0', 1048576) || 'Z' END;
    s := stress.valid_ts(timestamp '2026-12-01 10:00');
    IF random() < 0.5 THEN
      RETURN (stress.assemble('1', to_json(huge)::text, to_json(s.txt)::text), 'x', NULL)::stress.gen;
    ELSE
      RETURN (stress.assemble('1', to_json(s.txt)::text, to_json(huge)::text), 'x', NULL)::stress.gen;
    END IF;
  ELSE
    -- a random byte-level mutation of a valid payload's text (may not even be JSON)
    s := stress.valid_ts(timestamp '2026-12-04 10:00');
    e := stress.valid_ts(timestamp '2026-12-04 11:00');
    RETURN (stress.mutate(stress.assemble('1', to_json(s.txt)::text, to_json(e.txt)::text)), '?', NULL)::stress.gen;
  END IF;
END $$;

-- ------------------------------------------------------------ recording
CREATE FUNCTION stress.kind(expect text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE expect WHEN 'v' THEN 'valid' WHEN 'x' THEN 'invalid' ELSE 'mutated' END
$$;

CREATE FUNCTION stress.note(seq bigint, fn text, outcome text, problem text, msg text, input text,
                            kind text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  INSERT INTO stress.calls VALUES (fn, outcome, kind);
  IF problem IS NULL AND outcome NOT LIKE 'ok%' AND NOT stress.documented(outcome) THEN
    problem := 'undocumented SQLSTATE';
  END IF;
  IF problem IS NOT NULL THEN
    INSERT INTO stress.unexpected VALUES (seq, fn, outcome, problem, msg, input);
  END IF;
END $$;

CREATE FUNCTION stress.remember(ev uuid) RETURNS void
LANGUAGE sql VOLATILE AS $$
  WITH c AS (UPDATE stress.counters SET n = n + 1 WHERE name = 'ring' RETURNING n)
  INSERT INTO stress.ring SELECT (c.n % 512)::integer, ev FROM c
  ON CONFLICT (slot) DO UPDATE SET id = EXCLUDED.id
$$;

CREATE FUNCTION stress.some_event() RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE r float8 := random(); id uuid;
BEGIN
  IF r < 0.70 THEN
    SELECT x.id INTO id FROM stress.ring AS x WHERE x.slot = stress.rnd(0, 511);
    IF id IS NOT NULL THEN RETURN id; END IF;
    SELECT o.id INTO id FROM public.outbox AS o ORDER BY o.id DESC LIMIT 1;
    RETURN coalesce(id, gen_random_uuid());
  ELSIF r < 0.85 THEN RETURN gen_random_uuid();
  ELSIF r < 0.90 THEN RETURN NULL;
  ELSE RETURN stress.pick(ARRAY['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
                                '01a22bd7-675b-747e-8c05-9446039d6a65'])::uuid;
  END IF;
END $$;

-- ------------------------------------------------------- one call each
-- Each runs its okno call in a subtransaction; ro: in a read-only one.

CREATE FUNCTION stress.call_create(seq bigint, actor integer, k text, p stress.gen, ro boolean,
                                   replay_of jsonb DEFAULT NULL, reuse boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  pj jsonb;
  res jsonb;
  st text;
  msg text;
  maxid bigint;
  problem text;
  input text;
BEGIN
  IF p.txt IS NOT NULL THEN     -- NULL: an SQL NULL payload
    BEGIN
      pj := p.txt::jsonb;
    EXCEPTION WHEN others THEN
      UPDATE stress.counters SET n = n + 1 WHERE name = 'not_json';
      RETURN;
    END;
  END IF;
  SELECT coalesce(max(b.id), 0) INTO maxid FROM public.bookings AS b;
  BEGIN
    IF ro THEN PERFORM set_config('transaction_read_only', 'on', true); END IF;
    BEGIN
      res := public.okno_create_booking(actor, k, pj);
      st := 'ok';
    EXCEPTION WHEN others THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    END;
    IF ro THEN RAISE SQLSTATE 'SZ999'; END IF;
  EXCEPTION WHEN SQLSTATE 'SZ999' THEN NULL;
  END;
  IF st = 'ok' THEN
    st := CASE WHEN (res ->> 'id')::bigint > maxid THEN 'ok_created' ELSE 'ok_replayed' END;
  END IF;
  -- the oracle
  IF ro THEN
    IF st <> '25006' THEN problem := 'a read-only transaction must get 25006'; END IF;
  ELSIF NOT stress.key_ok(k) THEN
    IF st <> 'OKB01' THEN problem := 'a bad key must be OKB01'; END IF;
  ELSIF p.expect = 'x' THEN
    IF st <> 'OKB02' THEN problem := 'a payload built invalid must be OKB02'; END IF;
  ELSIF p.expect = 'v' THEN
    IF st = 'OKB11' THEN
      IF NOT stress.expired(actor, k) THEN
        problem := 'only a key that okno_purge removed may be OKB11';
      END IF;
    ELSIF st NOT IN ('ok_created', 'ok_replayed', 'OKB03', 'OKB04', 'OKB05', 'OKB06', 'OKB11') THEN
      problem := 'a valid request must succeed or get OKB03..OKB06 (OKB11 once purged)';
    ELSIF replay_of IS NOT NULL AND (st <> 'ok_replayed' OR res IS DISTINCT FROM replay_of) THEN
      problem := 'a replay must return the stored response';
    ELSIF reuse AND st <> 'OKB04' THEN
      problem := 'other data under a stored key must be OKB04';
    ELSIF st = 'ok_created' AND (res ->> 'actor_id')::integer IS DISTINCT FROM actor THEN
      problem := 'the card names another actor';
    END IF;
  END IF;
  IF problem IS NOT NULL OR NOT (st LIKE 'ok%' OR stress.documented(st)) THEN
    input := format('okno_create_booking(%s, %s, %s)%s', coalesce(actor::text, 'NULL'),
                    stress.show(quote_literal(k)), stress.show(p.txt),
                    CASE WHEN ro THEN ' read-only' ELSE '' END);
  END IF;
  PERFORM stress.note(seq, 'okno_create_booking', st, problem, msg, input,
                      CASE WHEN ro THEN 'read-only' WHEN NOT stress.key_ok(k) THEN 'bad key'
                           WHEN p.expect = 'v' AND replay_of IS NOT NULL THEN 'replay'
                           WHEN p.expect = 'v' AND reuse THEN 'reuse'
                           ELSE stress.kind(p.expect) END);
END $$;

CREATE FUNCTION stress.call_canonical(seq bigint, p stress.gen, fp boolean)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  pj jsonb;
  res text;
  canon text;
  st text;
  msg text;
  problem text;
  fn text := CASE WHEN fp THEN 'okno_fingerprint' ELSE 'okno_canonical' END;
BEGIN
  IF p.txt IS NULL THEN
    pj := NULL;
  ELSE
    BEGIN
      pj := p.txt::jsonb;
    EXCEPTION WHEN others THEN
      UPDATE stress.counters SET n = n + 1 WHERE name = 'not_json';
      RETURN;
    END;
  END IF;
  BEGIN
    IF fp THEN res := public.okno_fingerprint(pj); ELSE res := public.okno_canonical(pj); END IF;
    st := 'ok';
  EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  END;
  IF st = 'ok' THEN
    IF fp THEN
      canon := public.okno_canonical(pj);
      IF res IS DISTINCT FROM encode(sha256(convert_to(canon, 'UTF8')), 'hex') THEN
        problem := 'the fingerprint is not the SHA-256 of the canonical text';
      END IF;
    ELSE
      canon := res;
    END IF;
    IF problem IS NULL AND canon !~ ('^\{"ends_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z",'
                                     '"resource_id":[1-9][0-9]{0,9},'
                                     '"starts_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z"\}$') THEN
      problem := 'the canonical text does not have the canonical shape';
    END IF;
    IF problem IS NULL AND p.expect = 'v' AND canon IS DISTINCT FROM p.canon THEN
      problem := format('canonical text differs from the independent one %s', p.canon);
    END IF;
    IF problem IS NULL AND p.expect = 'x' THEN
      problem := 'a payload built invalid was accepted: ' || canon;
    END IF;
  ELSIF p.expect = 'v' THEN
    problem := 'a payload built valid was rejected';
  ELSIF st <> 'OKB02' THEN
    problem := 'an invalid payload must be OKB02';
  END IF;
  PERFORM stress.note(seq, fn, st, problem, msg,
                      CASE WHEN problem IS NOT NULL OR NOT (st = 'ok' OR stress.documented(st))
                           THEN format('%s(%s)', fn, stress.show(p.txt)) END,
                      stress.kind(p.expect));
END $$;

CREATE FUNCTION stress.call_drain(seq bigint, n integer, once boolean, ro boolean)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  ids uuid[];
  st text;
  msg text;
  problem text;
  fn text := CASE WHEN once THEN 'okno_drain_once' ELSE 'okno_drain' END;
  undelivered integer;
BEGIN
  BEGIN
    IF ro THEN PERFORM set_config('transaction_read_only', 'on', true); END IF;
    BEGIN
      IF once THEN
        SELECT array_agg(d.event_id) INTO ids FROM public.okno_drain_once() AS d;
      ELSE
        SELECT array_agg(d.event_id) INTO ids FROM public.okno_drain(n) AS d;
      END IF;
      st := 'ok';
    EXCEPTION WHEN others THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    END;
    IF ro THEN RAISE SQLSTATE 'SZ999'; END IF;
  EXCEPTION WHEN SQLSTATE 'SZ999' THEN NULL;
  END;
  IF NOT once AND n IS DISTINCT FROM least(greatest(n, 1), 10000) THEN
    IF st <> '22023' THEN problem := 'max_events outside 1..10000 must be 22023'; END IF;
  ELSIF ro THEN
    IF st <> '25006' THEN problem := 'a read-only transaction must get 25006'; END IF;
  ELSE
    IF st <> 'ok' THEN
      problem := 'a drain with a valid argument must succeed';
    ELSIF coalesce(cardinality(ids), 0) > (CASE WHEN once THEN 1 ELSE n END) THEN
      problem := format('%s events for max_events %s', cardinality(ids), n);
    ELSE
      SELECT count(*) INTO undelivered FROM public.outbox AS o
       WHERE o.id = ANY (ids) AND o.delivered_at IS NULL;
      IF undelivered > 0 THEN problem := format('%s drained events are not marked delivered', undelivered); END IF;
    END IF;
    IF ids IS NOT NULL THEN
      PERFORM stress.remember(ids[1 + floor(random() * cardinality(ids))::int]);
    END IF;
  END IF;
  PERFORM stress.note(seq, fn, st, problem, msg,
                      CASE WHEN problem IS NOT NULL OR NOT (st = 'ok' OR stress.documented(st))
                           THEN format('%s(%s)%s', fn, coalesce(n::text, 'NULL'),
                                       CASE WHEN ro THEN ' read-only' ELSE '' END) END);
END $$;

CREATE FUNCTION stress.call_failure(seq bigint, ev uuid, err text, ro boolean)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  row public.outbox;
  st text;
  msg text;
  problem text;
  known boolean := EXISTS (SELECT FROM public.outbox AS o WHERE o.id = ev);
BEGIN
  BEGIN
    IF ro THEN PERFORM set_config('transaction_read_only', 'on', true); END IF;
    BEGIN
      row := public.okno_record_failure(ev, err);
      st := 'ok';
    EXCEPTION WHEN others THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    END;
    IF ro THEN RAISE SQLSTATE 'SZ999'; END IF;
  EXCEPTION WHEN SQLSTATE 'SZ999' THEN NULL;
  END;
  IF ev IS NULL OR err IS NULL THEN
    IF st <> '22004' THEN problem := 'a NULL argument must be 22004'; END IF;
  ELSIF ro THEN
    IF st <> '25006' THEN problem := 'a read-only transaction must get 25006'; END IF;
  ELSIF NOT known THEN
    IF st <> 'OKB08' THEN problem := 'an unknown event must be OKB08'; END IF;
  ELSIF st <> 'ok' THEN
    problem := 'a failure of a known event must be recorded';
  ELSIF row.id IS DISTINCT FROM ev OR row.delivered_at IS NOT NULL OR row.attempts < 1 THEN
    problem := format('the returned row is wrong: %s', row);
  ELSE
    BEGIN
      IF octet_length(row.last_error) > 2000 THEN
        problem := format('last_error is %s bytes', octet_length(row.last_error));
      ELSIF left(err, char_length(row.last_error)) IS DISTINCT FROM row.last_error THEN
        problem := 'last_error is not a prefix of the error text';
      ELSIF octet_length(err) <= 2000 AND row.last_error <> err THEN
        problem := 'a short error text was changed';
      ELSIF octet_length(err) > 2000 AND octet_length(row.last_error) < 1997 THEN
        problem := format('last_error was cut to %s bytes, not at the last character boundary',
                          octet_length(row.last_error));
      ELSIF convert_from(textsend(row.last_error), 'UTF8') IS NULL THEN
        problem := 'last_error is NULL';
      END IF;
    EXCEPTION WHEN others THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
      problem := 'last_error is not valid text: ' || msg;
    END;
  END IF;
  PERFORM stress.note(seq, 'okno_record_failure', st, problem, msg,
                      CASE WHEN problem IS NOT NULL OR NOT (st = 'ok' OR stress.documented(st))
                           THEN format('okno_record_failure(%s, %s)%s', coalesce(ev::text, 'NULL'),
                                       stress.show(quote_nullable(err)),
                                       CASE WHEN ro THEN ' read-only' ELSE '' END) END);
END $$;

-- okno_release (requeue false) or okno_requeue (requeue true)
CREATE FUNCTION stress.call_release(seq bigint, ev uuid, requeue boolean, ro boolean)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  fn text := CASE WHEN requeue THEN 'okno_requeue' ELSE 'okno_release' END;
  res boolean;
  want boolean;
  st text;
  msg text;
  problem text;
BEGIN
  SELECT CASE WHEN requeue THEN o.delivered_at IS NULL ELSE o.delivered_at IS NOT NULL END
    INTO want FROM public.outbox AS o WHERE o.id = ev;
  want := coalesce(want, false);
  BEGIN
    IF ro THEN PERFORM set_config('transaction_read_only', 'on', true); END IF;
    BEGIN
      IF requeue THEN res := public.okno_requeue(ev); ELSE res := public.okno_release(ev); END IF;
      st := 'ok';
    EXCEPTION WHEN others THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    END;
    IF ro THEN RAISE SQLSTATE 'SZ999'; END IF;
  EXCEPTION WHEN SQLSTATE 'SZ999' THEN NULL;
  END;
  IF ev IS NULL THEN
    IF st <> '22004' THEN problem := 'a NULL event id must be 22004'; END IF;
  ELSIF ro THEN
    IF st <> '25006' THEN problem := 'a read-only transaction must get 25006'; END IF;
  ELSIF st <> 'ok' THEN
    problem := 'must succeed';
  ELSIF res IS DISTINCT FROM want THEN
    problem := format('returned %s, the event''s state says %s', res, want);
  END IF;
  IF st = 'ok' THEN st := CASE WHEN res THEN 'ok_true' ELSE 'ok_false' END; END IF;
  PERFORM stress.note(seq, fn, st, problem, msg,
                      CASE WHEN problem IS NOT NULL OR NOT (st LIKE 'ok%' OR stress.documented(st))
                           THEN format('%s(%s)%s', fn, coalesce(ev::text, 'NULL'),
                                       CASE WHEN ro THEN ' read-only' ELSE '' END) END);
END $$;

-- okno_get_booking (cancel false) or okno_cancel_booking (cancel true)
CREATE FUNCTION stress.call_booking(seq bigint, actor integer, bid bigint, cancel boolean, ro boolean)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  fn text := CASE WHEN cancel THEN 'okno_cancel_booking' ELSE 'okno_get_booking' END;
  owned boolean := EXISTS (SELECT FROM public.bookings AS b WHERE b.id = bid AND b.actor_id = actor);
  res jsonb;
  st text;
  msg text;
  problem text;
  now_status text;
BEGIN
  BEGIN
    IF ro THEN PERFORM set_config('transaction_read_only', 'on', true); END IF;
    BEGIN
      IF cancel THEN res := public.okno_cancel_booking(actor, bid); ELSE res := public.okno_get_booking(actor, bid); END IF;
      st := 'ok';
    EXCEPTION WHEN others THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    END;
    IF ro THEN RAISE SQLSTATE 'SZ999'; END IF;
  EXCEPTION WHEN SQLSTATE 'SZ999' THEN NULL;
  END;
  IF ro AND cancel AND owned THEN
    IF st <> '25006' THEN problem := 'a read-only transaction must get 25006'; END IF;
  ELSIF ro AND cancel THEN
    IF st NOT IN ('25006', 'OKB07') THEN problem := 'must be 25006 or OKB07'; END IF;
  ELSIF NOT owned THEN
    IF st <> 'OKB07' THEN problem := 'a booking not of this actor must be OKB07'; END IF;
  ELSIF st <> 'ok' THEN
    problem := 'the owner''s booking must be found';
  ELSE
    SELECT b.status INTO now_status FROM public.bookings AS b WHERE b.id = bid;
    IF (res ->> 'id')::bigint IS DISTINCT FROM bid OR (res ->> 'actor_id')::integer IS DISTINCT FROM actor
       OR res ->> 'status' IS DISTINCT FROM now_status
       OR (cancel AND now_status <> 'cancelled') THEN
      problem := format('wrong card %s (status now %s)', res, now_status);
    END IF;
  END IF;
  PERFORM stress.note(seq, fn, st, problem, msg,
                      CASE WHEN problem IS NOT NULL OR NOT (st = 'ok' OR stress.documented(st))
                           THEN format('%s(%s, %s)%s', fn, coalesce(actor::text, 'NULL'), coalesce(bid::text, 'NULL'),
                                       CASE WHEN ro THEN ' read-only' ELSE '' END) END);
END $$;

-- an interval with a negative month, day or time part (okno 0.4.1 refuses
-- it whatever the whole compares as: '1 day -1 hour' reaches back less than
-- a day, '-1 mon 40 days' more or less than ten days by the month)
CREATE FUNCTION stress.has_negative_field(i interval) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT extract(year FROM i) * 12 + extract(month FROM i) < 0
      OR extract(day FROM i) < 0
      OR extract(epoch FROM (i - date_trunc('day', i))) < 0
$$;

CREATE FUNCTION stress.call_purge(seq bigint, ka text, da text, ro boolean)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  st text;
  msg text;
  problem text;
  k interval := ka::interval;
  d interval := da::interval;
  -- an age over 1000 years, or one that takes now() out of timestamptz's
  -- range: docs/REFERENCE.md does not say what it means
  beyond boolean := k > interval '1000 years' OR d > interval '1000 years';
BEGIN
  BEGIN
    PERFORM now() - k, now() - d;
  EXCEPTION WHEN datetime_field_overflow THEN
    beyond := true;
  END;
  BEGIN
    IF ro THEN PERFORM set_config('transaction_read_only', 'on', true); END IF;
    BEGIN
      PERFORM FROM public.okno_purge(k, d);
      st := 'ok';
    EXCEPTION WHEN others THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    END;
    IF ro THEN RAISE SQLSTATE 'SZ999'; END IF;
  EXCEPTION WHEN SQLSTATE 'SZ999' THEN NULL;
  END;
  IF k IS NULL OR d IS NULL OR stress.has_negative_field(k) OR stress.has_negative_field(d) THEN
    IF st <> '22023' THEN problem := 'a NULL age or one with a negative field must be 22023'; END IF;
  ELSIF beyond THEN
    -- success (nothing is that old) or 22023 (out of range) would both be
    -- sound, an undocumented SQLSTATE is not
    IF st NOT IN ('ok', '22023', '25006') THEN
      problem := 'an age over 1000 years must succeed or be 22023';
    END IF;
  ELSIF ro THEN
    IF st <> '25006' THEN problem := 'a read-only transaction must get 25006'; END IF;
  ELSIF st <> 'ok' THEN
    problem := 'a purge with valid ages must succeed';
  END IF;
  PERFORM stress.note(seq, 'okno_purge', st, problem, msg,
                      CASE WHEN problem IS NOT NULL OR NOT (st = 'ok' OR stress.documented(st))
                           THEN format('okno_purge(%s, %s)%s', quote_nullable(ka), quote_nullable(da),
                                       CASE WHEN ro THEN ' read-only' ELSE '' END) END);
END $$;

-- ------------------------------------------------------------------ a step
CREATE FUNCTION stress.odd_actor() RETURNS integer
LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN random() < 0.85 THEN stress.rnd(1, 3)::integer
              ELSE stress.pick(ARRAY[NULL, '4', '0', '-1', '2147483647', '-2147483648'])::integer END
$$;

CREATE FUNCTION stress.step(seq bigint) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r float8;
  ro boolean := random() < 0.03;
  actor integer;
  k text;
  p stress.gen;
  stored public.idempotency;
  u timestamp;
  bid bigint;
  err text;
BEGIN
  -- first, every key length 0..200 in each of ten classes, with a valid payload
  IF seq <= 2010 THEN
    PERFORM stress.call_create(seq, 1, stress.key_of(((seq - 1) / 10)::integer, ((seq - 1) % 10)::integer),
                               stress.grid_payload(), false);
    RETURN;
  END IF;
  r := random();
  IF r < 0.42 THEN
    -- okno_create_booking
    actor := stress.odd_actor();
    r := random();
    IF r < 0.80 THEN
      k := 'k' || stress.rnd(0, 149);
    ELSIF r < 0.995 THEN
      k := stress.key_of(stress.rnd(0, 200)::integer, stress.rnd(0, 9)::integer);
    ELSE
      k := stress.pick(ARRAY[NULL, repeat('a', 80), repeat('a', 81), repeat('é', 40), repeat('k', 1048576)]);
    END IF;
    r := random();
    IF r < 0.20 AND stress.key_ok(k) THEN
      -- a replay or a reuse of a stored request
      SELECT * INTO stored FROM public.idempotency AS i WHERE i.actor_id = actor AND i.request_key = k;
      IF FOUND THEN
        p := stress.valid_payload((stored.response_body ->> 'resource_id')::bigint,
                                  (stored.response_body ->> 'starts_at')::timestamptz AT TIME ZONE 'UTC',
                                  (stored.response_body ->> 'ends_at')::timestamptz AT TIME ZONE 'UTC');
        IF random() < 0.75 THEN
          PERFORM stress.call_create(seq, actor, k, p, ro, stored.response_body);
        ELSE
          u := (stored.response_body ->> 'starts_at')::timestamptz AT TIME ZONE 'UTC';
          p := stress.valid_payload((stored.response_body ->> 'resource_id')::bigint, u, u + interval '17 minutes');
          PERFORM stress.call_create(seq, actor, k, p, ro, NULL, true);
        END IF;
        RETURN;
      END IF;
    END IF;
    IF r < 0.70 THEN
      p := stress.grid_payload();
    ELSIF r < 0.72 THEN
      p := (NULL, 'x', NULL)::stress.gen;
    ELSE
      p := stress.any_payload();
    END IF;
    PERFORM stress.call_create(seq, actor, k, p, ro);
  ELSIF r < 0.57 THEN
    PERFORM stress.call_canonical(seq, CASE WHEN random() < 0.01 THEN (NULL, 'x', NULL)::stress.gen
                                            ELSE stress.any_payload() END, false);
  ELSIF r < 0.67 THEN
    PERFORM stress.call_canonical(seq, CASE WHEN random() < 0.01 THEN (NULL, 'x', NULL)::stress.gen
                                            ELSE stress.any_payload() END, true);
  ELSIF r < 0.71 THEN
    PERFORM stress.call_drain(seq, CASE WHEN random() < 0.6
                                        THEN stress.pick(ARRAY['1', '2', '3', '10', '10', '10', '50'])::integer
                                        ELSE stress.pick(ARRAY[NULL, '-2147483648', '-1', '0', '10000', '10001',
                                                               '2147483647', '100000'])::integer END,
                              false, ro);
  ELSIF r < 0.73 THEN
    PERFORM stress.call_drain(seq, 1, true, ro);
  ELSIF r < 0.80 THEN
    r := random();
    err := CASE WHEN r < 0.05 THEN NULL
                WHEN r < 0.45 THEN stress.pick(ARRAY['', 'x', 'exit status 1', 'timeout', E'line1\nline2',
                                                     'quote '' " \ `', chr(1) || chr(127), 'é😀中'])
                WHEN r < 0.60 THEN repeat('a', stress.rnd(1990, 2010)::integer)
                WHEN r < 0.70 THEN repeat('a', 1999) || '😀' || 'b'
                WHEN r < 0.80 THEN repeat('é', stress.rnd(995, 1005)::integer)
                WHEN r < 0.90 THEN repeat('a', stress.rnd(0, 3)::integer) || repeat('😀', 600)
                WHEN r < 0.95 THEN repeat('x', 1048576)
                ELSE repeat('中', 400000) END;
    PERFORM stress.call_failure(seq, stress.some_event(), err, ro);
  ELSIF r < 0.83 THEN
    PERFORM stress.call_release(seq, stress.some_event(), false, ro);
  ELSIF r < 0.86 THEN
    PERFORM stress.call_release(seq, stress.some_event(), true, ro);
  ELSIF r < 0.995 THEN
    -- okno_get_booking (45%) and okno_cancel_booking (55%): the owner's
    -- own booking half of the time, odd ids and actors otherwise
    IF random() < 0.5 THEN
      SELECT b.id, b.actor_id INTO bid, actor FROM public.bookings AS b
       WHERE b.id >= (SELECT stress.rnd(1, coalesce(max(x.id), 1)) FROM public.bookings AS x)
       ORDER BY b.id LIMIT 1;
    ELSE
      actor := stress.odd_actor();
      bid := CASE WHEN random() < 0.7 THEN stress.rnd(1, (SELECT coalesce(max(x.id), 1) + 5 FROM public.bookings AS x))
                  ELSE stress.pick(ARRAY[NULL, '0', '-1', '-9223372036854775808', '9223372036854775807',
                                         '2147483648', '4294967296'])::bigint END;
    END IF;
    PERFORM stress.call_booking(seq, actor, bid, random() < 0.55, ro);
  ELSE
    -- okno_purge: mostly ordinary ages (nothing recent goes), some odd or
    -- out-of-range ones, rarely ages that empty the tables
    r := random();
    IF r < 0.80 THEN
      PERFORM stress.call_purge(seq,
        stress.pick(ARRAY['1 hour', '1 day', '7 days', '30 days', '100 years', '1000 years', 'P1D', '23 hours 59 minutes']),
        stress.pick(ARRAY['12 hours', '1 hour', '1 day', '7 days', 'PT1H', '1 day 1 hour']), ro);
    ELSIF r < 0.96 THEN
      PERFORM stress.call_purge(seq,
        stress.pick(ARRAY[NULL, '-1 second', '-1 microsecond', '1 mon -40 days', '-1 mon 40 days', '-1 year',
                          '5000 years', '300000 years', '178000000 years', '1 day', '1 day -1 hour',
                          '-1 mon 31 days']),
        stress.pick(ARRAY[NULL, '-1 microsecond', '-1 day', '1 mon -31 days', '5000 years', '300000 years',
                          '178000000 years', '1 day', '1 day']), ro);
    ELSE
      PERFORM stress.call_purge(seq, stress.pick(ARRAY['0', '-0', '1 microsecond', '1 day -24 hours']),
                                stress.pick(ARRAY['0', '1 microsecond', '-0']), ro);
    END IF;
  END IF;
END $$;

-- the driver: total calls, committed every `batch` (a create holds its
-- locks until the transaction ends, so one transaction must stay small)
-- (a generated input that is not even JSON makes no call, so it runs until
-- `total` calls are made).  Every step reseeds random() from (seed, step),
-- so a step's choices do not depend on how many random numbers the steps
-- before it drew; with retry delays longer than the run (bad_input.sh sets
-- okno.retry_base) and no purge age that depends on the clock, a seed
-- repeats the same calls and, as far as observed, the same outcomes.
CREATE PROCEDURE stress.run(total bigint, seed float8, batch integer DEFAULT 400)
LANGUAGE plpgsql AS $$
DECLARE i bigint := 0; made bigint := 0; x float8;
BEGIN
  WHILE made < total LOOP
    FOR j IN 1..least(batch, total - made) LOOP
      i := i + 1;
      x := seed + i * 0.6180339887498949;
      PERFORM setseed(2 * (x - floor(x)) - 1);
      PERFORM stress.step(i);
    END LOOP;
    -- the next transaction starts well after this one's last delivery, so a
    -- purge of events delivered more than 0 or 1 microsecond ago deletes
    -- the same events whatever the timing
    PERFORM pg_sleep(0.002);
    COMMIT;
    SELECT count(*) INTO made FROM stress.calls;
  END LOOP;
END $$;
