#!/usr/bin/env python3
"""Test vectors for the course's fingerprint form (okno fingerprint version 0).

The course's Python service stored, for every key,

    fingerprint = sha256(json.dumps(BookingIn.model_dump(mode="json"),
                                    sort_keys=True, separators=(",", ":")))

with BookingIn a pydantic model (resource_id: int, starts_at: datetime,
ends_at: datetime).  What that text is depends on pydantic's serialisation
of datetimes, so this script computes it with the real library: pydantic 2,
as Debian 13 ships it (python3-pydantic 2.10; Debian 12 has only 1.x).  It
shares no code with okno.  Run it where pydantic 2 is installed, e.g. in the
Debian 13 root that tools/pgroot 17 builds:

    chroot "$(tools/pgroot 17)" python3 /path/to/make_course_vectors.py OUTDIR

It writes, deterministically:

  OUTDIR/course_vectors.tsv   payload<TAB>course canonical<TAB>fingerprint
  OUTDIR/course_vectors.sql   the pg_regress test of the same vectors

Every payload is one both accept (okno's rules are stricter than pydantic's:
an offset is required, at most six fractional digits ...), since only those
can be both a course key's request and okno's; the regress test fails if
okno refuses one.
"""

import hashlib
import json
import os
import sys
from datetime import datetime

import pydantic
from pydantic import BaseModel


class BookingIn(BaseModel):
    resource_id: int
    starts_at: datetime
    ends_at: datetime


# (resource_id, starts_at, ends_at) as a client sends them
PAYLOADS = [
    (1, "2026-12-01T10:00:00+03:00", "2026-12-01T11:00:00+03:00"),
    (1, "2026-12-01T07:00:00Z", "2026-12-01T08:00:00Z"),
    (1, "2026-12-01T07:00:00+00:00", "2026-12-01T08:00:00+00:00"),
    (1, "2026-12-01T07:00:00-00:00", "2026-12-01T08:00:00-00:00"),
    (1, "2026-12-01t07:00:00z", "2026-12-01T08:00:00z"),
    (2, "2026-12-01T10:00:00+03:00", "2026-12-01T08:00:00Z"),
    (2, "2026-12-01T02:00:00-05:00", "2026-12-01T03:00:00-05:00"),
    (3, "2026-12-01T07:00:00.5Z", "2026-12-01T08:00:00.75+01:00"),
    (3, "2026-12-01T07:00:00.123456+05:30", "2026-12-01T07:00:00.654321+05:30"),
    (3, "2026-12-01T07:00:00.000000Z", "2026-12-01T07:00:00.000001Z"),
    (3, "2026-12-01T07:00:00.100+02:00", "2026-12-01T07:00:00.120000+02:00"),
    (4, "2026-12-01T00:30:00+23:59", "2026-12-01T23:30:00-23:59"),
    (4, "2024-02-29T23:59:59+14:00", "2024-03-01T00:00:00+14:00"),
    (4, "2026-03-29T01:59:59+01:00", "2026-03-29T03:00:00+02:00"),
    (5, "0001-01-01T00:00:00Z", "0001-01-01T00:00:01Z"),
    (5, "9999-12-31T23:00:00Z", "9999-12-31T23:59:59.999999Z"),
    (6, "2026-12-31T23:00:00-01:00", "2027-01-01T02:00:00+01:00"),
    (7, "1999-12-31T23:59:59.999999+00:01", "2000-01-01T00:00:00-00:01"),
    (2147483647, "2026-12-01T07:00:00Z", "2026-12-01T08:00:00Z"),
    (10, "2026-06-15T12:00:00+09:30", "2026-06-15T13:00:00+09:30"),
    (10, "2026-06-15T12:00:00-09:30", "2026-06-15T13:00:00-09:30"),
    (11, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000001Z"),
    (11, "1969-12-31T23:59:59.999999Z", "1970-01-01T00:00:00Z"),
    (12, "2026-12-01T10:00:00.000001+03:00", "2026-12-01T10:00:00.999999+03:00"),
]

# The same requests written as raw JSON text in other shapes: the resource as
# 1.0 or 1e0, keys in another order, whitespace.  jsonb and pydantic both
# take them to the same request.
EXTRA_TEXTS = [
    '{"ends_at":"2026-12-01T11:00:00+03:00","starts_at":"2026-12-01T10:00:00+03:00","resource_id":1}',
    '{"resource_id":1.0,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}',
    '{"resource_id":1e0,"starts_at":"2026-12-01T10:00:00+03:00","ends_at":"2026-12-01T11:00:00+03:00"}',
    '{ "resource_id" : 1 , "starts_at" : "2026-12-01T10:00:00+03:00" , "ends_at" : "2026-12-01T11:00:00+03:00" }',
]


def course_canonical(payload):
    data = BookingIn.model_validate(payload)
    return json.dumps(data.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def vectors():
    out = []
    texts = [json.dumps({"resource_id": r, "starts_at": s, "ends_at": e}, separators=(",", ":"))
             for r, s, e in PAYLOADS] + EXTRA_TEXTS
    for text in texts:
        canonical = course_canonical(json.loads(text))
        fingerprint = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        out.append((text, canonical, fingerprint))
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    if not pydantic.VERSION.startswith("2."):
        sys.exit("pydantic 2 is needed (found %s)" % pydantic.VERSION)
    rows = vectors()
    with open(os.path.join(outdir, "course_vectors.tsv"), "w", encoding="utf-8") as f:
        for row in rows:
            f.write("\t".join(row) + "\n")
    with open(os.path.join(outdir, "course_vectors.sql"), "w", encoding="utf-8") as f:
        f.write(SQL_HEAD.format(version=pydantic.VERSION))
        f.write(",\n".join("(%d, %s, %s, %s)" % (n, lit(p), lit(c), lit(h))
                           for n, (p, c, h) in enumerate(rows, 1)))
        f.write(";\n")
        f.write(SQL_TAIL)


def lit(s):
    return "'" + s.replace("'", "''") + "'"


SQL_HEAD = """-- Test vectors for the course's fingerprint form (fingerprint version 0).
--
-- GENERATED FILE -- DO NOT EDIT BY HAND.
-- The vectors come from test/vectors/make_course_vectors.py, which computes
-- the course's canonical text with pydantic {version} and json.dumps, as the
-- course's service did, and the fingerprint with hashlib.sha256.  Re-run it
-- (in a Debian 13 root, which has pydantic 2) to regenerate this file and
-- test/vectors/course_vectors.tsv.
--
-- Assumes the okno extension has already been created by an earlier test.

CREATE TEMP TABLE okno_course_vectors(n int, payload text, canonical text, fingerprint text);
INSERT INTO okno_course_vectors VALUES
"""

SQL_TAIL = """
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
"""

if __name__ == "__main__":
    main()
