"""The course's booking service on okno: FastAPI routes, SQL calls, no service code.

    POST /bookings                   okno_create_booking_result(actor, key, body)
    GET  /bookings/{id}              okno_get_booking(actor, id)
    POST /bookings/{id}/cancel       okno_cancel_booking(actor, id)
    POST /bookings/{id}/reschedule   okno_idempotent_result('bookings/reschedule', actor,
                                         key, request, 'public.reschedule_booking(jsonb)')
    GET  /health

The reschedule handler is the app's own SQL function (schema.sql): apply it
as the tables' owner; the app creates it at startup when it is missing and
its role may.

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


def from_database_error(e: psycopg.Error,
                        statuses: Optional[Dict[str, int]] = None) -> JSONResponse:
    """An error raised by okno becomes its catalogue status and code; the
    message and detail are the database's own (they name the field, the key,
    the resource). Anything okno does not list is a 500. `statuses` replaces
    the catalogue's status of some codes (the reschedule route's draft
    statuses)."""
    entry = okno_errors().get(e.sqlstate or "")
    if entry is None:
        print(f"okno example: unexpected database error {e.sqlstate}: {e}", file=sys.stderr)
        return problem(500, "internal_error", "unexpected database error")
    diag = e.diag
    status = (statuses or {}).get(entry["code"], entry["http_status"])
    headers = {"Retry-After": "1"} if entry["code"] == "request_in_progress" else None
    return problem(status, entry["code"], diag.message_primary or entry["message"],
                   diag.message_detail, headers)


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


@app.on_event("startup")
def create_handler_if_missing() -> None:
    # The app's own schema (schema.sql): normally applied by the tables'
    # owner with the tables; created here when missing, if this role may
    # (an application role without CREATE on the schema may not, and needs
    # not: the owner applied it). Best effort, as above.
    try:
        ensure_schema()
    except (psycopg.Error, OSError) as e:
        print(f"okno example: {RESCHEDULE_HANDLER} not checked or not created at startup "
              f"(apply schema.sql as the tables' owner): {e}", file=sys.stderr)


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


def with_retries(once, key: str):
    """once(conn), each time in a new transaction, until it does not fail
    with 40001 or 40P01; RetriesExhausted after 1 + SERIALIZATION_RETRIES."""
    with connect() as conn:
        for attempt in range(SERIALIZATION_RETRIES + 1):
            try:
                return once(conn)
            except (pgerrors.SerializationFailure, pgerrors.DeadlockDetected) as e:
                print(f"okno example: {e.sqlstate} on attempt {attempt + 1}, key {key!r}",
                      file=sys.stderr)
                if attempt < SERIALIZATION_RETRIES:
                    time.sleep(RETRY_PAUSE_SECONDS * (attempt + 1))
    raise RetriesExhausted()


def create_with_retries(actor: int, key: str, body: str):
    return with_retries(lambda conn: create_once(conn, actor, key, body), key)


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


# --- POST /bookings/{id}/reschedule: okno's generic idempotency keys ---------------
#
# Built only on okno's generic API: okno_idempotent_result runs the app's own
# handler, public.reschedule_booking(jsonb) (schema.sql), once per
# ('bookings/reschedule', actor, key) and replays its stored response; the
# handler moves the booking and writes booking_rescheduled with okno_emit.
# The statuses are the IETF draft's (draft-ietf-httpapi-idempotency-key-header):
# a missing key 400, a key reused with another request 422, a key whose first
# request is still running 409 at once (okno.key_wait = off), and okno's
# 410 for an expired key. POST /bookings keeps the course's (key_reused 409).

RESCHEDULE_OPERATION = "bookings/reschedule"
RESCHEDULE_HANDLER = "public.reschedule_booking(jsonb)"
SCHEMA_SQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema.sql")

# The draft's statuses where okno's catalogue has the course's.
DRAFT_STATUSES = {"key_reused": 422}
# Refusals the handler returns that okno's catalogue does not list (the
# others, booking_missing and slot_busy, take the catalogue's status).
HANDLER_REFUSALS = {"booking_cancelled": 409}

RESCHEDULE_IN_SCHEMA = {
    "type": "object",
    "required": ["starts_at", "ends_at"],
    "additionalProperties": False,
    "properties": {
        "starts_at": {"type": "string", "format": "date-time"},
        "ends_at": {"type": "string", "format": "date-time"},
    },
}


def ensure_schema() -> None:
    """Create the handler from schema.sql when the database has none."""
    with connect() as conn:
        if conn.execute("SELECT to_regprocedure(%s)", (RESCHEDULE_HANDLER,)).fetchone()[0] is None:
            with open(SCHEMA_SQL, encoding="utf-8") as f:
                conn.execute(f.read())
            print(f"okno example: created {RESCHEDULE_HANDLER} from schema.sql", file=sys.stderr)


def reschedule_body(raw: bytes):
    """(body text, None), or (None, why): the body must be a JSON object with
    exactly "starts_at" and "ends_at". Only the shape is checked here; the
    text goes to PostgreSQL unchanged, and the handler checks the times by
    okno's rule (okno_canonical)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "request body is not UTF-8"
    try:
        value = json.loads(text)
    except ValueError as e:
        return None, f"request body is not valid JSON: {e}"
    if not isinstance(value, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(value), "a number")
        return None, f"The payload must be a JSON object, not {kind}."
    for field in value:
        if field not in ("starts_at", "ends_at"):
            return None, f'Field "{field}" is not allowed.'
    for field in ("starts_at", "ends_at"):
        if field not in value:
            return None, f'Field "{field}" is missing.'
    return text, None


def reschedule_once(conn: psycopg.Connection, actor: int, key: str, booking_id: int, body: str):
    """One transaction: the key, the booking's new times and the event, or
    nothing. SET LOCAL: a request whose key another transaction holds gets
    request_in_progress at once instead of waiting (and the setting ends
    with the transaction, so a pooled server session keeps its own)."""
    with conn.transaction():
        conn.execute("SET LOCAL okno.key_wait = off")
        row = conn.execute(
            "SELECT response, replayed FROM okno_idempotent_result(%s, %s, %s,"
            " %s::jsonb || jsonb_build_object('booking_id', %s::bigint, 'actor_id', %s::integer),"
            " %s::regprocedure)",
            (RESCHEDULE_OPERATION, str(actor), key, body, booking_id, actor, RESCHEDULE_HANDLER),
        ).fetchone()
    return row[0], row[1]


@app.post(
    "/bookings/{booking_id}/reschedule",
    openapi_extra={"requestBody": {"required": True, "content": {
        "application/json": {"schema": RESCHEDULE_IN_SCHEMA}}}},
)
async def reschedule_booking_route(
    booking_id: str,
    request: Request,
    background_tasks: BackgroundTasks,
    idempotency_key: Optional[str] = Header(None, alias="Idempotency-Key"),
    authorization: Optional[str] = Header(None),
):
    raw = await request.body()
    return await run_in_threadpool(reschedule_sync, booking_id, raw, idempotency_key,
                                   authorization, background_tasks)


def reschedule_sync(booking_id: str, raw: bytes, idempotency_key: Optional[str],
                    authorization: Optional[str],
                    background_tasks: BackgroundTasks) -> JSONResponse:
    if idempotency_key is None:  # the draft: 400
        return problem(400, "missing_key", "the Idempotency-Key header is required")
    actor = actor_from(authorization)
    if actor is None:
        return unauthorized()
    try:
        bid = booking_id_from(booking_id)
        if bid is None:  # not an id at all: no such booking (nothing stored)
            entry = okno_error_by_code("booking_missing")
            return problem(entry["http_status"], entry["code"], entry["message"])
        body, why = reschedule_body(raw)
        if body is None:  # nothing stored: the key stays free
            entry = okno_error_by_code("invalid_payload")
            return problem(entry["http_status"], entry["code"], entry["message"], why)
        response, replayed = with_retries(
            lambda conn: reschedule_once(conn, actor, idempotency_key, bid, body), idempotency_key)
    except RetriesExhausted:
        entry = okno_errors()["40001"]
        return problem(entry["http_status"], entry["code"], entry["message"],
                       headers={"Retry-After": "1"})
    except (pgerrors.InvalidTextRepresentation, pgerrors.UntranslatableCharacter) as e:
        # JSON that Python reads and PostgreSQL does not (NaN, "\u0000")
        entry = okno_error_by_code("invalid_payload")
        return problem(entry["http_status"], entry["code"],
                       "request body is not valid JSON: " + (e.diag.message_primary or ""),
                       e.diag.message_detail)
    except pgerrors.ExclusionViolation:
        # The handler found the slot free, but a booking committed meanwhile
        # took it (bookings_no_overlap). The error rolled everything back,
        # key included: a retry runs again and gets the stored slot_busy.
        entry = okno_error_by_code("slot_busy")
        return problem(entry["http_status"], entry["code"], entry["message"],
                       "another booking took the slot meanwhile; nothing was stored")
    except (psycopg.OperationalError, pgerrors.ReadOnlySqlTransaction) as e:
        return unavailable(e)
    except psycopg.Error as e:
        return from_database_error(e, DRAFT_STATUSES)
    # committed: the event (if the handler wrote one) goes out sooner
    background_tasks.add_task(drain_once)
    headers = {"Idempotent-Replayed": "true"} if replayed else None
    code = response.get("code") if isinstance(response, dict) else None
    if code is None:
        return JSONResponse(response, status_code=200, headers=headers)
    # a refusal the handler returned: stored, so a retry gets it again
    try:
        status = HANDLER_REFUSALS.get(code) or okno_error_by_code(code)["http_status"]
    except KeyError:
        print(f"okno example: the handler returned an unknown code {code!r}", file=sys.stderr)
        status = 500
    except psycopg.OperationalError as e:  # the catalogue could not be read
        return unavailable(e)
    return JSONResponse(response, status_code=status, headers=headers)


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
