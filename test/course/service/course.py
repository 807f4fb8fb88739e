"""Drive the course's service from the command line (okno's adoption tests).

    course.py create < requests      one request per line, JSON:
                                     {"actor": 1, "key": "k", "body": "<raw JSON text>"}
    course.py drain N                drain_once, N times

For each request prints one JSON line: {"key": ..., "card": {...}} or
{"key": ..., "error": "code"}, as the course's route would answer.  The body
is parsed as the route's FastAPI layer would, with pydantic (BookingIn).
Environment: DATABASE_URL (a SQLAlchemy URL, postgresql+psycopg://...),
COURSE_LESSON (14, the default, writes outbox events; 10 does not).
"""
import json
import sys

from pydantic import ValidationError

from db import SessionFactory
from drain import drain_once
from errors import DomainError
from schemas import BookingIn
from service import create_booking


def create():
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            data = BookingIn.model_validate_json(req["body"])
        except ValidationError:
            print(json.dumps({"key": req["key"], "error": "invalid_payload"}), flush=True)
            continue
        with SessionFactory() as db:
            try:
                out = create_booking(db, data, req["actor"], req["key"])
                print(json.dumps({"key": req["key"], "card": out.model_dump(mode="json")},
                                 sort_keys=True), flush=True)
            except DomainError as e:
                print(json.dumps({"key": req["key"], "error": e.code}), flush=True)


def main():
    if sys.argv[1] == "create":
        create()
    elif sys.argv[1] == "drain":
        for _ in range(int(sys.argv[2])):
            drain_once()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
