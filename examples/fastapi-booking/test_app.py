"""The course's expected results, end to end over HTTP, against okno.

Needs a running PostgreSQL with okno installed, reached through libpq's
environment (PGHOST, PGPORT, PGUSER). The module creates its own database
(CREATE DATABASE, CREATE EXTENSION okno CASCADE, okno_create_tables(), the
app's schema.sql, two actors, two rooms) and drops it at the end. Run with run_tests.sh, or:

    /usr/bin/python3 -m pytest -v test_app.py
"""

import datetime
import itertools
import json
import os
import pathlib
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import httpx
import psycopg
import pytest
from psycopg import errors as pgerrors
from fastapi.testclient import TestClient

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import app as service  # noqa: E402

DBNAME = os.environ.get("OKNO_EXAMPLE_TEST_DB", f"okno_fastapi_{os.getpid()}")
WAIT = 30  # seconds: the bound on every wait in this file

ANN, BOB = 1, 2            # actors
NOVEMBER, DECEMBER = 1, 2  # resources
BOB_TOKEN = {"Authorization": "Bearer actor-2"}


# --- the database ---------------------------------------------------------------

def admin():
    return psycopg.connect("dbname=postgres", autocommit=True, connect_timeout=10)


@pytest.fixture(scope="module", autouse=True)
def database():
    saved = os.environ.get("DATABASE_URL")
    with admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DBNAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DBNAME}"')
    try:
        with psycopg.connect(f"dbname={DBNAME}", autocommit=True) as conn:
            conn.execute("CREATE EXTENSION okno CASCADE")
            conn.execute("SELECT okno_create_tables()")
            with open(service.SCHEMA_SQL, encoding="utf-8") as f:  # the app's own: its handler
                conn.execute(f.read())
            conn.execute("INSERT INTO actors (id, name) VALUES (1, 'ann'), (2, 'bob')")
            conn.execute("INSERT INTO resources (id, name) VALUES (1, 'november room'), (2, 'december room')")
        os.environ["DATABASE_URL"] = f"dbname={DBNAME}"
        service._errors_by_sqlstate = None
        yield DBNAME
    finally:
        if saved is None:
            os.environ.pop("DATABASE_URL", None)
        else:
            os.environ["DATABASE_URL"] = saved
        with admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{DBNAME}" WITH (FORCE)')


def db():
    return psycopg.connect(f"dbname={DBNAME}", autocommit=True)


def one(query, params=()):
    with db() as conn:
        return conn.execute(query, params).fetchone()


def created_events(booking_id):
    return one("SELECT count(*) FROM outbox WHERE kind = 'booking_created' "
               "AND payload = jsonb_build_object('booking_id', %s::bigint)", (booking_id,))[0]


def drain_everything():
    """Deliver whatever earlier tests left pending, so a drain's output is ours."""
    with db() as conn:
        conn.execute("SELECT count(*) FROM okno_drain(10000)")


@pytest.fixture
def client():
    with TestClient(service.app) as c:
        yield c


# Every test books its own day (from 2026-12-01 on), so tests never share a slot.
_days = itertools.count(0)


def booking(resource=NOVEMBER, day=None, start="10:00:00+03:00", end="11:00:00+03:00"):
    date = (datetime.date(2026, 12, 1) + datetime.timedelta(days=next(_days) if day is None else day))
    return {"resource_id": resource,
            "starts_at": f"{date.isoformat()}T{start}",
            "ends_at": f"{date.isoformat()}T{end}"}


def post(client, body, key, headers=None):
    h = {"Content-Type": "application/json"}
    if key is not None:
        h["Idempotency-Key"] = key
    h.update(headers or {})
    return client.post("/bookings", content=body if isinstance(body, (str, bytes)) else json.dumps(body),
                       headers=h)


def times(day, start="14:00:00+03:00", end="15:00:00+03:00"):
    """A reschedule's body: new times on day `day` (days from 2026-12-01)."""
    b = booking(day=day, start=start, end=end)
    return {"starts_at": b["starts_at"], "ends_at": b["ends_at"]}


def utc(day, hms):
    """The card's form of an instant on day `day`: "2026-12-NNTHH:MM:SSZ"."""
    return f"{(datetime.date(2026, 12, 1) + datetime.timedelta(days=day)).isoformat()}T{hms}Z"


def reschedule(client, booking_id, body, key, headers=None):
    """POST /bookings/{id}/reschedule through a TestClient or an httpx.Client."""
    h = {"Content-Type": "application/json"}
    if key is not None:
        h["Idempotency-Key"] = key
    h.update(headers or {})
    return client.post(f"/bookings/{booking_id}/reschedule",
                       content=body if isinstance(body, (str, bytes)) else json.dumps(body),
                       headers=h)


def events_of(booking_id, kind):
    return one("SELECT count(*) FROM outbox WHERE kind = %s AND payload ->> 'booking_id' = %s",
               (kind, str(booking_id)))[0]


def stored_key(key, scope="1"):
    """The response okno stored for a reschedule key, or None."""
    row = one("SELECT response FROM okno_key WHERE operation = 'bookings/reschedule' "
              "AND scope = %s AND request_key = %s", (scope, key))
    return None if row is None else row[0]


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


# --- the error catalogue ------------------------------------------------------------

def test_error_mapping_is_read_from_okno_errors(client):
    client.get("/health")
    rows = {}
    with db() as conn:
        for code, sqlstate, status, message in conn.execute("SELECT * FROM okno_errors()"):
            rows[sqlstate] = {"code": code, "sqlstate": sqlstate, "http_status": status, "message": message}
    assert service.okno_errors() == rows
    statuses = {e["code"]: e["http_status"] for e in rows.values()}
    assert statuses["invalid_key"] == 422 and statuses["invalid_payload"] == 422
    assert statuses["resource_missing"] == 404 and statuses["booking_missing"] == 404
    assert statuses["key_reused"] == 409 and statuses["slot_busy"] == 409
    assert statuses["actor_missing"] == 403
    assert rows["40001"]["http_status"] == 503


def test_health(client):
    r = client.get("/health")
    assert r.status_code == 200
    assert r.json()["status"] == "ok"
    assert r.json()["okno"] == one("SELECT extversion FROM pg_extension WHERE extname = 'okno'")[0]


# --- create and replay ------------------------------------------------------------------

def test_first_key_201_then_replay_201_same_card(client):
    body = booking()
    first = post(client, body, "november-room-1")
    assert first.status_code == 201, first.text
    card = first.json()
    assert "idempotent-replayed" not in first.headers
    assert first.headers["location"] == f"/bookings/{card['id']}"
    assert card["status"] == "confirmed" and card["actor_id"] == ANN and card["resource_id"] == NOVEMBER
    assert card["starts_at"].endswith("T07:00:00Z")

    # the same intent written differently: other key order, the instants in UTC
    again = {"ends_at": body["ends_at"].replace("11:00:00+03:00", "08:00:00Z"),
             "resource_id": NOVEMBER,
             "starts_at": body["starts_at"].replace("10:00:00+03:00", "07:00:00Z")}
    replay = post(client, again, "november-room-1")
    assert replay.status_code == 201, replay.text
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == card

    assert one("SELECT count(*) FROM bookings WHERE id = %s", (card["id"],))[0] == 1
    assert one("SELECT count(*) FROM idempotency WHERE actor_id = 1 AND request_key = 'november-room-1'")[0] == 1
    assert created_events(card["id"]) == 1


def test_same_key_other_data_409_key_reused(client):
    body = booking()
    assert post(client, body, "reuse-1").status_code == 201
    other = dict(body, resource_id=DECEMBER)
    r = post(client, other, "reuse-1")
    assert r.status_code == 409
    assert r.json()["code"] == "key_reused"
    assert "reuse-1" in r.json()["message"]


def test_busy_slot_new_key_409_slot_busy(client):
    day = next(_days)
    assert post(client, booking(day=day), "busy-1").status_code == 201
    r = post(client, booking(day=day, start="10:30:00+03:00", end="11:30:00+03:00"), "busy-2")
    assert r.status_code == 409
    assert r.json()["code"] == "slot_busy"
    # half-open periods: the next hour is free
    r = post(client, booking(day=day, start="11:00:00+03:00", end="12:00:00+03:00"), "busy-3")
    assert r.status_code == 201, r.text


def test_same_key_for_two_actors_is_two_bookings(client):
    a = post(client, booking(resource=NOVEMBER), "shared-key")
    b = post(client, booking(resource=DECEMBER), "shared-key", BOB_TOKEN)
    assert a.status_code == 201 and b.status_code == 201
    assert a.json()["id"] != b.json()["id"] and b.json()["actor_id"] == BOB


# --- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["no spaces please", "x" * 81, "", "ключ"])
def test_bad_key_422_invalid_key(client, key):
    r = post(client, booking(), key.encode("utf-8"))  # raw bytes on the wire
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "invalid_key"


def test_missing_header_400_missing_key(client):
    r = post(client, booking(), None)
    assert r.status_code == 400
    assert r.json() == {"code": "missing_key", "message": "the Idempotency-Key header is required"}
    assert one("SELECT count(*) FROM idempotency WHERE request_key = ''")[0] == 0


@pytest.mark.parametrize("body, detail", [
    ({"resource_id": 1, "starts_at": "2026-12-01T10:00:00+03:00"}, 'Field "ends_at" is missing'),
    ({"resource_id": 1, "starts_at": "2026-12-01T10:00:00", "ends_at": "2026-12-01T11:00:00+03:00"},
     "offset"),
    ({"resource_id": 1, "starts_at": "2026-12-01T11:00:00Z", "ends_at": "2026-12-01T10:00:00Z"},
     "earlier"),
    ({"resource_id": 1, "starts_at": "2026-12-01T10:00:00Z", "ends_at": "2026-12-01T11:00:00Z",
      "room": "big"}, "room"),
    ({"resource_id": "1", "starts_at": "2026-12-01T10:00:00Z", "ends_at": "2026-12-01T11:00:00Z"},
     "resource_id"),
    ([], "object"),
])
def test_bad_payload_422_invalid_payload_with_the_databases_message(client, body, detail):
    r = post(client, body, "bad-payload")
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "invalid_payload"
    assert r.json()["message"] == "invalid booking payload"   # okno's message
    assert detail in r.json()["detail"]                         # okno's DETAIL


@pytest.mark.parametrize("raw", [b"", b"not json", b'{"resource_id": 1,', b"\xff\xfe",
                                 b'{"a": "\\u0000"}'])
def test_body_that_is_not_json_422_invalid_payload(client, raw):
    r = post(client, raw, "not-json")
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "invalid_payload"


def test_body_is_passed_through_unchanged(client):
    # pydantic would have coerced or rejected these; okno's rules decide:
    # 1e0 is resource 1, and the fraction of a second is kept.
    raw = ('{"resource_id": 1e0, "starts_at": "%s", "ends_at": "%s"}'
           % tuple(booking(start="10:00:00.25+03:00").values())[1:])
    r = post(client, raw, "passthrough")
    assert r.status_code == 201, r.text
    assert r.json()["resource_id"] == 1 and r.json()["starts_at"].endswith("07:00:00.250000Z")


def test_unknown_resource_404_resource_missing(client):
    r = post(client, booking(resource=999), "no-room")
    assert r.status_code == 404
    assert r.json()["code"] == "resource_missing"


def test_unknown_actor_403_and_bad_token_401(client):
    r = post(client, booking(), "ghost", {"Authorization": "Bearer actor-99"})
    assert r.status_code == 403 and r.json()["code"] == "actor_missing"
    r = post(client, booking(), "ghost", {"Authorization": "Basic YW5uOg=="})
    assert r.status_code == 401 and r.json()["code"] == "invalid_token"
    assert r.headers["www-authenticate"] == "Bearer"


# --- read and cancel ----------------------------------------------------------------------------

def test_get_own_booking_200_another_actors_404(client):
    card = post(client, booking(), "get-1").json()
    r = client.get(f"/bookings/{card['id']}")
    assert r.status_code == 200 and r.json() == card
    r = client.get(f"/bookings/{card['id']}", headers=BOB_TOKEN)
    assert r.status_code == 404 and r.json()["code"] == "booking_missing"
    missing = client.get("/bookings/987654321")
    assert missing.status_code == 404 and missing.json()["code"] == "booking_missing"
    # another actor's booking and a missing one look the same
    assert r.json()["message"].replace(str(card["id"]), "N") == \
        missing.json()["message"].replace("987654321", "N")
    for bad in ["abc", "0", "-1", "99999999999999999999"]:
        r = client.get(f"/bookings/{bad}")
        assert r.status_code == 404 and r.json()["code"] == "booking_missing", bad


def test_cancel_200_cancelled_and_the_slot_frees(client):
    day = next(_days)
    card = post(client, booking(day=day), "cancel-1").json()
    assert post(client, booking(day=day), "cancel-2").status_code == 409

    r = client.post(f"/bookings/{card['id']}/cancel", headers=BOB_TOKEN)
    assert r.status_code == 404 and r.json()["code"] == "booking_missing"

    r = client.post(f"/bookings/{card['id']}/cancel")
    assert r.status_code == 200
    assert r.json() == dict(card, status="cancelled")
    assert client.get(f"/bookings/{card['id']}").json()["status"] == "cancelled"
    again = client.post(f"/bookings/{card['id']}/cancel")
    assert again.status_code == 200 and again.json()["status"] == "cancelled"

    # the slot is free for a new key ...
    r = post(client, booking(day=day), "cancel-2")
    assert r.status_code == 201 and r.json()["id"] != card["id"]
    # ... and the original key still replays its confirmed snapshot
    r = post(client, booking(day=day), "cancel-1")
    assert r.status_code == 201 and r.json() == card and r.headers["idempotent-replayed"] == "true"
    assert one("SELECT count(*) FROM outbox WHERE kind = 'booking_cancelled' "
               "AND payload = jsonb_build_object('booking_id', %s::bigint)", (card["id"],))[0] == 1


# --- the outbox and the background drain ----------------------------------------------------------

def test_one_event_per_booking_and_the_background_drain_delivers_it(client, capsys):
    drain_everything()
    capsys.readouterr()
    body = booking()
    r = post(client, body, "drain-1")
    assert r.status_code == 201
    bid = r.json()["id"]
    lines = json_lines(capsys.readouterr().out)
    assert len(lines) == 1, lines
    event = lines[0]
    assert event["kind"] == "booking_created" and event["payload"] == {"booking_id": bid}
    row = one("SELECT kind, payload, delivered_at IS NOT NULL FROM outbox WHERE id = %s",
              (event["event_id"],))
    assert row == ("booking_created", {"booking_id": bid}, True)
    assert created_events(bid) == 1

    # a replay schedules a drain too, but there is no new event to deliver
    r = post(client, body, "drain-1")
    assert r.status_code == 201 and r.headers["idempotent-replayed"] == "true"
    assert json_lines(capsys.readouterr().out) == []
    assert created_events(bid) == 1
    assert one("SELECT count(*) FROM outbox WHERE delivered_at IS NULL")[0] == 0


def test_background_drain_uses_its_own_connection(client, monkeypatch, capsys):
    drain_everything()
    opened = []
    real_connect = service.connect

    def counting_connect(*a, **kw):
        conn = real_connect(*a, **kw)
        opened.append(conn)
        return conn

    monkeypatch.setattr(service, "connect", counting_connect)
    r = post(client, booking(), "own-connection")
    assert r.status_code == 201
    # one connection for the request, a second one for the drain; the
    # request's was closed before the drain began
    assert len(opened) == 2 and opened[0] is not opened[1]
    assert all(c.closed for c in opened)
    assert len(json_lines(capsys.readouterr().out)) == 1


def test_without_the_background_drain_the_event_waits(client, monkeypatch, capsys):
    drain_everything()
    monkeypatch.setattr(service, "drain_once", lambda: None)
    r = post(client, booking(), "no-drain")
    assert r.status_code == 201
    bid = r.json()["id"]
    assert one("SELECT count(*) FROM outbox WHERE delivered_at IS NULL "
               "AND payload = jsonb_build_object('booking_id', %s::bigint)", (bid,))[0] == 1
    monkeypatch.undo()
    service.drain_once()  # what okno-relay (or the next request's drain) does
    lines = json_lines(capsys.readouterr().out)
    assert [e["payload"] for e in lines] == [{"booking_id": bid}]


# --- the lost response -------------------------------------------------------------------------------

class LosesFirstResponse(httpx.BaseTransport):
    """The request reaches the server and commits; its response is lost."""

    def __init__(self, inner):
        self.inner = inner
        self.lost = 0

    def handle_request(self, request):
        response = self.inner.handle_request(request)
        if self.lost == 0:
            self.lost += 1
            response.close()
            raise httpx.ReadError("connection reset by peer", request=request)
        return response


def test_lost_response_retry_gets_the_same_card(client):
    client._transport = LosesFirstResponse(client._transport)
    body = booking()
    with pytest.raises(httpx.ReadError):
        post(client, body, "lost-1")
    stored = one("SELECT response_body FROM idempotency WHERE actor_id = 1 AND request_key = 'lost-1'")
    assert stored is not None  # the server had committed
    r = post(client, body, "lost-1")
    assert r.status_code == 201 and r.headers["idempotent-replayed"] == "true"
    assert r.json() == stored[0]
    assert one("SELECT count(*) FROM bookings WHERE id = %s", (r.json()["id"],))[0] == 1
    assert created_events(r.json()["id"]) == 1


def test_concurrent_retries_with_one_key_make_one_booking(client):
    body = json.dumps(booking())
    results = []

    def attempt():
        with TestClient(service.app) as c:
            results.append(post(c, body, "storm-1"))

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert len(results) == 8
    assert {r.status_code for r in results} == {201}
    assert len({r.json()["id"] for r in results}) == 1
    assert sum("idempotent-replayed" not in r.headers for r in results) == 1
    assert created_events(results[0].json()["id"]) == 1


# --- 40001 ----------------------------------------------------------------------------------------------

def wait_for_lock_wait(dbname):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if one("SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
               "AND application_name = 'okno-fastapi-example' AND wait_event_type = 'Lock'",
               (dbname,))[0] > 0:
            return
        time.sleep(0.02)
    raise AssertionError("the app's request never waited for the key's lock")


def race_with_open_transaction(client, key, body):
    """Hold the key in an open transaction, send the same request through the
    app, let it wait for the lock, then commit. Returns (held card, response)."""
    result = {}
    with psycopg.connect(f"dbname={DBNAME}") as holder:  # a transaction stays open
        held = holder.execute("SELECT okno_create_booking(1, %s, %s::jsonb)", (key, body)).fetchone()[0]
        t = threading.Thread(target=lambda: result.setdefault("r", post(client, body, key)))
        t.start()
        try:
            wait_for_lock_wait(DBNAME)
        finally:
            holder.commit()
        t.join(WAIT)
    assert "r" in result, "the request did not finish"
    return held, result["r"]


def test_40001_under_repeatable_read_is_retried_and_replays(client, monkeypatch, capsys):
    monkeypatch.setattr(service, "ISOLATION", psycopg.IsolationLevel.REPEATABLE_READ)
    body = json.dumps(booking())
    held, r = race_with_open_transaction(client, "rr-race", body)
    assert r.status_code == 201, r.text
    assert r.headers["idempotent-replayed"] == "true" and r.json() == held
    assert "40001 on attempt 1" in capsys.readouterr().err
    assert created_events(held["id"]) == 1


def test_read_committed_waits_and_replays_without_40001(client, capsys):
    assert service.ISOLATION == psycopg.IsolationLevel.READ_COMMITTED
    body = json.dumps(booking())
    held, r = race_with_open_transaction(client, "rc-race", body)
    assert r.status_code == 201 and r.headers["idempotent-replayed"] == "true" and r.json() == held
    assert "40001" not in capsys.readouterr().err


def test_40001_every_time_ends_in_503_after_bounded_retries(client, monkeypatch):
    calls = []

    def always_conflicts(conn, actor, key, body):
        calls.append(key)
        raise pgerrors.SerializationFailure("could not serialize access")

    monkeypatch.setattr(service, "create_once", always_conflicts)
    monkeypatch.setattr(service, "RETRY_PAUSE_SECONDS", 0)
    r = post(client, booking(), "always-40001")
    assert r.status_code == 503
    assert r.json()["code"] == "concurrent_request"
    assert r.headers["retry-after"] == "1"
    assert len(calls) == service.SERIALIZATION_RETRIES + 1
    assert one("SELECT count(*) FROM idempotency WHERE request_key = 'always-40001'")[0] == 0


# --- least privilege: the app as an application role, the drain as a relay role ---------------------------

# docs/PRIVILEGES.md's recipe, steps 0-2 (okno in public).
RECIPE = """
DO $$
DECLARE f regprocedure;
BEGIN
    FOR f IN SELECT d.objid::regprocedure FROM pg_depend d
              WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
                AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'okno') LOOP
        EXECUTE format('REVOKE EXECUTE ON ROUTINE %s FROM PUBLIC', f);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION okno_create_booking(integer, text, jsonb),
    okno_create_booking_result(integer, text, jsonb),
    okno_get_booking(integer, bigint), okno_cancel_booking(integer, bigint), okno_errors()
  TO {app};
GRANT SELECT (id) ON actors, resources TO {app};
GRANT SELECT (id, resource_id, actor_id, starts_at, ends_at, status),
      INSERT (resource_id, actor_id, starts_at, ends_at),
      UPDATE (status)
   ON bookings TO {app};
GRANT SELECT (actor_id, request_key, fingerprint, fingerprint_version, response_body),
      INSERT (actor_id, request_key, fingerprint, fingerprint_version, response_body)
   ON idempotency TO {app};
GRANT INSERT (id, kind, payload) ON outbox TO {app};
GRANT EXECUTE ON FUNCTION okno_emit(text, jsonb, text) TO {app};
GRANT INSERT (order_key) ON outbox TO {app};
GRANT EXECUTE ON FUNCTION okno_idempotent(text, text, text, jsonb, regprocedure),
    okno_idempotent_result(text, text, text, jsonb, regprocedure),
    okno_key_claim(text, text, text, jsonb), okno_key_store(text, text, text, jsonb)
  TO {app};
GRANT SELECT (operation, scope, request_key, fingerprint, response),
      INSERT (operation, scope, request_key, fingerprint, response)
   ON okno_key TO {app};
GRANT EXECUTE ON FUNCTION okno_drain_once(), okno_drain(integer),
    okno_record_failure(uuid, text), okno_release(uuid), okno_requeue(uuid)
  TO {relay};
GRANT EXECUTE ON PROCEDURE okno_wait(integer, boolean) TO {relay};
GRANT SELECT (id, kind, payload, created_at, delivered_at, attempts, last_error, available_at, parked_at,
              xmax, order_key),
      UPDATE (delivered_at, attempts, last_error, available_at, parked_at)
   ON outbox TO {relay};
GRANT EXECUTE ON FUNCTION okno_outbox_counts() TO {relay};
GRANT SELECT ON okno_outbox_status TO {relay};
"""

# What POST /bookings/{id}/reschedule needs beyond the recipe: its handler
# (schema.sql, EXECUTE for PUBLIC as any new function) moves a booking and
# checks the times with okno_canonical.
RESCHEDULE_GRANTS = """
GRANT UPDATE (starts_at, ends_at) ON bookings TO {app};
GRANT EXECUTE ON FUNCTION okno_canonical(jsonb) TO {app};
"""


@pytest.fixture
def roles():
    app_role, relay_role = f"{DBNAME}_app", f"{DBNAME}_relay"
    with db() as conn:
        for r in (app_role, relay_role):
            conn.execute(f'CREATE ROLE "{r}" LOGIN')
        conn.execute(RECIPE.format(app=f'"{app_role}"', relay=f'"{relay_role}"'))
        conn.execute(RESCHEDULE_GRANTS.format(app=f'"{app_role}"'))
    try:
        yield app_role, relay_role
    finally:
        with db() as conn:
            conn.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO PUBLIC")
            for r in (app_role, relay_role):
                conn.execute(f'DROP OWNED BY "{r}"')
                conn.execute(f'DROP ROLE "{r}"')


def test_the_app_runs_with_the_application_roles_privileges(client, roles, monkeypatch, capsys):
    app_role, relay_role = roles
    with psycopg.connect(f"dbname={DBNAME} user={app_role}", autocommit=True) as conn:
        with pytest.raises(pgerrors.InsufficientPrivilege):
            conn.execute("SELECT * FROM okno_drain_once()")
    drain_everything()
    capsys.readouterr()
    monkeypatch.setenv("DATABASE_URL", f"dbname={DBNAME} user={app_role}")
    monkeypatch.setenv("DRAIN_DATABASE_URL", f"dbname={DBNAME} user={relay_role}")
    monkeypatch.setattr(service, "_errors_by_sqlstate", None)  # read it again, as the app role

    day = next(_days)
    first = post(client, booking(day=day), "least-1")
    assert first.status_code == 201, first.text
    card = first.json()
    assert [e["payload"] for e in json_lines(capsys.readouterr().out)] == [{"booking_id": card["id"]}]
    replay = post(client, booking(day=day), "least-1")
    assert replay.status_code == 201 and replay.headers["idempotent-replayed"] == "true"
    assert post(client, booking(day=day), "least-2").json()["code"] == "slot_busy"
    assert client.get(f"/bookings/{card['id']}").status_code == 200
    assert client.get(f"/bookings/{card['id']}", headers=BOB_TOKEN).status_code == 404
    moved = reschedule(client, card["id"], times(day, "14:00:00+03:00", "15:00:00+03:00"), "least-3")
    assert moved.status_code == 200, moved.text
    assert "idempotent-replayed" not in moved.headers
    again = reschedule(client, card["id"], times(day, "14:00:00+03:00", "15:00:00+03:00"), "least-3")
    assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"
    assert again.json() == moved.json()
    assert [e["kind"] for e in json_lines(capsys.readouterr().out)] == ["booking_rescheduled"]
    cancelled = client.post(f"/bookings/{card['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert [e["kind"] for e in json_lines(capsys.readouterr().out)] == ["booking_cancelled"]
    health = client.get("/health")
    assert health.status_code == 200 and "outbox" not in health.json()
    assert one("SELECT count(*) FROM outbox WHERE delivered_at IS NULL")[0] == 0


# --- POST /bookings/{id}/reschedule: the handler, the body, the events ---------------------------------
#
# The answers over a real socket (the replay header, 422, 409, 410) are
# tested against the uvicorn server further down; these need the app in
# process (the background drain switched off) or no server at all.

def test_the_app_creates_its_handler_at_startup_when_missing(capsys):
    with db() as conn:
        conn.execute("DROP FUNCTION public.reschedule_booking(jsonb)")
    assert one("SELECT to_regprocedure('public.reschedule_booking(jsonb)')")[0] is None
    with TestClient(service.app) as c:
        assert "created public.reschedule_booking(jsonb) from schema.sql" in capsys.readouterr().err
        card = post(c, booking(), "startup-1").json()
        r = reschedule(c, card["id"], times(next(_days)), "startup-1")
        assert r.status_code == 200, r.text
    # LANGUAGE sql, BEGIN ATOMIC: its body is bound at creation, so no
    # search_path of a caller's changes what it reads or calls
    assert one("SELECT l.lanname, p.prosqlbody IS NOT NULL FROM pg_proc AS p "
               "JOIN pg_language AS l ON l.oid = p.prolang "
               "WHERE p.oid = 'public.reschedule_booking(jsonb)'::regprocedure") == ("sql", True)


def test_reschedule_event_follows_booking_created_and_a_replay_writes_none(client, monkeypatch):
    """booking_rescheduled has the booking's id as its order key: a drain
    batch hands out at most one event of a key, so with both pending the
    first drain gives booking_created alone and the next one the reschedule
    (an event without that key would come in the first batch)."""
    drain_everything()
    monkeypatch.setattr(service, "drain_once", lambda: None)  # both stay pending
    try:
        ordered_after_created(client)
    finally:
        drain_everything()  # pass or fail, leave no backlog to later tests


def ordered_after_created(client):
    day = next(_days)
    card = post(client, booking(day=day), "ordered-1").json()
    r = reschedule(client, card["id"], times(day), "ordered-1")
    assert r.status_code == 200, r.text
    replay = reschedule(client, card["id"], times(day), "ordered-1")
    assert replay.status_code == 200 and replay.headers["idempotent-replayed"] == "true"
    assert events_of(card["id"], "booking_rescheduled") == 1   # the replay wrote none

    row = one("SELECT payload, order_key, delivered_at IS NULL FROM outbox "
              "WHERE kind = 'booking_rescheduled' AND payload ->> 'booking_id' = %s", (str(card["id"]),))
    assert row == ({"booking_id": card["id"], "starts_at": utc(day, "11:00:00"),
                    "ends_at": utc(day, "12:00:00")}, str(card["id"]), True)

    def drain():
        with db() as conn:
            return [(kind, payload) for kind, payload in conn.execute(
                "SELECT kind, payload FROM okno_drain(100)")
                if payload["booking_id"] == card["id"]]
    assert [k for k, _ in drain()] == ["booking_created"]
    assert [k for k, _ in drain()] == ["booking_rescheduled"]
    assert drain() == []


@pytest.mark.parametrize("body, detail", [
    ({"starts_at": "2026-12-20T10:00:00+03:00"}, 'Field "ends_at" is missing'),
    ({"resource_id": 2, "starts_at": "2026-12-20T10:00:00+03:00", "ends_at": "2026-12-20T11:00:00+03:00"},
     'Field "resource_id" is not allowed'),
    ({"starts_at": "2026-12-20T10:00:00", "ends_at": "2026-12-20T11:00:00+03:00"}, "offset"),
    ({"starts_at": "2026-12-20T11:00:00Z", "ends_at": "2026-12-20T10:00:00Z"}, "earlier"),
    ({"starts_at": "tomorrow", "ends_at": "2026-12-20T10:00:00Z"}, "starts_at"),
    ({"starts_at": 1, "ends_at": "2026-12-20T10:00:00Z"}, "starts_at"),
    ([], "object"),
    ("not json", "not valid JSON"),
    ('{"starts_at": NaN, "ends_at": "2026-12-20T10:00:00Z"}', "not valid JSON"),
    (b"\xff", "UTF-8"),
])
def test_reschedule_bad_body_422_invalid_payload_and_the_key_stays_free(client, body, detail):
    day = next(_days)
    key = f"bad-reschedule-{day}"
    card = post(client, booking(day=day), key).json()
    r = reschedule(client, card["id"], body, key)
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "invalid_payload"
    assert detail in r.json()["message"] + " " + r.json().get("detail", "")
    assert stored_key(key) is None
    assert client.get(f"/bookings/{card['id']}").json() == card
    # an error stores nothing: the same key with a good body runs
    r = reschedule(client, card["id"], times(day), key)
    assert r.status_code == 200 and "idempotent-replayed" not in r.headers


def test_reschedule_path_that_is_not_an_id_404_nothing_stored(client):
    for bad in ["abc", "0", "-1", "99999999999999999999"]:
        r = reschedule(client, bad, times(next(_days)), "not-an-id")
        assert r.status_code == 404 and r.json()["code"] == "booking_missing", bad
        assert "idempotent-replayed" not in r.headers
    assert stored_key("not-an-id") is None


def test_reschedule_40001_every_time_ends_in_503_after_bounded_retries(client, monkeypatch):
    calls = []

    def always_conflicts(conn, actor, key, booking_id, body):
        calls.append(key)
        raise pgerrors.SerializationFailure("could not serialize access")

    monkeypatch.setattr(service, "reschedule_once", always_conflicts)
    monkeypatch.setattr(service, "RETRY_PAUSE_SECONDS", 0)
    card = post(client, booking(), "resched-40001").json()
    r = reschedule(client, card["id"], times(next(_days)), "resched-40001")
    assert r.status_code == 503 and r.json()["code"] == "concurrent_request"
    assert r.headers["retry-after"] == "1"
    assert len(calls) == service.SERIALIZATION_RETRIES + 1

# --- a real server, a dropped connection ----------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(database):
    port = free_port()
    env = dict(os.environ, DATABASE_URL=f"dbname={DBNAME}", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port),
         "--no-access-log"],
        cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout], daemon=True).start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("uvicorn did not start: " + "".join(list(lines.queue)))
            time.sleep(0.1)
        yield base, lines
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def wait_for_event_line(lines, booking_id):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        if line.startswith("{"):
            event = json.loads(line)
            if event["payload"] == {"booking_id": booking_id}:
                return event
    raise AssertionError(f"no event line for booking {booking_id} on the server's stdout")


def test_over_a_real_socket_the_client_drops_the_response_and_retries(server):
    base, lines = server
    drain_everything()  # the server's drains then deliver this test's event
    body = json.dumps(booking())
    request = (f"POST /bookings HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: socket-1\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
               f"Connection: close\r\n\r\n{body}").encode()
    with socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=WAIT) as s:
        s.sendall(request)
        # wait until the server has committed, then hang up without reading
        deadline = time.monotonic() + WAIT
        while one("SELECT count(*) FROM idempotency WHERE request_key = 'socket-1'")[0] == 0:
            assert time.monotonic() < deadline, "the first request never committed"
            time.sleep(0.02)
    stored = one("SELECT response_body FROM idempotency WHERE request_key = 'socket-1'")[0]

    r = httpx.post(base + "/bookings", content=body, timeout=WAIT,
                   headers={"Idempotency-Key": "socket-1", "Content-Type": "application/json"})
    assert r.status_code == 201 and r.headers["idempotent-replayed"] == "true"
    assert r.json() == stored
    assert created_events(stored["id"]) == 1

    # the server's background drain printed the event on its stdout, and it is delivered
    event = wait_for_event_line(lines, stored["id"])
    assert event["kind"] == "booking_created"
    deadline = time.monotonic() + WAIT
    while one("SELECT delivered_at IS NULL FROM outbox WHERE id = %s", (event["event_id"],))[0]:
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_over_a_real_socket_errors_keep_the_course_body(server):
    base, _ = server
    r = httpx.post(base + "/bookings", json=booking(), timeout=WAIT)
    assert r.status_code == 400 and r.json()["code"] == "missing_key"
    r = httpx.get(base + "/bookings/1", headers=BOB_TOKEN, timeout=WAIT)
    assert r.status_code == 404 and set(r.json()) >= {"code", "message"}


# --- POST /bookings/{id}/reschedule over a real socket: the draft's answers -----------------------

@pytest.fixture
def http(server):
    base, _ = server
    with httpx.Client(base_url=base, timeout=WAIT) as c:
        yield c


def created(http, body, key):
    r = post(http, body, key)
    assert r.status_code == 201, r.text
    return r.json()


def test_over_http_reschedule_200_then_a_replay_has_idempotent_replayed(http):
    day = next(_days)
    card = created(http, booking(day=day), "move-1")
    body = times(day, "14:00:00+03:00", "15:00:00+03:00")
    r = reschedule(http, card["id"], body, "move-1")
    assert r.status_code == 200, r.text
    assert "idempotent-replayed" not in r.headers
    moved = dict(card, starts_at=utc(day, "11:00:00"), ends_at=utc(day, "12:00:00"))
    assert r.json() == moved
    assert http.get(f"/bookings/{card['id']}").json() == moved   # the same card as okno's

    # the same request written otherwise (RFC 8785: other key order, other
    # whitespace): the stored answer, not a second run
    again = '{ "ends_at" : "%s",\n "starts_at": "%s" }' % (body["ends_at"], body["starts_at"])
    replay = reschedule(http, card["id"], again, "move-1")
    assert replay.status_code == 200, replay.text
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == moved
    assert stored_key("move-1") == moved
    assert events_of(card["id"], "booking_rescheduled") == 1

    # the key belongs to the operation: POST /bookings' "move-1" is another key
    assert post(http, booking(day=day), "move-1").headers["idempotent-replayed"] == "true"


def test_over_http_a_refusal_is_stored_and_replayed_slot_busy(http):
    """slot_busy is the handler's answer, not an error: a retry gets it again,
    with Idempotent-Replayed, even after the slot has freed."""
    day = next(_days)
    first = created(http, booking(day=day), "busy-a")                                   # 10-11
    second = created(http, booking(day=day, start="12:00:00+03:00", end="13:00:00+03:00"), "busy-b")
    onto_first = times(day, "10:30:00+03:00", "11:30:00+03:00")
    r = reschedule(http, second["id"], onto_first, "busy-move")
    assert r.status_code == 409, r.text
    assert r.json() == {"code": "slot_busy", "message": "the time slot is already booked"}
    assert "idempotent-replayed" not in r.headers

    assert http.post(f"/bookings/{first['id']}/cancel").status_code == 200   # the slot frees
    r = reschedule(http, second["id"], onto_first, "busy-move")
    assert r.status_code == 409 and r.json()["code"] == "slot_busy"
    assert r.headers["idempotent-replayed"] == "true"
    assert http.get(f"/bookings/{second['id']}").json() == second             # not moved
    assert events_of(second["id"], "booking_rescheduled") == 0

    r = reschedule(http, second["id"], onto_first, "busy-move-2")             # a new key runs
    assert r.status_code == 200, r.text
    assert r.json()["starts_at"] == utc(day, "07:30:00")
    assert events_of(second["id"], "booking_rescheduled") == 1


def test_over_http_another_actors_booking_404_replayed(http):
    day = next(_days)
    card = created(http, booking(day=day), "theirs-1")
    r = reschedule(http, card["id"], times(day), "not-mine", BOB_TOKEN)
    assert r.status_code == 404 and r.json()["code"] == "booking_missing"
    assert "idempotent-replayed" not in r.headers
    again = reschedule(http, card["id"], times(day), "not-mine", BOB_TOKEN)
    assert again.status_code == 404 and again.headers["idempotent-replayed"] == "true"
    assert again.json() == r.json()
    assert stored_key("not-mine", scope="2") == r.json()   # Bob's key: scope "2"
    missing = reschedule(http, 987654321, times(day), "no-such")
    assert missing.status_code == 404 and missing.json() == r.json()   # they look the same
    assert http.get(f"/bookings/{card['id']}").json() == card


def test_over_http_a_cancelled_booking_409_booking_cancelled(http):
    day = next(_days)
    card = created(http, booking(day=day), "gone-1")
    assert http.post(f"/bookings/{card['id']}/cancel").status_code == 200
    r = reschedule(http, card["id"], times(day), "gone-move")
    assert r.status_code == 409 and r.json()["code"] == "booking_cancelled"
    assert http.get(f"/bookings/{card['id']}").json() == dict(card, status="cancelled")
    assert events_of(card["id"], "booking_rescheduled") == 0


def test_over_http_same_key_other_request_422_key_reused(http):
    day = next(_days)
    card = created(http, booking(day=day), "reuse-move-1")
    other = created(http, booking(day=day, resource=DECEMBER), "reuse-move-2")
    assert reschedule(http, card["id"], times(day), "reuse-move").status_code == 200
    # other times, same booking
    r = reschedule(http, card["id"], times(day, "16:00:00+03:00", "17:00:00+03:00"), "reuse-move")
    assert r.status_code == 422, r.text                 # the draft's status ...
    assert r.json()["code"] == "key_reused"             # ... for okno's key_reused
    # the same times for another booking: the path is part of the request
    r = reschedule(http, other["id"], times(day), "reuse-move")
    assert r.status_code == 422 and r.json()["code"] == "key_reused"
    assert http.get(f"/bookings/{other['id']}").json() == other
    assert events_of(card["id"], "booking_rescheduled") == 1
    # POST /bookings keeps the course's 409 for the same thing
    r = post(http, booking(day=day, resource=DECEMBER), "reuse-move-1")
    assert r.status_code == 409 and r.json()["code"] == "key_reused"


def reschedule_request(booking_id, body, actor=ANN):
    """The request the route gives okno: the body, the id and the actor."""
    return json.dumps(dict(body, booking_id=booking_id, actor_id=actor))


def test_over_http_while_the_first_request_runs_409_then_its_answer(http):
    """Another transaction is running the same request (the handler has moved
    the booking, not committed): the app answers 409 request_in_progress at
    once instead of waiting (okno.key_wait = off). Were it waiting, the
    request would not end before the holder does, and time out here."""
    day = next(_days)
    card = created(http, booking(day=day), "running-1")
    body = times(day)
    with psycopg.connect(f"dbname={DBNAME}") as holder:   # a transaction stays open
        held = holder.execute(
            "SELECT response FROM okno_idempotent_result('bookings/reschedule', '1', 'running-move', "
            "%s::jsonb, 'public.reschedule_booking(jsonb)')",
            (reschedule_request(card["id"], body),)).fetchone()[0]
        try:
            r = reschedule(http, card["id"], body, "running-move")
            assert r.status_code == 409, r.text
            assert r.json()["code"] == "request_in_progress"
            assert r.headers["retry-after"] == "1"
            assert "idempotent-replayed" not in r.headers
        finally:
            holder.commit()
    r = reschedule(http, card["id"], body, "running-move")   # the client's retry
    assert r.status_code == 200 and r.headers["idempotent-replayed"] == "true"
    assert r.json() == held
    assert events_of(card["id"], "booking_rescheduled") == 1


def test_over_http_a_claim_held_409_and_after_its_rollback_the_request_runs(http):
    day = next(_days)
    card = created(http, booking(day=day), "claimed-1")
    body = times(day)
    with psycopg.connect(f"dbname={DBNAME}") as holder:
        assert holder.execute(
            "SELECT okno_key_claim('bookings/reschedule', '1', 'claimed-move', %s::jsonb)",
            (reschedule_request(card["id"], body),)).fetchone()[0] is None
        try:
            r = reschedule(http, card["id"], body, "claimed-move")
            assert r.status_code == 409 and r.json()["code"] == "request_in_progress"
        finally:
            holder.rollback()
    r = reschedule(http, card["id"], body, "claimed-move")
    assert r.status_code == 200 and "idempotent-replayed" not in r.headers
    assert r.json()["starts_at"] == utc(day, "11:00:00")


def test_over_http_an_expired_key_410_key_expired(http):
    day = next(_days)
    card = created(http, booking(day=day), "expired-1")
    body = times(day)
    first = reschedule(http, card["id"], body, "expired-move")
    assert first.status_code == 200, first.text
    with db() as conn:
        conn.execute("UPDATE okno_key SET created_at = now() - interval '2 days' "
                     "WHERE operation = 'bookings/reschedule' AND scope = '1' AND request_key = 'expired-move'")
        deleted, _ = conn.execute("SELECT * FROM okno_purge('1 day', '100 years')").fetchone()
    assert deleted == 1
    assert stored_key("expired-move") is None
    r = reschedule(http, card["id"], body, "expired-move")
    assert r.status_code == 410, r.text
    assert r.json()["code"] == "key_expired"
    assert "idempotent-replayed" not in r.headers
    # whatever the request: the key is not run again
    r = reschedule(http, card["id"], times(day, "16:00:00+03:00", "17:00:00+03:00"), "expired-move")
    assert r.status_code == 410 and r.json()["code"] == "key_expired"
    assert http.get(f"/bookings/{card['id']}").json() == first.json()
    assert events_of(card["id"], "booking_rescheduled") == 1
    assert stored_key("expired-move") is None


def test_over_http_missing_key_400_bad_key_422_bad_token_401(http):
    card = created(http, booking(), "headers-1")
    r = reschedule(http, card["id"], times(next(_days)), None)
    assert r.status_code == 400
    assert r.json() == {"code": "missing_key", "message": "the Idempotency-Key header is required"}
    r = reschedule(http, card["id"], times(next(_days)), "no spaces please")
    assert r.status_code == 422 and r.json()["code"] == "invalid_key"
    r = reschedule(http, card["id"], times(next(_days)), "headers-2", {"Authorization": "Basic YW5uOg=="})
    assert r.status_code == 401 and r.json()["code"] == "invalid_token"
    assert http.get(f"/bookings/{card['id']}").json() == card


def wait_for_app_lock_wait():
    deadline = time.monotonic() + WAIT
    while one("SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
              "AND application_name = 'okno-fastapi-example' AND wait_event_type = 'Lock'",
              (DBNAME,))[0] == 0:
        assert time.monotonic() < deadline, "the app's request never waited for a lock"
        time.sleep(0.02)


def test_over_http_a_slot_taken_meanwhile_409_slot_busy_not_stored(server):
    """The handler finds the slot free, but a booking not committed yet holds
    it: bookings_no_overlap makes the update wait, then fail (23P01) when
    that booking commits. The error rolls back the call, key included; the
    retry runs again and stores the refusal."""
    base, _ = server
    day = next(_days)
    with httpx.Client(base_url=base, timeout=WAIT) as http:
        card = created(http, booking(day=day), "race-move-1")
    target = times(day, "14:00:00+03:00", "15:00:00+03:00")
    result = {}

    def send():
        with httpx.Client(base_url=base, timeout=WAIT) as c:
            result["r"] = reschedule(c, card["id"], target, "race-move")

    with psycopg.connect(f"dbname={DBNAME}") as holder:
        holder.execute("SELECT okno_create_booking(2, 'race-holder', %s::jsonb)",
                       (json.dumps(booking(day=day, start="14:30:00+03:00", end="15:30:00+03:00")),))
        t = threading.Thread(target=send)
        t.start()
        try:
            wait_for_app_lock_wait()
        finally:
            holder.commit()
        t.join(WAIT)
    assert "r" in result, "the request did not finish"
    r = result["r"]
    assert r.status_code == 409 and r.json()["code"] == "slot_busy", r.text
    assert "idempotent-replayed" not in r.headers
    assert stored_key("race-move") is None                  # nothing stored
    with httpx.Client(base_url=base, timeout=WAIT) as http:
        again = reschedule(http, card["id"], target, "race-move")   # runs, and stores the refusal
        assert again.status_code == 409 and "idempotent-replayed" not in again.headers
        assert stored_key("race-move") == again.json()
        third = reschedule(http, card["id"], target, "race-move")
        assert third.status_code == 409 and third.headers["idempotent-replayed"] == "true"
        assert http.get(f"/bookings/{card['id']}").json() == card

# --- okno's invariants after everything above ------------------------------------------------------------

def test_every_booking_has_one_created_event_and_okno_verify_is_clean(client):
    with db() as conn:
        assert conn.execute("SELECT count(*) FROM bookings").fetchone()[0] >= 15
        assert conn.execute(
            "SELECT count(*) FROM bookings AS b WHERE (SELECT count(*) FROM outbox AS o "
            " WHERE o.kind = 'booking_created' AND o.payload = jsonb_build_object('booking_id', b.id)) <> 1"
        ).fetchone()[0] == 0
        # every reschedule wrote its event, with the booking as order key
        assert conn.execute(
            "SELECT count(*) FROM outbox WHERE kind = 'booking_rescheduled' "
            "AND order_key IS DISTINCT FROM payload ->> 'booking_id'").fetchone()[0] == 0
        rescheduled = {r[0] for r in conn.execute(
            "SELECT (payload ->> 'booking_id')::bigint FROM outbox WHERE kind = 'booking_rescheduled'")}
        assert len(rescheduled) >= 5
        problems = conn.execute("SELECT problem, detail FROM okno_verify()").fetchall()
    # a rescheduled booking's POST /bookings key keeps the card of the
    # booking as created; okno_verify (0.7.0) compares only its actor
    assert problems == []

# --- okno-relay beside the app, both through PgBouncer in transaction mode ------------------------

PGBOUNCER = "/usr/sbin/pgbouncer"
RELAY = os.path.join(HERE, "..", "..", "relay", "okno-relay")


def wait_for(what, condition):
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture
def pgbouncer(database):
    """Debian's PgBouncer on a socket of its own: pool_mode = transaction,
    its default reset settings (no DISCARD ALL in transaction mode), and
    three server connections, so that the app's requests run on the server
    connections the relay has used. Its conninfo."""
    if not os.access(PGBOUNCER, os.X_OK):
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer)")
    # (not pytest's tmp_path: its parent is private to this user, and
    # PgBouncer runs as the server's user when this is root)
    d = pathlib.Path(tempfile.mkdtemp(prefix="okno-pgbouncer."))
    user = os.environ.get("PGUSER") or os.environ.get("USER") or "postgres"
    server = (f"host={os.environ.get('PGHOST', '/var/run/postgresql')} "
              f"port={os.environ.get('PGPORT', '5432')} dbname={DBNAME}")
    (d / "pgbouncer.ini").write_text(f"""[databases]
{DBNAME} = {server}

[pgbouncer]
listen_addr =
listen_port = 6432
unix_socket_dir = {d}
auth_type = trust
auth_file = {d}/userlist.txt
pool_mode = transaction
default_pool_size = 3
max_client_conn = 50
logfile = {d}/pgbouncer.log
pidfile = {d}/pgbouncer.pid
""")
    (d / "userlist.txt").write_text(f'"{user}" ""\n')
    cmd = [PGBOUNCER, "-d", str(d / "pgbouncer.ini")]
    if os.geteuid() == 0:  # it refuses to run as root: as the server's user
        subprocess.run(["chown", "-R", "postgres:", str(d)], check=True)
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    subprocess.run(cmd, check=True, timeout=WAIT)
    wait_for("pgbouncer does not listen: " + (d / "pgbouncer.log").read_text()
             if (d / "pgbouncer.log").exists() else "pgbouncer does not listen",
             lambda: (d / ".s.PGSQL.6432").exists())
    try:
        yield f"host={d} port=6432 dbname={DBNAME}"
    finally:
        pid = int((d / "pgbouncer.pid").read_text())
        os.kill(pid, 2)  # SIGINT: a clean shutdown
        wait_for("pgbouncer does not stop", lambda: not os.path.exists(f"/proc/{pid}"))
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def relay(pgbouncer, tmp_path):
    """okno-relay through the pool, waiting in okno_wait (JSON lines to a file)."""
    if not os.access(RELAY, os.X_OK):
        pytest.skip("relay/okno-relay is not built (make)")
    drain_everything()
    out = tmp_path / "relay.out"
    err = tmp_path / "relay.err"
    with open(out, "w") as o, open(err, "w") as e:
        proc = subprocess.Popen([RELAY, "--dbname", pgbouncer, "--poll", "30"], stdout=o, stderr=e)
    try:
        wait_for("the relay does not wait in okno_wait", lambda: one(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND state = 'active' "
            "AND query LIKE 'CALL %%okno_wait(%%'", (DBNAME,))[0] == 1)
        yield proc, out, err
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_beside_okno_relay_through_pgbouncer_every_post_succeeds(client, pgbouncer, relay, monkeypatch):
    """The app and okno-relay share a PgBouncer pool in transaction mode (the
    relay's README recommends it). The relay leaves nothing in the server
    sessions it uses: a session search_path it once set at connect reached
    the app's requests on those connections, and the app's unqualified
    okno_create_booking_result failed (42883, a 500)."""
    proc, out, err = relay
    monkeypatch.setenv("DATABASE_URL", pgbouncer)
    monkeypatch.setattr(service, "drain_once", lambda: None)  # the relay delivers
    bodies = [booking() for _ in range(40)]
    first = [post(client, b, f"pooled-{i}") for i, b in enumerate(bodies)]
    assert [r.status_code for r in first] == [201] * 40, [r.text for r in first if r.status_code != 201][:3]
    replays = [post(client, b, f"pooled-{i}") for i, b in enumerate(bodies)]
    assert [r.status_code for r in replays] == [201] * 40, [r.text for r in replays if r.status_code != 201][:3]
    assert [r.json() for r in replays] == [r.json() for r in first]
    assert all(r.headers["idempotent-replayed"] == "true" for r in replays)

    # the relay delivers each booking's event once
    ids = sorted(r.json()["id"] for r in first)
    wait_for("the relay did not deliver the 40 events",
             lambda: len(json_lines(out.read_text())) >= 40)
    proc.terminate()
    assert proc.wait(WAIT) == 0
    events = json_lines(out.read_text())
    assert sorted(e["payload"]["booking_id"] for e in events) == ids
    assert len({e["event_id"] for e in events}) == 40
    assert one("SELECT count(*) FROM outbox WHERE delivered_at IS NULL")[0] == 0
    assert [l for l in err.read_text().splitlines() if "stopped by signal" not in l] == []
