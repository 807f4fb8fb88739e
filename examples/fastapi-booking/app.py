"""The course's booking service on okno: FastAPI routes, SQL calls, no service code.

    POST /bookings               okno_create_booking_result(actor, key, body)
    GET  /bookings/{id}          okno_get_booking(actor, id)
    POST /bookings/{id}/cancel   okno_cancel_booking(actor, id)
    GET  /health

Connection: DATABASE_URL when set (a libpq URI or "key=value" string),
otherwise libpq's usual environment (PGHOST, PGPORT, PGUSER, PGDATABASE...).
One connection per request; the background drain opens its own, with
DRAIN_DATABASE_URL when set (a relay role, as in docs/PRIVILEGES.md).

Run:  python3 -m uvicorn app:app --host 127.0.0.1 --port 8000
"""

import json
import os
import re
import sys
import threading
import time
from typing import Any, Dict, Optional

import psycopg
from psycopg import errors as pgerrors
from psycopg import IsolationLevel
from fastapi import BackgroundTasks, FastAPI, Header, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

# --- settings ---------------------------------------------------------------

# How many times a create that failed with a serialization failure (40001,
# or a deadlock, 40P01) is tried again, each in a new transaction, before the
# route gives up with 503. okno only raises 40001 under REPEATABLE READ or
# SERIALIZABLE (a concurrent request with the same key committed after this
# transaction's snapshot); the retry then replays that request's card.
SERIALIZATION_RETRIES = 3
RETRY_PAUSE_SECONDS = 0.05

# The course chose READ COMMITTED explicitly: a request that waited for the
# key's lock sees the first request's committed row and replays it.
# OKNO_EXAMPLE_ISOLATION=repeatable_read (or serializable) shows the 40001
# path instead.
ISOLATION_LEVELS = {
    "read_committed": IsolationLevel.READ_COMMITTED,
    "repeatable_read": IsolationLevel.REPEATABLE_READ,
    "serializable": IsolationLevel.SERIALIZABLE,
}
_isolation = os.environ.get("OKNO_EXAMPLE_ISOLATION", "read_committed").lower()
if _isolation not in ISOLATION_LEVELS:
    raise SystemExit(f"OKNO_EXAMPLE_ISOLATION must be one of {', '.join(ISOLATION_LEVELS)}")
ISOLATION = ISOLATION_LEVELS[_isolation]

# The course's fixed demo actor; "Authorization: Bearer actor-N" acts as
# actor N. No real accounts: this is the course's teaching login, not auth.
DEMO_ACTOR = 1
TOKEN_RE = re.compile(r"Bearer actor-([1-9][0-9]{0,9})")

BIGINT_MAX = 2**63 - 1


def conninfo() -> str:
    """DATABASE_URL, or "" so that libpq reads PGHOST, PGPORT, PGUSER, ..."""
    return os.environ.get("DATABASE_URL", "")


def drain_conninfo() -> str:
    """The background drain's connection: DRAIN_DATABASE_URL, or the app's."""
    return os.environ.get("DRAIN_DATABASE_URL") or conninfo()


def connect(info: Optional[str] = None) -> psycopg.Connection:
    # autocommit: every transaction is an explicit conn.transaction() block
    # (BEGIN ISOLATION LEVEL ... / COMMIT), so nothing is left open.
    conn = psycopg.connect(conninfo() if info is None else info, autocommit=True,
                           application_name="okno-fastapi-example",
                           connect_timeout=10)
    conn.isolation_level = ISOLATION
    return conn


# --- okno's error catalogue, read from the database once ----------------------

_errors_lock = threading.Lock()
_errors_by_sqlstate: Optional[Dict[str, Dict[str, Any]]] = None


def okno_errors() -> Dict[str, Dict[str, Any]]:
    """SQLSTATE -> {code, sqlstate, http_status, message}, from okno_errors()."""
    global _errors_by_sqlstate
    if _errors_by_sqlstate is None:
        with _errors_lock:
            if _errors_by_sqlstate is None:
                with connect() as conn:
                    rows = conn.execute(
                        "SELECT code, sqlstate, http_status, message FROM okno_errors()"
                    ).fetchall()
                _errors_by_sqlstate = {
                    r[1]: {"code": r[0], "sqlstate": r[1], "http_status": r[2], "message": r[3]}
                    for r in rows
                }
    return _errors_by_sqlstate


def okno_error_by_code(code: str) -> Dict[str, Any]:
    for e in okno_errors().values():
        if e["code"] == code:
            return e
    raise KeyError(code)


def problem(status: int, code: str, message: str, detail: Optional[str] = None,
            headers: Optional[Dict[str, str]] = None) -> JSONResponse:
    """The course's error body: {"code": ..., "message": ...} (+ "detail")."""
    body: Dict[str, Any] = {"code": code, "message": message}
    if detail:
        body["detail"] = detail
    return JSONResponse(body, status_code=status, headers=headers)


def from_database_error(e: psycopg.Error) -> JSONResponse:
    """An error raised by okno becomes its catalogue status and code; the
    message and detail are the database's own (they name the field, the key,
    the resource). Anything okno does not list is a 500."""
    entry = okno_errors().get(e.sqlstate or "")
    if entry is None:
        print(f"okno example: unexpected database error {e.sqlstate}: {e}", file=sys.stderr)
        return problem(500, "internal_error", "unexpected database error")
    diag = e.diag
    return problem(entry["http_status"], entry["code"],
                   diag.message_primary or entry["message"], diag.message_detail)


def unavailable(e: Exception) -> JSONResponse:
    """The connection failed, or the server cannot take writes (a standby,
    25006): try again later."""
    print(f"okno example: database unavailable: {e}", file=sys.stderr)
    return problem(503, "database_unavailable", "the database cannot serve this request now; retry later",
                   headers={"Retry-After": "1"})


# --- the caller ------------------------------------------------------------------

def actor_from(authorization: Optional[str]) -> Optional[int]:
    if authorization is None:
        return DEMO_ACTOR
    m = TOKEN_RE.fullmatch(authorization.strip())
    if m is None or int(m.group(1)) > 2**31 - 1:
        return None
    return int(m.group(1))


def unauthorized() -> JSONResponse:
    return problem(401, "invalid_token", 'use "Authorization: Bearer actor-N", or none for the demo actor',
                   headers={"WWW-Authenticate": "Bearer"})


# --- the background drain: the course's drain_once, on okno ----------------------

def drain_once() -> None:
    """One pending event, delivered to the course's recipient: a JSON line on
    stdout. Its own connection and transaction, never the request's; the
    line is written before the commit marks the event delivered, so a crash
    in between delivers it again (at least once). okno-relay is the real
    worker; this only starts the delivery sooner."""
    try:
        with connect(drain_conninfo()) as conn:
            with conn.transaction():
                row = conn.execute(
                    "SELECT event_id, kind, payload FROM okno_drain_once()"
                ).fetchone()
                if row is None:
                    return
                print(json.dumps({"event_id": str(row[0]), "kind": row[1], "payload": row[2]},
                                 separators=(",", ":")), flush=True)
    except Exception as e:  # the event stays pending; okno-relay delivers it
        print(f"okno example: background drain failed: {e}", file=sys.stderr)


# --- the application ---------------------------------------------------------------

app = FastAPI(
    title="Okno bookings on okno",
    description="The course's booking service with its guarantees in PostgreSQL (okno).",
    version="0.4.1",
)


@app.on_event("startup")
def load_error_catalogue() -> None:
    # Best effort: with the database down the app still starts, and the
    # catalogue is read on first use instead.
    try:
        okno_errors()
    except psycopg.Error as e:
        print(f"okno example: okno_errors() not read at startup: {e}", file=sys.stderr)


BOOKING_IN_SCHEMA = {
    "type": "object",
    "required": ["resource_id", "starts_at", "ends_at"],
    "additionalProperties": False,
    "properties": {
        "resource_id": {"type": "integer", "minimum": 1},
        "starts_at": {"type": "string", "format": "date-time"},
        "ends_at": {"type": "string", "format": "date-time"},
    },
}


# The body is read raw and handed to PostgreSQL unchanged as jsonb: okno does
# every validation (and its canonical form and fingerprint), not pydantic.
@app.post(
    "/bookings",
    status_code=201,
    openapi_extra={"requestBody": {"required": True, "content": {
        "application/json": {"schema": BOOKING_IN_SCHEMA}}}},
)
async def create_booking_route(
    request: Request,
    background_tasks: BackgroundTasks,
    idempotency_key: Optional[str] = Header(None, alias="Idempotency-Key"),
    authorization: Optional[str] = Header(None),
):
    raw = await request.body()
    # The blocking database work runs in the thread pool, as a sync route's would.
    return await run_in_threadpool(create_booking_sync, raw, idempotency_key,
                                   authorization, background_tasks)


def create_booking_sync(raw: bytes, idempotency_key: Optional[str],
                        authorization: Optional[str],
                        background_tasks: BackgroundTasks) -> JSONResponse:
    if idempotency_key is None:
        return problem(400, "missing_key", "the Idempotency-Key header is required")
    actor = actor_from(authorization)
    if actor is None:
        return unauthorized()
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError:
        try:
            entry = okno_error_by_code("invalid_payload")
        except psycopg.OperationalError as e:
            return unavailable(e)
        return problem(entry["http_status"], entry["code"], "request body is not UTF-8")
    try:
        card, replayed = create_with_retries(actor, idempotency_key, body)
    except RetriesExhausted:
        entry = okno_errors()["40001"]
        return problem(entry["http_status"], entry["code"], entry["message"],
                       headers={"Retry-After": "1"})
    except (pgerrors.InvalidTextRepresentation, pgerrors.UntranslatableCharacter) as e:
        # the body is not JSON PostgreSQL accepts: okno never saw it
        entry = okno_error_by_code("invalid_payload")
        return problem(entry["http_status"], entry["code"],
                       "request body is not valid JSON: " + (e.diag.message_primary or ""),
                       e.diag.message_detail)
    except (psycopg.OperationalError, pgerrors.ReadOnlySqlTransaction) as e:
        return unavailable(e)
    except psycopg.Error as e:
        return from_database_error(e)
    # committed: start the delivery sooner, with the drain's own connection
    background_tasks.add_task(drain_once)
    headers = {"Location": f"/bookings/{card['id']}"}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return JSONResponse(card, status_code=201, headers=headers)


class RetriesExhausted(Exception):
    pass


def create_once(conn: psycopg.Connection, actor: int, key: str, body: str):
    """One transaction: the booking, its key and its outbox event, or nothing.

    The function is called in FROM: "SELECT (okno_create_booking_result(...)).*"
    would call it once per column, book with the first call, replay with the
    second and report a fresh booking as replayed.
    """
    with conn.transaction():
        row = conn.execute(
            "SELECT card, replayed FROM okno_create_booking_result(%s, %s, %s::jsonb)",
            (actor, key, body),
        ).fetchone()
    return row[0], row[1]


def create_with_retries(actor: int, key: str, body: str):
    with connect() as conn:
        for attempt in range(SERIALIZATION_RETRIES + 1):
            try:
                return create_once(conn, actor, key, body)
            except (pgerrors.SerializationFailure, pgerrors.DeadlockDetected) as e:
                print(f"okno example: {e.sqlstate} on attempt {attempt + 1}, key {key!r}",
                      file=sys.stderr)
                if attempt < SERIALIZATION_RETRIES:
                    time.sleep(RETRY_PAUSE_SECONDS * (attempt + 1))
    raise RetriesExhausted()


def booking_id_from(text: str) -> Optional[int]:
    if not re.fullmatch(r"[0-9]{1,19}", text):
        return None
    n = int(text)
    return n if 1 <= n <= BIGINT_MAX else None


def booking_call(sql: str, actor_header: Optional[str], booking_id: str,
                 background_tasks: Optional[BackgroundTasks] = None) -> JSONResponse:
    actor = actor_from(actor_header)
    if actor is None:
        return unauthorized()
    bid = booking_id_from(booking_id)
    try:
        if bid is None:  # not an id at all: no such booking
            entry = okno_error_by_code("booking_missing")
            return problem(entry["http_status"], entry["code"], entry["message"])
        with connect() as conn:
            with conn.transaction():
                card = conn.execute(sql, (actor, bid)).fetchone()[0]
    except (psycopg.OperationalError, pgerrors.ReadOnlySqlTransaction) as e:
        return unavailable(e)
    except psycopg.Error as e:
        return from_database_error(e)
    if background_tasks is not None:
        background_tasks.add_task(drain_once)
    return JSONResponse(card, status_code=200)


@app.get("/bookings/{booking_id}")
def get_booking(booking_id: str, authorization: Optional[str] = Header(None)):
    return booking_call("SELECT okno_get_booking(%s, %s)", authorization, booking_id)


@app.post("/bookings/{booking_id}/cancel")
def cancel_booking(booking_id: str, background_tasks: BackgroundTasks,
                   authorization: Optional[str] = Header(None)):
    # okno writes a booking_cancelled event with the cancellation; the same
    # acceleration starts its delivery.
    return booking_call("SELECT okno_cancel_booking(%s, %s)", authorization, booking_id,
                        background_tasks)


@app.get("/health")
def health():
    try:
        with connect() as conn:
            version = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'okno'"
            ).fetchone()
            if version is None:
                return problem(503, "okno_missing", "the okno extension is not installed in this database")
            result: Dict[str, Any] = {"status": "ok", "okno": version[0]}
            try:  # the relay's view: an application role may not read it
                pending, parked = conn.execute(
                    "SELECT pending, parked FROM okno_outbox_status").fetchone()
                result["outbox"] = {"pending": pending, "parked": parked}
            except pgerrors.InsufficientPrivilege:
                pass
    except psycopg.OperationalError as e:
        return unavailable(e)
    except psycopg.Error as e:
        return from_database_error(e)
    return result
