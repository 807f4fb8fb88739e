# The course "Окно", service.py: lesson 10 as the course quotes it, with
# lesson 14's outbox event (OUTBOX = True) written before the common commit,
# as the lesson-14 page describes.
from hashlib import sha256
import json
import os
import re
from uuid import uuid4

from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from errors import DomainError
from models import Booking, Resource
from schemas import BookingIn, BookingOut

OUTBOX = os.environ.get("COURSE_LESSON", "14") == "14"


def create_booking(
    db: Session, data: BookingIn, actor_id: int, request_key: str
) -> BookingOut:
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", request_key) is None:
        raise DomainError("invalid_key", "Некорректный ключ запроса", 422)
    canonical = json.dumps(
        data.model_dump(mode="json"), sort_keys=True, separators=(",", ":")
    )
    fingerprint = sha256(canonical.encode()).hexdigest()
    try:
        db.execute(text(
            "SELECT pg_advisory_xact_lock(hashtextextended(:scope, 0))"
        ), {"scope": f"{actor_id}:{request_key}"})
        previous = db.execute(text(
            "SELECT fingerprint, response_body FROM idempotency "
            "WHERE actor_id = :actor AND request_key = :key"
        ), {"actor": actor_id, "key": request_key}).mappings().first()
        if previous:
            if previous["fingerprint"] != fingerprint:
                raise DomainError("key_reused", "Ключ уже связан с другим запросом")
            result = BookingOut.model_validate(previous["response_body"])
            db.commit()
            return result
        if db.get(Resource, data.resource_id) is None:
            raise DomainError("resource_missing", "Ресурс не найден", 404)
        row = Booking(**data.model_dump(), actor_id=actor_id)
        db.add(row)
        db.flush()
        result = BookingOut.model_validate(row)
        body = json.dumps(result.model_dump(mode="json"))
        db.execute(text(
            "INSERT INTO idempotency "
            "(actor_id, request_key, fingerprint, response_body) "
            "VALUES (:actor, :key, :fingerprint, CAST(:body AS jsonb))"
        ), {"actor": actor_id, "key": request_key,
            "fingerprint": fingerprint, "body": body})
        if OUTBOX:
            db.execute(text(
                "INSERT INTO outbox (id, kind, payload) "
                "VALUES (:id, 'booking_created', CAST(:payload AS jsonb))"
            ), {"id": str(uuid4()),
                "payload": json.dumps({"booking_id": row.id})})
        db.commit()
        return result
    except IntegrityError as error:
        db.rollback()
        constraint = getattr(getattr(error.orig, "diag", None), "constraint_name", None)
        if constraint == "bookings_no_overlap":
            raise DomainError("slot_busy", "Интервал уже занят") from error
        raise
    except Exception:
        db.rollback()
        raise
