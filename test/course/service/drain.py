# The course "Окно", drain.py of lesson 14, as the course quotes it.
from datetime import datetime, timezone
import json

from sqlalchemy import text

from db import SessionFactory


def drain_once() -> None:
    with SessionFactory.begin() as session:
        row = session.execute(text(
            "SELECT id, kind, payload FROM outbox "
            "WHERE delivered_at IS NULL ORDER BY id "
            "FOR UPDATE SKIP LOCKED LIMIT 1"
        )).mappings().first()
        if row is None:
            return
        # Educational recipient: stdout, not email or an external account.
        print(json.dumps({"event_id": str(row["id"]), "payload": row["payload"]}))
        session.execute(text(
            "UPDATE outbox SET delivered_at = :now WHERE id = :id"
        ), {"now": datetime.now(timezone.utc), "id": row["id"]})


if __name__ == "__main__":
    drain_once()
