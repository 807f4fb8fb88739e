#!/usr/bin/env python3
"""subscribers: named subscribers under concurrency, every event counted.

Four creators (single creates, explicit transactions of one to three
creates of which 15 % roll back, cancellations), three drainers of
subscriber s1, two of s2, two of the default subscriber, each drain with
random failure reports (some rolled back to a savepoint, some in a later
transaction), releases, and 10 % of the drains rolled back; a transaction
prepared for two-phase commit before okno_subscribe('s2') and committed
during the run; a churn of subscribe, drain and unsubscribe of s3.

Checks, per subscriber (default, s1, s2) and event, counting only drains
that committed: every event is delivered (after the load, drained to the
end); no event is delivered more often than once plus once per committed
failure report and release of it for that subscriber; no drain hands out
two events of one booking, and a booking's cancellation is never delivered
by a drain that committed before its creation was first handed out.

Runs against PGHOST/PGPORT/PGUSER; creates database okno_stress_subscribers
and drops it at the end.  OKNO_STRESS_SECONDS (default 30), OKNO_STRESS_SEED
(default: random, printed).  Prints TAP lines; exits 0 whatever they say.
"""
import os
import random
import sys
import threading
import time

import psycopg

DB = "okno_stress_subscribers"
SECS = float(os.environ.get("OKNO_STRESS_SECONDS", "30"))
SEED = int(os.environ.get("OKNO_STRESS_SEED") or random.randrange(1 << 30))
SUBS = ("default", "s1", "s2")
OPTIONS = "-c okno.retry_base=5ms -c okno.retry_cap=50ms -c okno.max_attempts=1000"
# okno's documented refusals a creator may meet (slot taken, key reused ...)
EXPECTED = ("OKB", "40001", "40P01", "23P01", "57014")

lock = threading.Lock()
deliveries = []         # (sub, event, drain, t_start, t_commit)
retries = {}            # (sub, event) -> committed failures + releases
unexplained = []
stats = {"drains": 0, "rolled_back": 0, "failures": 0, "releases": 0,
         "savepoint_failures": 0, "late_failures": 0, "creates": 0,
         "cancels": 0, "churn": 0}
stop = threading.Event()
bookings = []


def connect(autocommit=True):
    return psycopg.connect(dbname=DB, autocommit=autocommit,
                           options=OPTIONS)


def bump(key, n=1):
    with lock:
        stats[key] += n


def expected_error(e):
    code = getattr(e, "sqlstate", None) or ""
    return code.startswith(EXPECTED)


def note(where, e):
    with lock:
        unexplained.append("%s: %s %s" % (where, getattr(e, "sqlstate", None),
                                           str(e).splitlines()[0]))


def payload(rng):
    day = rng.randrange(1, 28)
    hour = rng.randrange(0, 23)
    room = rng.randrange(1, 41)
    return ('{"resource_id": %d, "starts_at": "2027-01-%02dT%02d:00:00Z",'
            ' "ends_at": "2027-01-%02dT%02d:00:00Z"}'
            % (room, day, hour, day, hour + 1))


def create(cur, rng, n):
    key = "k-%d-%d" % (n, rng.randrange(1 << 40))
    cur.execute("SELECT (okno_create_booking(1, %s, %s::jsonb)) ->> 'id'",
                (key, payload(rng)))
    return int(cur.fetchone()[0])


def creator(i):
    rng = random.Random(SEED * 10 + i)
    conn = connect()
    n = 0
    while not stop.is_set():
        n += 1
        r = rng.random()
        try:
            if r < 0.45:
                with conn.cursor() as cur:
                    b = create(cur, rng, n * 10 + i)
                with lock:
                    bookings.append(b)
                bump("creates")
            elif r < 0.8:
                made = []
                with conn.cursor() as cur:
                    cur.execute("BEGIN")
                    try:
                        for _ in range(rng.randrange(1, 4)):
                            cur.execute("SAVEPOINT c")
                            try:
                                made.append(create(cur, rng, n * 10 + i))
                                cur.execute("RELEASE SAVEPOINT c")
                            except psycopg.Error as e:
                                if not expected_error(e):
                                    raise
                                cur.execute("ROLLBACK TO SAVEPOINT c")
                        if rng.random() < 0.15:
                            cur.execute("ROLLBACK")
                            made = []
                        else:
                            cur.execute("COMMIT")
                    except BaseException:
                        conn.rollback()
                        raise
                with lock:
                    bookings.extend(made)
                bump("creates", len(made))
            else:
                with lock:
                    b = rng.choice(bookings) if bookings else None
                if b is not None:
                    with conn.cursor() as cur:
                        cur.execute("SELECT okno_cancel_booking(1, %s)", (b,))
                    bump("cancels")
        except psycopg.Error as e:
            if not expected_error(e):
                note("creator %d" % i, e)
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.rollback()
    conn.close()


def drain_call(sub, n):
    if sub == "default":
        return ("SELECT event_id, payload ->> 'booking_id', kind FROM okno_drain(%d)" % n, ())
    return ("SELECT event_id, payload ->> 'booking_id', kind FROM okno_drain(%d, %%s)" % n, (sub,))


def fail_sql(sub):
    if sub == "default":
        return "SELECT count(*) FROM okno_record_failure(%s, 'stress')", lambda e: (e,)
    return ("SELECT count(*) FROM okno_record_failure(%s, 'stress', %s)",
            lambda e: (e, sub))


def release_sql(sub):
    if sub == "default":
        return "SELECT okno_release(%s)", lambda e: (e,)
    return "SELECT okno_release(%s, %s)", lambda e: (e, sub)


def drainer(sub, i, drain_ids):
    rng = random.Random(SEED * 100 + i)
    conn = connect()
    fsql, fargs = fail_sql(sub)
    rsql, rargs = release_sql(sub)
    while not stop.is_set():
        sql, args = drain_call(sub, rng.choice((1, 5, 20, 100)))
        with lock:
            drain_ids[0] += 1
            drain = drain_ids[0]
        mine = {}
        late = []
        try:
            with conn.cursor() as cur:
                cur.execute("BEGIN")
                t0 = time.monotonic()
                cur.execute(sql, args)
                rows = cur.fetchall()
                for event, _, _ in rows:
                    r = rng.random()
                    if r < 0.04:
                        cur.execute(fsql, fargs(event))
                        if cur.fetchone()[0] == 1:
                            mine[event] = mine.get(event, 0) + 1
                    elif r < 0.07:
                        cur.execute("SAVEPOINT f")
                        cur.execute(fsql, fargs(event))
                        cur.fetchall()
                        cur.execute("ROLLBACK TO SAVEPOINT f")
                        bump("savepoint_failures")
                    elif r < 0.10:
                        cur.execute(rsql, rargs(event))
                        if cur.fetchone()[0]:
                            mine[event] = mine.get(event, 0) + 1
                            bump("releases")
                    elif r < 0.13:
                        late.append(event)
                if rng.random() < 0.10:
                    cur.execute("ROLLBACK")
                    bump("rolled_back")
                    continue
                cur.execute("COMMIT")
                t1 = time.monotonic()
            with lock:
                stats["drains"] += 1
                for event, booking, kind in rows:
                    deliveries.append((sub, event, drain, t0, t1, booking, kind))
                for event, n in mine.items():
                    retries[(sub, event)] = retries.get((sub, event), 0) + n
            # a failure reported in a later transaction than the drain's
            for event in late:
                with conn.cursor() as cur:
                    cur.execute(fsql, fargs(event))
                    if cur.fetchone()[0] == 1:
                        with lock:
                            retries[(sub, event)] = retries.get((sub, event), 0) + 1
                            stats["late_failures"] += 1
        except psycopg.Error as e:
            if not expected_error(e):
                note("drainer %s %d" % (sub, i), e)
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.rollback()
    conn.close()


def churn():
    rng = random.Random(SEED * 1000)
    conn = connect()
    while not stop.is_set():
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT okno_subscribe('s3')")
                for _ in range(rng.randrange(0, 4)):
                    cur.execute("SELECT count(*) FROM okno_drain(50, 's3')")
                cur.execute("SELECT okno_unsubscribe('s3')")
            bump("churn")
        except psycopg.Error as e:
            if not expected_error(e):
                note("churn", e)
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.rollback()
        time.sleep(rng.random() * 0.05)
    conn.close()


def tap(ok, what, detail=""):
    print("%s - %s" % ("ok" if ok else "not ok", what))
    if not ok and detail:
        for line in detail.splitlines()[:20]:
            print("#   " + line)


def main():
    print("# subscribers: %.0f s, OKNO_STRESS_SEED=%d" % (SECS, SEED))
    with psycopg.connect(dbname="postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB)
        c.execute("CREATE DATABASE %s" % DB)
    try:
        run()
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True) as c:
            for (gid,) in c.execute("SELECT gid FROM pg_prepared_xacts WHERE database = %s", (DB,)).fetchall():
                with psycopg.connect(dbname=DB, autocommit=True) as d:
                    d.execute("ROLLBACK PREPARED '%s'" % gid)
            c.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB)


def run():
    setup = connect()
    setup.execute("CREATE EXTENSION okno CASCADE")
    setup.execute("SELECT okno_create_tables()")
    setup.execute("INSERT INTO actors (name) VALUES ('stress')")
    setup.execute("INSERT INTO resources (name) SELECT 'room ' || g FROM generate_series(1, 40) AS g")
    setup.execute("SELECT okno_subscribe('s1')")
    # a transaction prepared before s2 subscribes, committed during the run
    prep = connect()
    prep.execute("BEGIN")
    prep.execute("SELECT okno_create_booking(1, 'prepared', %s::jsonb)",
                 ('{"resource_id": 1, "starts_at": "2026-12-31T10:00:00Z",'
                  ' "ends_at": "2026-12-31T11:00:00Z"}',))
    prep.execute("PREPARE TRANSACTION 'okno_stress_s2'")
    setup.execute("SELECT okno_subscribe('s2')")

    threads = [threading.Thread(target=creator, args=(i,)) for i in range(4)]
    drain_ids = [0]
    k = 0
    for sub, n in (("s1", 3), ("s2", 2), ("default", 2)):
        for _ in range(n):
            k += 1
            threads.append(threading.Thread(target=drainer, args=(sub, k, drain_ids)))
    threads.append(threading.Thread(target=churn))
    for t in threads:
        t.start()
    deadline = time.monotonic() + SECS
    time.sleep(min(SECS / 3, 5))
    prep.execute("COMMIT PREPARED 'okno_stress_s2'")
    prep.close()
    while time.monotonic() < deadline:
        time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join(120)
    hung = [t for t in threads if t.is_alive()]
    tap(not hung, "every client stopped", "%d still running" % len(hung))

    # drain every subscriber to the end (failed events come back in 50 ms)
    final = connect()
    drain = 0
    for sub in SUBS:
        quiet = 0
        end = time.monotonic() + 120
        while quiet < 3 and time.monotonic() < end:
            sql, args = drain_call(sub, 1000)
            drain += 1
            t0 = time.monotonic()
            rows = final.execute(sql, args).fetchall()
            t1 = time.monotonic()
            for event, booking, kind in rows:
                deliveries.append((sub, event, "final-%d" % drain, t0, t1, booking, kind))
            quiet = quiet + 1 if not rows else 0
            if not rows:
                time.sleep(0.1)
    events = {e: (b, k) for e, b, k in final.execute(
        "SELECT id, payload ->> 'booking_id', kind FROM outbox").fetchall()}
    verify = final.execute("SELECT count(*) FROM okno_verify()").fetchone()[0]
    final.close()

    print("# %d events, %d creates, %d cancels; %d committed drains, %d rolled back; "
          "%d failures and releases counted, %d failures rolled back to a savepoint, "
          "%d later failures; %d s3 churns"
          % (len(events), stats["creates"], stats["cancels"], stats["drains"],
             stats["rolled_back"], sum(retries.values()), stats["savepoint_failures"],
             stats["late_failures"], stats["churn"]))
    tap(not unexplained, "no unexplained error", "\n".join(unexplained[:10]))
    tap(stats["drains"] > 100 and len(events) > 100, "the load ran (over 100 drains and events)")

    count = {}
    per_drain = {}
    first = {}
    for sub, event, drain, t0, t1, booking, kind in deliveries:
        count[(sub, event)] = count.get((sub, event), 0) + 1
        per_drain.setdefault((sub, drain), []).append(booking)
        f = first.get((sub, event))
        if f is None or t0 < f[0]:
            first[(sub, event)] = (t0, t1)
    for sub in SUBS:
        lost = [e for e in events if (sub, e) not in count]
        tap(not lost, "%s: every event delivered" % sub,
            "%d lost, e.g. %s" % (len(lost), lost[:3]))
        dup = sorted((e, n, retries.get((sub, e), 0)) for (s, e), n in count.items()
                     if s == sub and n > 1 + retries.get((sub, e), 0))
        detail = []
        for e, n, r in dup[:5]:
            ds = [(d, round(t0, 4), round(t1, 4)) for s, ev, d, t0, t1, _, _ in deliveries
                  if s == sub and ev == e]
            detail.append("%s: %d deliveries, %d failures/releases: %s" % (e, n, r, ds))
        tap(not dup, "%s: no event delivered twice by committed drains" % sub,
            "%d duplicated\n%s" % (len(dup), "\n".join(detail)))
        twice = [d for (s, d), bs in per_drain.items()
                 if s == sub and len([b for b in bs if b]) != len(set(b for b in bs if b))]
        tap(not twice, "%s: no drain hands out two events of one booking" % sub,
            "drains %s" % twice[:5])
        by_booking = {}
        for e, (b, k) in events.items():
            by_booking.setdefault(b, {})[k] = e
        bad = []
        for b, ks in by_booking.items():
            c, x = ks.get("booking_created"), ks.get("booking_cancelled")
            if c and x and (sub, c) in first and (sub, x) in first:
                if first[(sub, x)][1] < first[(sub, c)][0]:
                    bad.append(b)
        tap(not bad, "%s: a cancellation never before its booking's creation" % sub,
            "bookings %s" % bad[:5])
    tap(verify == 0, "okno_verify() is empty", "%d rows" % verify)


if __name__ == "__main__":
    main()
