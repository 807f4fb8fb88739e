-- bench/slots.sql: the benchmark's slot functions, in schema bench, for
-- bench/setup.sql (one server) and bench/citus.sql (scenario 9's cluster),
-- each of which creates the schema first.

-- Slots: slot s is the minute [2030-01-01 00:00 UTC + s min, + 1 min).
-- A payload names it in +03:00, as the course's clients do, so okno and
-- plp convert offsets on every call.
CREATE FUNCTION bench.slot_utc(slot bigint) RETURNS timestamp
LANGUAGE sql IMMUTABLE AS $$ SELECT timestamp '2030-01-01 00:00' + slot * interval '1 minute' $$;

-- STABLE like to_char() (an IMMUTABLE SQL function calling it is not inlined)
CREATE FUNCTION bench.payload(res integer, slot bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT format('{"resource_id":%s,"starts_at":"%s+03:00","ends_at":"%s+03:00"}', res,
                to_char(bench.slot_utc(slot) + interval '3 hours', 'YYYY-MM-DD"T"HH24:MI:SS'),
                to_char(bench.slot_utc(slot) + interval '3 hours 1 minute', 'YYYY-MM-DD"T"HH24:MI:SS'))::jsonb
$$;

CREATE FUNCTION bench.slot_start(slot bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$ SELECT bench.slot_utc(slot) AT TIME ZONE 'UTC' $$;

CREATE FUNCTION bench.slot_text(slot bigint) RETURNS text
LANGUAGE sql STABLE AS $$ SELECT to_char(bench.slot_utc(slot), 'YYYY-MM-DD"T"HH24:MI:SS"Z"') $$;
