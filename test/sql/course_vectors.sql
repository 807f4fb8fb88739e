-- Test vectors for the course's fingerprint form (fingerprint version 0).
--
-- GENERATED FILE -- DO NOT EDIT BY HAND.
-- The vectors come from test/vectors/make_course_vectors.py, which computes
-- the course's canonical text with pydantic 2.10.6 and json.dumps, as the
-- course's service did, and the fingerprint with hashlib.sha256.  Re-run it
-- (in a Debian 13 root, which has pydantic 2) to regenerate this file and
-- test/vectors/course_vectors.tsv.
--
-- Assumes the okno extension has already been created by an earlier test.

CREATE TEMP TABLE okno_course_vectors(n int, payload text, canonical text, fingerprint text);
INSERT INTO okno_course_vectors VALUES
(1, '{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T11:00:00+03:00","resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00"}', 'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a'),
(2, '{"resource_id":1,"starts_at":"2026-12-01T07:00:00Z","ends_at":"2026-12-01T08:00:00Z"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(3, '{"resource_id":1,"starts_at":"2026-12-01T07:00:00+00:00","ends_at":"2026-12-01T08:00:00+00:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(4, '{"resource_id":1,"starts_at":"2026-12-01T07:00:00-00:00","ends_at":"2026-12-01T08:00:00-00:00"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(5, '{"resource_id":1,"starts_at":"2026-12-01t07:00:00z","ends_at":"2026-12-01T08:00:00z"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":1,"starts_at":"2026-12-01T07:00:00Z"}', 'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6'),
(6, '{"resource_id":2,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T08:00:00Z"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":2,"starts_at":"2026-12-01T10:00:00+03:00"}', '902f4640b4a4a211a3e94b6d0250f448e597bddfd6259e7468b38cdb829063c2'),
(7, '{"resource_id":2,"starts_at":"2026-12-01T02:00:00-05:00","ends_at":"2026-12-01T03:00:00-05:00"}', '{"ends_at":"2026-12-01T03:00:00-05:00","resource_id":2,"starts_at":"2026-12-01T02:00:00-05:00"}', 'f105d87ac50ead311903147f8cec75ba4137b891c9afb2e0cf722299f68e17b3'),
(8, '{"resource_id":3,"starts_at":"2026-12-01T07:00:00.5Z","ends_at":"2026-12-01T08:00:00.75+01:00"}', '{"ends_at":"2026-12-01T08:00:00.750000+01:00","resource_id":3,"starts_at":"2026-12-01T07:00:00.500000Z"}', 'd18c0d573b805cc5965bad28dd0189ae14dcaa022edb4dbb09465205e6c6785f'),
(9, '{"resource_id":3,"starts_at":"2026-12-01T07:00:00.123456+05:30","ends_at":"2026-12-01T07:00:00.654321+05:30"}', '{"ends_at":"2026-12-01T07:00:00.654321+05:30","resource_id":3,"starts_at":"2026-12-01T07:00:00.123456+05:30"}', '013947d69ed028b1703664fe4237af5712c4fbd8903c8faf03a61733e12d9d10'),
(10, '{"resource_id":3,"starts_at":"2026-12-01T07:00:00.000000Z","ends_at":"2026-12-01T07:00:00.000001Z"}', '{"ends_at":"2026-12-01T07:00:00.000001Z","resource_id":3,"starts_at":"2026-12-01T07:00:00Z"}', 'ddd6818e4b44599fdd666eb59091035d0984d3b3c3416d4d914731cd05989077'),
(11, '{"resource_id":3,"starts_at":"2026-12-01T07:00:00.100+02:00","ends_at":"2026-12-01T07:00:00.120000+02:00"}', '{"ends_at":"2026-12-01T07:00:00.120000+02:00","resource_id":3,"starts_at":"2026-12-01T07:00:00.100000+02:00"}', 'c529c1403ce5d14cb268a2cf6062eebd67c002b1a07a8d3afe1098f0d3985508'),
(12, '{"resource_id":4,"starts_at":"2026-12-01T00:30:00+23:59","ends_at":"2026-12-01T23:30:00-23:59"}', '{"ends_at":"2026-12-01T23:30:00-23:59","resource_id":4,"starts_at":"2026-12-01T00:30:00+23:59"}', '241be941ca45dbdf240454a74524ca4edbf9d3db9fd4ece24b63c5c234b84708'),
(13, '{"resource_id":4,"starts_at":"2024-02-29T23:59:59+14:00","ends_at":"2024-03-01T00:00:00+14:00"}', '{"ends_at":"2024-03-01T00:00:00+14:00","resource_id":4,"starts_at":"2024-02-29T23:59:59+14:00"}', 'd1ec136866a860d9c92d6a2cc5c8c9881294b28dd403018f4012fbd86a4dc250'),
(14, '{"resource_id":4,"starts_at":"2026-03-29T01:59:59+01:00","ends_at":"2026-03-29T03:00:00+02:00"}', '{"ends_at":"2026-03-29T03:00:00+02:00","resource_id":4,"starts_at":"2026-03-29T01:59:59+01:00"}', 'be04e14c40c233530949c533d859ad6e54e7693b983538d69abd928efe448ae9'),
(15, '{"resource_id":5,"starts_at":"0001-01-01T00:00:00Z","ends_at":"0001-01-01T00:00:01Z"}', '{"ends_at":"0001-01-01T00:00:01Z","resource_id":5,"starts_at":"0001-01-01T00:00:00Z"}', '949a13f785e258e7e3fc9c292fc550b8a069bd6c21d6df1dfec5e19426d315fc'),
(16, '{"resource_id":5,"starts_at":"9999-12-31T23:00:00Z","ends_at":"9999-12-31T23:59:59.999999Z"}', '{"ends_at":"9999-12-31T23:59:59.999999Z","resource_id":5,"starts_at":"9999-12-31T23:00:00Z"}', '4f3e160004a6f4a92d8add2bb28effbe772a7b91b8444e73512c6ca4659f492d'),
(17, '{"resource_id":6,"starts_at":"2026-12-31T23:00:00-01:00","ends_at":"2027-01-01T02:00:00+01:00"}', '{"ends_at":"2027-01-01T02:00:00+01:00","resource_id":6,"starts_at":"2026-12-31T23:00:00-01:00"}', '1cb0d3ba432044c292e1ff21b520d80b296291d785cda03956643200d5bfdf10'),
(18, '{"resource_id":7,"starts_at":"1999-12-31T23:59:59.999999+00:01","ends_at":"2000-01-01T00:00:00-00:01"}', '{"ends_at":"2000-01-01T00:00:00-00:01","resource_id":7,"starts_at":"1999-12-31T23:59:59.999999+00:01"}', '39fca8cce56c04335a66bdc2ec4fa6e3464a7578c9bc75ec21ea34e1dafae332'),
(19, '{"resource_id":2147483647,"starts_at":"2026-12-01T07:00:00Z","ends_at":"2026-12-01T08:00:00Z"}', '{"ends_at":"2026-12-01T08:00:00Z","resource_id":2147483647,"starts_at":"2026-12-01T07:00:00Z"}', '19c5ea0a141007e226f814bea0ad6038266b8394ffb9d16777989ebf46ce91db'),
(20, '{"resource_id":10,"starts_at":"2026-06-15T12:00:00+09:30","ends_at":"2026-06-15T13:00:00+09:30"}', '{"ends_at":"2026-06-15T13:00:00+09:30","resource_id":10,"starts_at":"2026-06-15T12:00:00+09:30"}', '629dd90f9e18825759dd1aa3fd190ad795f540fb8593b9593b618b5843ff1a74'),
(21, '{"resource_id":10,"starts_at":"2026-06-15T12:00:00-09:30","ends_at":"2026-06-15T13:00:00-09:30"}', '{"ends_at":"2026-06-15T13:00:00-09:30","resource_id":10,"starts_at":"2026-06-15T12:00:00-09:30"}', '08fbd0a51aa89544067ea41b9e2de307e6784ea638645afbea4083210cd09edd'),
(22, '{"resource_id":11,"starts_at":"1970-01-01T00:00:00Z","ends_at":"1970-01-01T00:00:00.000001Z"}', '{"ends_at":"1970-01-01T00:00:00.000001Z","resource_id":11,"starts_at":"1970-01-01T00:00:00Z"}', '122f84c25a6765c4a7c5d2d718bc7e2cdfc3b043a25405cf84b6eecb7d9771e3'),
(23, '{"resource_id":11,"starts_at":"1969-12-31T23:59:59.999999Z","ends_at":"1970-01-01T00:00:00Z"}', '{"ends_at":"1970-01-01T00:00:00Z","resource_id":11,"starts_at":"1969-12-31T23:59:59.999999Z"}', 'aca1352825c91eac384fd4aaca7d3e9e5bdd882c9d279bc828c28e0dfc4fbb0c'),
(24, '{"resource_id":12,"starts_at":"2026-12-01T10:00:00.000001+03:00","ends_at":"2026-12-01T10:00:00.999999+03:00"}', '{"ends_at":"2026-12-01T10:00:00.999999+03:00","resource_id":12,"starts_at":"2026-12-01T10:00:00.000001+03:00"}', 'a66cd2dbafd60b386e24b71b9eaaa7c643a09a2677fa7a2295d41d67978484b2'),
(25, '{"ends_at":"2026-12-01T11:00:00+03:00","starts_at":"2026-12-01T10:00:00+03:00","resource_id":1}', '{"ends_at":"2026-12-01T11:00:00+03:00","resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00"}', 'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a'),
(26, '{"resource_id":1.0,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T11:00:00+03:00","resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00"}', 'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a'),
(27, '{"resource_id":1e0,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', '{"ends_at":"2026-12-01T11:00:00+03:00","resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00"}', 'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a'),
(28, '{ "resource_id" : 1 , "starts_at" : "2026-12-01T10:00:00+03:00" , "ends_at" : "2026-12-01T11:00:00+03:00" }', '{"ends_at":"2026-12-01T11:00:00+03:00","resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00"}', 'c865ca383ae45782507e33707b5bf67a1b0fe60282addac9772ce24b538cae7a');

-- okno computes the same text and fingerprint in version 0
SELECT n, payload, okno_canonical(payload::jsonb, 0::smallint) AS okno, canonical AS pydantic
  FROM okno_course_vectors
 WHERE okno_canonical(payload::jsonb, 0::smallint) IS DISTINCT FROM canonical
 ORDER BY n;
SELECT n FROM okno_course_vectors
 WHERE okno_fingerprint(payload::jsonb, 0::smallint) IS DISTINCT FROM fingerprint
 ORDER BY n;
SELECT count(*) AS vectors FROM okno_course_vectors;

-- where the offsets are all zero the two forms agree, elsewhere they do not
SELECT count(*) FILTER (WHERE okno_fingerprint(payload::jsonb, 0::smallint) = okno_fingerprint(payload::jsonb)) AS same,
       count(*) FILTER (WHERE okno_fingerprint(payload::jsonb, 0::smallint) <> okno_fingerprint(payload::jsonb)) AS different
  FROM okno_course_vectors;

-- independent of the session's settings
SET TimeZone = 'Pacific/Chatham';
SET DateStyle = 'SQL, DMY';
SELECT count(*) AS mismatches_under_other_settings
  FROM okno_course_vectors
 WHERE okno_canonical(payload::jsonb, 0::smallint) <> canonical;
RESET TimeZone;
RESET DateStyle;

-- the version argument
SELECT okno_canonical('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}', 1::smallint)
     = okno_canonical('{"resource_id":1,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}') AS version_1_is_okno;
SELECT okno_test.err($$SELECT okno_canonical('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', 2::smallint)$$);
SELECT okno_test.err($$SELECT okno_fingerprint('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}', NULL::smallint)$$);
SELECT okno_test.err($$SELECT okno_fingerprint('{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z"}', 0::smallint)$$);

DROP TABLE okno_course_vectors;
