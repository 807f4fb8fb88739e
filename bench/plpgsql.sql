-- bench/plpgsql.sql: the "plpgsql" baseline of the benchmark.
--
-- okno 0.1.0's contract for okno_create_booking, written in PL/pgSQL the way
-- a careful user would write it without okno: the key rule, strict payload
-- validation (RFC 3339 with an offset through a regular expression and
-- make_timestamp/interval arithmetic, never PostgreSQL's timestamptz input),
-- the canonical form and its SHA-256 (sha256()), the course's advisory lock,
-- lookup / replay / key_reused, the actor and resource checks, the resource
-- lock, the three inserts (exclusion, unique and foreign-key violations
-- mapped to the domain errors in an EXCEPTION block, i.e. a subtransaction:
-- PL/pgSQL has no other way to catch them), NOTIFY okno_outbox.
--
-- It lives in schema plp of the benchmark database and works on okno's own
-- tables (schema public there), so both write exactly the same rows into the
-- same indexes.  It is never installed into the extension.  tools/bench
-- checks it against okno before measuring (bench/fidelity.sql).
--
-- Known differences from okno (none of them is exercised by the benchmark):
--   * REPEATABLE READ / SERIALIZABLE: okno looks the key up again with the
--     latest snapshot and raises 40001; PL/pgSQL cannot read with another
--     snapshot, so a waiter there creates and gets a unique violation,
--     which is mapped to 40001 as well (same SQLSTATE, other path).
--   * the resource lock is pg_advisory_xact_lock(1869311599, resource)
--     (objsubid 2), not okno's objsubid-3 tag, so the two implementations
--     do not serialise against each other on a resource (they do on a key).
--   * event ids: UUID version 7 from clock_timestamp() in milliseconds and
--     random bits (the usual SQL recipe), not strictly monotonic within a
--     millisecond as okno's are.
--   * DETAIL texts are close to okno's but not compared (SQLSTATEs are).

CREATE SCHEMA plp;

CREATE FUNCTION plp.err(code text, msg text, detail text DEFAULT NULL, hint text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF detail IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg;
  ELSIF hint IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg, DETAIL = detail;
  ELSE
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg, DETAIL = detail, HINT = hint;
  END IF;
END $$;

CREATE FUNCTION plp.bad_payload(detail text) RETURNS void LANGUAGE sql AS $$
  SELECT plp.err('OKB02', 'invalid booking payload', detail,
    'Send a JSON object with exactly "resource_id", "starts_at" and "ends_at"; '
    'write the times in RFC 3339 form with an offset, such as "2026-12-01T10:00:00+03:00".')
$$;

CREATE FUNCTION plp.json_type_name(v jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE jsonb_typeof(v) WHEN 'null' THEN 'null' WHEN 'string' THEN 'a string'
           WHEN 'number' THEN 'a number' WHEN 'boolean' THEN 'a boolean'
           WHEN 'array' THEN 'an array' ELSE 'an object' END
$$;

-- A JSON string in RFC 3339 date-time form with an offset -> the instant, as
-- a timestamp in UTC (timestamp without time zone, so that nothing depends
-- on the session's TimeZone).
CREATE FUNCTION plp.parse_instant(v jsonb, field text) RETURNS timestamp
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  m text[];
  y int; mo int; d int; hh int; mi int; ss int; oh int; om int; dim int;
  local timestamp;
  utc timestamp;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) <> 'string' THEN
    PERFORM plp.bad_payload(format('Field "%s" must be a JSON string, not %s.', field, plp.json_type_name(v)));
  END IF;
  m := regexp_match(v #>> '{}',
    '^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))?$');
  IF m IS NULL THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field,
      'expected YYYY-MM-DDTHH:MM:SS[.ffffff] followed by Z or an offset +HH:MM or -HH:MM'));
  END IF;
  IF length(m[7]) > 7 THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field, 'more than 6 fractional digits'));
  END IF;
  IF m[8] IS NULL AND m[9] IS NULL THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field, 'the offset (Z, +HH:MM or -HH:MM) is missing'));
  END IF;
  y := m[1]::int; mo := m[2]::int; d := m[3]::int;
  hh := m[4]::int; mi := m[5]::int; ss := m[6]::int;
  dim := CASE WHEN mo = 2 THEN CASE WHEN (y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0 THEN 29 ELSE 28 END
              WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END;
  IF mo NOT BETWEEN 1 AND 12 OR d < 1 OR d > dim THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field, 'no such date'));
  END IF;
  IF hh > 23 OR mi > 59 THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field, 'no such time of day'));
  END IF;
  IF ss = 60 THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field, 'leap seconds are not accepted'));
  END IF;
  IF ss > 59 THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field, 'no such time of day'));
  END IF;
  oh := coalesce(m[10]::int, 0); om := coalesce(m[11]::int, 0);
  IF oh > 23 OR om > 59 THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field, 'the offset is outside -23:59 to +23:59'));
  END IF;
  -- year 0 (1 BC) is not accepted by make_timestamp: shift by 400 years,
  -- a whole Gregorian cycle, and back
  local := make_timestamp(CASE WHEN y = 0 THEN 400 ELSE y END, mo, d, hh, mi, ss);
  IF m[7] IS NOT NULL THEN
    local := local + rpad(substr(m[7], 2), 6, '0')::int * interval '1 microsecond';
  END IF;
  IF y = 0 THEN
    local := local - interval '400 years';
  END IF;
  utc := CASE m[9] WHEN '+' THEN local - make_interval(hours => oh, mins => om)
                   WHEN '-' THEN local + make_interval(hours => oh, mins => om)
                   ELSE local END;
  IF utc < timestamp '0001-01-01 00:00:00' OR utc > timestamp '9999-12-31 23:59:59.999999' THEN
    PERFORM plp.bad_payload(format('Field "%s" is not a valid RFC 3339 date-time: %s.', field, 'the instant in UTC is outside years 0001 to 9999'));
  END IF;
  RETURN utc;
END $$;

-- STABLE like to_char(), so that it is inlined into its callers
CREATE FUNCTION plp.format_utc(t timestamp) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT to_char(t, 'YYYY-MM-DD"T"HH24:MI:SS')
         || CASE WHEN date_trunc('second', t) = t THEN '' ELSE to_char(t, '.US') END || 'Z'
$$;

CREATE TYPE plp.booking_in AS (resource_id integer, starts_at timestamp, ends_at timestamp, canonical text);

-- Step 2 and the canonical text of step 3.
CREATE FUNCTION plp.parse_payload(p jsonb) RETURNS plp.booking_in
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  k text;
  n numeric;
  r plp.booking_in;
BEGIN
  IF p IS NULL THEN
    PERFORM plp.bad_payload('The payload must not be null.');
  END IF;
  IF jsonb_typeof(p) <> 'object' THEN
    PERFORM plp.bad_payload(format('The payload must be a JSON object, not %s.', plp.json_type_name(p)));
  END IF;
  -- the usual case costs two operators; the slow path finds the first
  -- problem in the documented order
  IF NOT (p ?& ARRAY['resource_id', 'starts_at', 'ends_at'])
     OR (p - ARRAY['resource_id', 'starts_at', 'ends_at']) <> '{}'::jsonb THEN
    FOR k IN SELECT jsonb_object_keys(p) LOOP
      IF k NOT IN ('resource_id', 'starts_at', 'ends_at') THEN
        PERFORM plp.bad_payload(format('Field "%s" is not allowed.', left(k, 64)));
      END IF;
    END LOOP;
    FOREACH k IN ARRAY ARRAY['resource_id', 'starts_at', 'ends_at'] LOOP
      IF NOT p ? k THEN
        PERFORM plp.bad_payload(format('Field "%s" is missing.', k));
      END IF;
    END LOOP;
  END IF;
  IF jsonb_typeof(p -> 'resource_id') <> 'number' THEN
    PERFORM plp.bad_payload(format('Field "resource_id" must be a JSON number, not %s.', plp.json_type_name(p -> 'resource_id')));
  END IF;
  n := (p -> 'resource_id')::numeric;
  IF n <> trunc(n) OR n < 1 OR n > 2147483647 THEN
    PERFORM plp.bad_payload('Field "resource_id" must be an integer from 1 to 2147483647.');
  END IF;
  r.resource_id := n::integer;
  r.starts_at := plp.parse_instant(p -> 'starts_at', 'starts_at');
  r.ends_at := plp.parse_instant(p -> 'ends_at', 'ends_at');
  IF r.starts_at >= r.ends_at THEN
    PERFORM plp.bad_payload('Field "starts_at" must be earlier than "ends_at".');
  END IF;
  r.canonical := '{"ends_at":"' || plp.format_utc(r.ends_at) || '","resource_id":' || r.resource_id
                 || ',"starts_at":"' || plp.format_utc(r.starts_at) || '"}';
  RETURN r;
END $$;

CREATE FUNCTION plp.canonical(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT (plp.parse_payload(p)).canonical $$;

CREATE FUNCTION plp.fingerprint(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(convert_to((plp.parse_payload(p)).canonical, 'UTF8')), 'hex')
$$;

-- UUID version 7: 48 bits of Unix milliseconds, then random bits
CREATE FUNCTION plp.uuid7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
           PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
           FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;

CREATE FUNCTION plp.create_booking(actor integer, key text, payload jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  b plp.booking_in;
  fp text;
  stored record;
  actor_ok boolean;
  resource_ok boolean;
  booking_id bigint;
  card jsonb;
  con text;
BEGIN
  IF current_setting('transaction_read_only')::boolean THEN
    RAISE EXCEPTION USING ERRCODE = '25006', MESSAGE = 'cannot execute plp.create_booking() in a read-only transaction';
  END IF;
  -- 1. key
  IF key IS NULL OR key !~ '^[A-Za-z0-9_.-]{1,80}$' THEN
    PERFORM plp.err('OKB01', 'invalid idempotency key',
      CASE WHEN key IS NULL THEN 'The key must not be null.'
           WHEN key = '' THEN 'The key is empty.'
           WHEN octet_length(key) > 80 THEN format('The key is %s bytes long; at most 80 are allowed.', octet_length(key))
           ELSE 'The key has a character outside the allowed set.' END,
      'Use 1 to 80 characters from A-Z, a-z, 0-9, ".", "_" and "-".');
  END IF;
  -- 2, 3. payload, canonical form, fingerprint
  b := plp.parse_payload(payload);
  fp := encode(sha256(convert_to(b.canonical, 'UTF8')), 'hex');
  IF actor IS NULL THEN
    PERFORM plp.err('OKB06', 'actor must not be null');
  END IF;
  -- 4. the course's lock
  PERFORM pg_advisory_xact_lock(hashtextextended(actor::text || ':' || key, 0));
  -- 5. lookup
  SELECT i.fingerprint, i.fingerprint_version, i.response_body INTO stored
    FROM public.idempotency AS i
   WHERE i.actor_id = actor AND i.request_key = key;
  IF FOUND THEN
    IF stored.fingerprint_version <> 1 THEN
      RAISE EXCEPTION USING ERRCODE = 'XX001',
        MESSAGE = format('idempotency key "%s" of actor %s has unsupported fingerprint version %s', key, actor, stored.fingerprint_version);
    END IF;
    IF stored.fingerprint <> fp THEN
      PERFORM plp.err('OKB04', format('idempotency key "%s" was already used with a different payload', key),
        format('Actor %s first used this key for a request whose canonical payload differs.', actor),
        'Retry with the original payload, or use a new key for a new request.');
    END IF;
    RETURN stored.response_body;
  END IF;
  -- 6. references, the resource lock, the inserts
  SELECT EXISTS (SELECT FROM public.actors AS a WHERE a.id = actor),
         EXISTS (SELECT FROM public.resources AS r WHERE r.id = b.resource_id)
    INTO actor_ok, resource_ok;
  IF NOT actor_ok THEN
    PERFORM plp.err('OKB06', format('actor %s does not exist', actor));
  END IF;
  IF NOT resource_ok THEN
    PERFORM plp.err('OKB03', format('resource %s does not exist', b.resource_id));
  END IF;
  PERFORM pg_advisory_xact_lock(1869311599, b.resource_id);
  BEGIN
    INSERT INTO public.bookings (resource_id, actor_id, starts_at, ends_at)
    VALUES (b.resource_id, actor, b.starts_at AT TIME ZONE 'UTC', b.ends_at AT TIME ZONE 'UTC')
    RETURNING id INTO booking_id;
    -- 7. the card, stored and returned
    card := jsonb_build_object('id', booking_id, 'resource_id', b.resource_id, 'actor_id', actor,
                               'starts_at', plp.format_utc(b.starts_at), 'ends_at', plp.format_utc(b.ends_at),
                               'status', 'confirmed');
    INSERT INTO public.idempotency (actor_id, request_key, fingerprint, fingerprint_version, response_body)
    VALUES (actor, key, fp, 1, card);
    INSERT INTO public.outbox (id, kind, payload)
    VALUES (plp.uuid7(), 'booking_created', jsonb_build_object('booking_id', booking_id));
  EXCEPTION
    WHEN exclusion_violation OR unique_violation OR foreign_key_violation THEN
      GET STACKED DIAGNOSTICS con = CONSTRAINT_NAME;
      IF con = 'bookings_no_overlap' THEN
        RAISE EXCEPTION USING ERRCODE = 'OKB05', MESSAGE = 'the time slot is already booked',
          DETAIL = format('Resource %s has a confirmed booking that overlaps the requested period.', b.resource_id),
          SCHEMA = 'public', TABLE = 'bookings', CONSTRAINT = 'bookings_no_overlap';
      ELSIF con = 'idempotency_pkey' THEN
        RAISE EXCEPTION USING ERRCODE = '40001',
          MESSAGE = 'could not serialize access due to a concurrent request with the same idempotency key';
      ELSIF con IN ('bookings_actor_id_fkey', 'idempotency_actor_id_fkey') THEN
        PERFORM plp.err('OKB06', format('actor %s does not exist', actor));
      ELSIF con = 'bookings_resource_id_fkey' THEN
        PERFORM plp.err('OKB03', format('resource %s does not exist', b.resource_id));
      END IF;
      RAISE;
  END;
  PERFORM pg_notify('okno_outbox', '');
  RETURN card;
END $$;

COMMENT ON FUNCTION plp.create_booking(integer, text, jsonb) IS
'benchmark baseline: okno 0.1.0''s okno_create_booking written in PL/pgSQL';
