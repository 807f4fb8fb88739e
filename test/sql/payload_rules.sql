--
-- payload_rules: the payload is validated strictly; errors name the field
--
-- okno_canonical validates exactly as okno_create_booking does, so the rules
-- are checked through it; a sample goes through okno_create_booking too.
CREATE TEMP TABLE bad (n serial, payload text, why text);
INSERT INTO bad (payload, why) VALUES
  -- shape
  ('[]', 'an array'),
  ('"text"', 'a scalar string'),
  ('1', 'a scalar number'),
  ('null', 'JSON null'),
  ('{}', 'empty object'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z"}', 'ends_at missing'),
  ('{"resource_id":1,"ends_at":"2026-12-01T10:00:00Z"}', 'starts_at missing'),
  ('{"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'resource_id missing'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z","note":"x"}', 'unknown key'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z","actor_id":2}', 'actor_id may not be sent'),
  ('{"Resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'keys are case-sensitive'),
  -- resource_id
  ('{"resource_id":"1","starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'string id'),
  ('{"resource_id":true,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'boolean id'),
  ('{"resource_id":null,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'null id'),
  ('{"resource_id":[1],"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'array id'),
  ('{"resource_id":{"id":1},"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'object id'),
  ('{"resource_id":0,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'zero'),
  ('{"resource_id":-0,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'minus zero'),
  ('{"resource_id":-1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'negative'),
  ('{"resource_id":1.5,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'fraction'),
  ('{"resource_id":1.0000000001,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'tiny fraction'),
  ('{"resource_id":0.5,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'rounds to 1'),
  ('{"resource_id":2147483648,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'int4 overflow'),
  ('{"resource_id":2147483647.5,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'rounds past int4'),
  ('{"resource_id":1e400,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'huge'),
  ('{"resource_id":1e-400,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'tiny'),
  -- timestamps: JSON type
  ('{"resource_id":1,"starts_at":1764572400,"ends_at":"2026-12-01T11:00:00Z"}', 'epoch number'),
  ('{"resource_id":1,"starts_at":null,"ends_at":"2026-12-01T11:00:00Z"}', 'null start'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":false}', 'boolean end'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":["2026-12-01T11:00:00Z"]}', 'array end'),
  -- timestamps: special words and other forms PostgreSQL would accept
  ('{"resource_id":1,"starts_at":"now","ends_at":"2026-12-01T11:00:00Z"}', 'now'),
  ('{"resource_id":1,"starts_at":"today","ends_at":"2026-12-01T11:00:00Z"}', 'today'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"infinity"}', 'infinity'),
  ('{"resource_id":1,"starts_at":"epoch","ends_at":"2026-12-01T11:00:00Z"}', 'epoch'),
  ('{"resource_id":1,"starts_at":"2026-12-01 10:00:00+03:00","ends_at":"2026-12-01T11:00:00Z"}', 'space for T'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00","ends_at":"2026-12-01T11:00:00Z"}', 'no offset'),
  ('{"resource_id":1,"starts_at":"2026-12-01","ends_at":"2026-12-01T11:00:00Z"}', 'date only'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'no seconds'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+0300","ends_at":"2026-12-01T11:00:00Z"}', 'offset without colon'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03","ends_at":"2026-12-01T11:00:00Z"}', 'offset hours only'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00 Z","ends_at":"2026-12-01T11:00:00Z"}', 'space before Z'),
  ('{"resource_id":1,"starts_at":" 2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'leading space'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z ","ends_at":"2026-12-01T11:00:00Z"}', 'trailing space'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Europe/Moscow","ends_at":"2026-12-01T11:00:00Z"}', 'zone name'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00MSK","ends_at":"2026-12-01T11:00:00Z"}', 'zone abbreviation'),
  ('{"resource_id":1,"starts_at":"20261201T100000Z","ends_at":"2026-12-01T11:00:00Z"}', 'basic ISO 8601'),
  ('{"resource_id":1,"starts_at":"+2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'signed year'),
  ('{"resource_id":1,"starts_at":"12026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'five-digit year'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00.Z","ends_at":"2026-12-01T11:00:00Z"}', 'dot without digits'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00.1234567Z","ends_at":"2026-12-01T11:00:00Z"}', 'seven fractional digits'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00,5Z","ends_at":"2026-12-01T11:00:00Z"}', 'comma fraction'),
  -- timestamps: impossible values
  ('{"resource_id":1,"starts_at":"2026-02-29T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'Feb 29 in a common year'),
  ('{"resource_id":1,"starts_at":"2026-04-31T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'April 31'),
  ('{"resource_id":1,"starts_at":"2026-13-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'month 13'),
  ('{"resource_id":1,"starts_at":"2026-00-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'month 0'),
  ('{"resource_id":1,"starts_at":"2026-12-00T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 'day 0'),
  ('{"resource_id":1,"starts_at":"2026-12-01T24:00:00Z","ends_at":"2026-12-02T11:00:00Z"}', 'hour 24'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:60:00Z","ends_at":"2026-12-02T11:00:00Z"}', 'minute 60'),
  ('{"resource_id":1,"starts_at":"2016-12-31T23:59:60Z","ends_at":"2017-01-01T11:00:00Z"}', 'leap second'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+24:00","ends_at":"2026-12-02T11:00:00Z"}', 'offset 24 hours'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+05:60","ends_at":"2026-12-02T11:00:00Z"}', 'offset minute 60'),
  ('{"resource_id":1,"starts_at":"0000-12-31T23:59:59Z","ends_at":"2026-12-02T11:00:00Z"}', 'year 0 in UTC'),
  ('{"resource_id":1,"starts_at":"0001-01-01T00:00:00+00:01","ends_at":"2026-12-02T11:00:00Z"}', 'before 0001 in UTC'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"9999-12-31T23:30:00-01:00"}', 'after 9999 in UTC'),
  -- order of the instants
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T10:00:00Z"}', 'empty period'),
  ('{"resource_id":1,"starts_at":"2026-12-01T11:00:00Z","ends_at":"2026-12-01T10:00:00Z"}', 'reversed'),
  ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T07:00:00Z"}', 'same instant, other offsets'),
  -- several problems: the first in the documented order decides
  ('{"resource_id":"x","starts_at":"now","ends_at":"now","zzz":1}', 'unknown key first'),
  ('{"resource_id":"x","ends_at":"now"}', 'missing before wrong'),
  ('{"resource_id":0,"starts_at":"now","ends_at":"now"}', 'resource_id before starts_at'),
  ('{"resource_id":1,"starts_at":"now","ends_at":"then"}', 'starts_at before ends_at');

SELECT n, why, okno_test.err(format('SELECT okno_canonical(%L)', payload)) AS result
  FROM bad ORDER BY n;

-- okno_fingerprint and okno_create_booking raise exactly the same errors
SELECT count(*) AS differing
  FROM bad
 WHERE okno_test.err(format('SELECT okno_canonical(%L)', payload))
       IS DISTINCT FROM okno_test.err(format('SELECT okno_fingerprint(%L)', payload))
    OR okno_test.err(format('SELECT okno_canonical(%L)', payload))
       IS DISTINCT FROM okno_test.err(format('SELECT okno_create_booking(1, %L, %L)', 'payload-' || n, payload));
-- and none of those attempts left anything behind
SELECT count(*) AS keys FROM idempotency WHERE request_key LIKE 'payload-%';

-- NULL payloads are errors, never NULL results
SELECT okno_test.err('SELECT okno_canonical(NULL)');
SELECT okno_test.err('SELECT okno_fingerprint(NULL)');
SELECT okno_test.err($$SELECT okno_create_booking(1, 'null-payload', NULL)$$);

-- accepted forms and their canonical text
SELECT okno_canonical(p::jsonb) AS canonical, p AS payload
  FROM (VALUES
    ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}'),
    ('{"resource_id":1.0,"starts_at":"2026-12-01t07:00:00z","ends_at":"2026-12-01T08:00:00-00:00"}'),
    ('{"resource_id":1e0,"starts_at":"2026-12-01T07:00:00.000000Z","ends_at":"2026-12-01T08:00:00.0+00:00"}'),
    ('{"resource_id":2147483647,"starts_at":"2026-12-01T07:00:00.5Z","ends_at":"2026-12-01T07:00:00.500001Z"}'),
    ('{"resource_id":1,"starts_at":"2024-02-29T23:59:59.999999+23:59","ends_at":"2024-03-01T00:00:00-23:59"}'),
    ('{"resource_id":1,"starts_at":"0000-12-31T23:00:00-01:00","ends_at":"9999-12-31T23:59:59.999999Z"}'),
    ('{"resource_id":1,"starts_at":"1969-07-20T20:17:40Z","ends_at":"1970-01-01T00:00:00Z"}')
  ) AS t(p);

-- equivalences: key order, whitespace and offsets do not change the fingerprint
SELECT count(DISTINCT okno_fingerprint(p::jsonb)) AS fingerprints, count(*) AS payloads
  FROM (VALUES
    ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}'),
    ('{"ends_at":"2026-12-01T11:00:00+03:00","starts_at":"2026-12-01T10:00:00+03:00","resource_id":1}'),
    ('{ "resource_id" : 1 ,
        "starts_at" : "2026-12-01T10:00:00+03:00" , "ends_at" : "2026-12-01T11:00:00+03:00" }'),
    ('{"resource_id":1,"starts_at":"2026-12-01T07:00:00Z","ends_at":"2026-12-01T08:00:00Z"}'),
    ('{"resource_id":1,"starts_at":"2026-12-01T02:00:00-05:00","ends_at":"2026-12-01T12:30:00+04:30"}'),
    ('{"resource_id":1.00,"starts_at":"2026-12-01T07:00:00.000Z","ends_at":"2026-12-01T08:00:00z"}'),
    ('{"resource_id":10E-1,"starts_at":"2026-12-01t07:00:00-00:00","ends_at":"2026-12-01T08:00:00+00:00"}')
  ) AS t(p);

-- jsonb keeps only the last of duplicate keys (documented)
SELECT okno_canonical('{"resource_id":1,"resource_id":2,"starts_at":"2026-12-01T07:00:00Z","ends_at":"2026-12-01T08:00:00Z"}');

-- the fingerprint is the SHA-256 of the canonical text
SELECT okno_fingerprint(p) = encode(sha256(convert_to(okno_canonical(p), 'UTF8')), 'hex') AS matches
  FROM (VALUES ('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}'::jsonb)) AS t(p);

DROP TABLE bad;
