-- bench/idempotent.sql: scenario 8's own objects (okno 0.7.0's
-- okno_idempotent and okno_canonical_json), in schema bench of the
-- benchmark database (after bench/setup.sql; the hand-written baseline is
-- bench/plpgsql_idempotent.sql, in plp).  Nothing here is part of the
-- extension.
\set ON_ERROR_STOP 1

-- ---------------------------------------------------------------------
-- The operation: a payment, one INSERT.  okno_idempotent's handler runs it
-- (written in SQL, as the issue's figure has it, and the same in PL/pgSQL),
-- and plp.idempotent_payment runs the same statement inline; all three
-- write the same rows into the same table.
CREATE TABLE bench.payments (
  id bigserial PRIMARY KEY,
  order_id text NOT NULL,
  customer_id integer NOT NULL,
  amount numeric(12, 2) NOT NULL,
  currency text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now());

-- (VOLATILE, the default: the INSERT runs on every call)
CREATE FUNCTION bench.pay_sql(request jsonb) RETURNS jsonb LANGUAGE sql AS $$
  INSERT INTO bench.payments (order_id, customer_id, amount, currency)
  VALUES (request->>'order_id', (request->>'customer_id')::integer,
          (request->>'amount')::numeric, request->>'currency')
  RETURNING jsonb_build_object('payment_id', id, 'order_id', order_id, 'customer_id', customer_id,
                               'amount', amount, 'currency', currency, 'status', 'accepted')
$$;

-- the same, with a body in the SQL standard's form (BEGIN ATOMIC, PostgreSQL
-- 14 and later): parsed and analyzed once, at CREATE FUNCTION, and stored as
-- a node tree; a call reads that tree back and plans it (once per
-- transaction before PostgreSQL 18)
CREATE FUNCTION bench.pay_sql_atomic(request jsonb) RETURNS jsonb LANGUAGE sql
BEGIN ATOMIC
  INSERT INTO bench.payments (order_id, customer_id, amount, currency)
  VALUES (request->>'order_id', (request->>'customer_id')::integer,
          (request->>'amount')::numeric, request->>'currency')
  RETURNING jsonb_build_object('payment_id', id, 'order_id', order_id, 'customer_id', customer_id,
                               'amount', amount, 'currency', currency, 'status', 'accepted');
END;

CREATE FUNCTION bench.pay_plpgsql(request jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE response jsonb;
BEGIN
  INSERT INTO bench.payments (order_id, customer_id, amount, currency)
  VALUES (request->>'order_id', (request->>'customer_id')::integer,
          (request->>'amount')::numeric, request->>'currency')
  RETURNING jsonb_build_object('payment_id', id, 'order_id', order_id, 'customer_id', customer_id,
                               'amount', amount, 'currency', currency, 'status', 'accepted')
  INTO response;
  RETURN response;
END $$;

-- A payment request (about 200 bytes of JSON): an order of two items.
CREATE FUNCTION bench.payment_request(i integer) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object(
    'order_id', 'ord-' || i,
    'customer_id', 1 + i % 1000,
    'amount', 49.90 + i % 100,
    'currency', 'EUR',
    'items', jsonb_build_array(jsonb_build_object('sku', 'TSHIRT-RED-M', 'qty', 2, 'unit_price', 19.95),
                               jsonb_build_object('sku', 'MUG-' || (i % 7), 'qty', 1, 'unit_price', 10.00 + i % 100)),
    'note', 'leave at the door')
$$;

-- The arguments of scenario 8's calls, made beforehand: set s holds n
-- requests (keys k<s>.1 .. k<s>.n); the loops take the scope as an argument, so
-- that one set serves new keys (a fresh scope every loop) and replays (the
-- scope its keys were stored under).
CREATE UNLOGGED TABLE bench.idem_args (
  set_id integer, i integer, key text, request jsonb,
  PRIMARY KEY (set_id, i));

CREATE FUNCTION bench.make_idem_args(s integer, n integer) RETURNS void LANGUAGE sql AS $$
  DELETE FROM bench.idem_args WHERE set_id = s;
  INSERT INTO bench.idem_args SELECT s, g, 'k' || s || '.' || g, bench.payment_request(s * 1000000 + g)
    FROM generate_series(1, n) AS g;
$$;

-- Store set s's requests under scope sc, with okno_idempotent (SQL
-- handler) and with plp.idempotent_payment, 1,000 to a transaction: the
-- keys the replays repeat.
CREATE PROCEDURE bench.idem_store(s integer, sc text) LANGUAGE plpgsql AS $$
DECLARE n integer;
BEGIN
  SELECT max(i) INTO n FROM bench.idem_args WHERE set_id = s;
  FOR c IN 0 .. (n - 1) / 1000 LOOP
    PERFORM public.okno_idempotent('payment', sc, a.key, a.request, 'bench.pay_sql(jsonb)'::regprocedure),
            plp.idempotent_payment('payment', sc, a.key, a.request)
       FROM bench.idem_args AS a WHERE a.set_id = s AND a.i > c * 1000 AND a.i <= (c + 1) * 1000;
    COMMIT;
  END LOOP;
END $$;

-- ---------------------------------------------------------------------
-- One call per transaction: a procedure walks set s (ORDER BY i; the first
-- COMMIT makes the loop's cursor a holdable one, read once) and COMMITs
-- after every call; CPU time (bench.cpu_ns(), the backend's own) and wall
-- time before and after.  Run with synchronous_commit off in the session,
-- so that a commit does not wait for its flush.  bench.tx_empty is the
-- same walk with a trivial call and the same COMMIT (a transaction that
-- wrote nothing): its cost per call is subtracted.
CREATE PROCEDURE bench.tx_empty(s integer, sc text,
  INOUT calls integer DEFAULT NULL, INOUT cpu_ns bigint DEFAULT NULL, INOUT wall_ns bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE r record; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR r IN SELECT a.i, a.key, a.request FROM bench.idem_args AS a WHERE a.set_id = s ORDER BY a.i LOOP
    PERFORM r.key;
    COMMIT;
    n := n + 1;
  END LOOP;
  calls := n;
  cpu_ns := bench.cpu_ns() - c0;
  wall_ns := (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint;
END $$;

CREATE PROCEDURE bench.tx_okno(s integer, sc text, handler regprocedure,
  INOUT calls integer DEFAULT NULL, INOUT cpu_ns bigint DEFAULT NULL, INOUT wall_ns bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE r record; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR r IN SELECT a.i, a.key, a.request FROM bench.idem_args AS a WHERE a.set_id = s ORDER BY a.i LOOP
    PERFORM public.okno_idempotent('payment', sc, r.key, r.request, handler);
    COMMIT;
    n := n + 1;
  END LOOP;
  calls := n;
  cpu_ns := bench.cpu_ns() - c0;
  wall_ns := (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint;
END $$;

CREATE PROCEDURE bench.tx_plpgsql(s integer, sc text,
  INOUT calls integer DEFAULT NULL, INOUT cpu_ns bigint DEFAULT NULL, INOUT wall_ns bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE r record; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR r IN SELECT a.i, a.key, a.request FROM bench.idem_args AS a WHERE a.set_id = s ORDER BY a.i LOOP
    PERFORM plp.idempotent_payment('payment', sc, r.key, r.request);
    COMMIT;
    n := n + 1;
  END LOOP;
  calls := n;
  cpu_ns := bench.cpu_ns() - c0;
  wall_ns := (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint;
END $$;

-- The operation alone, without any key: the handler called directly, one
-- call per transaction (what the key check adds is the difference)
CREATE PROCEDURE bench.tx_handler(s integer, sc text, handler regprocedure,
  INOUT calls integer DEFAULT NULL, INOUT cpu_ns bigint DEFAULT NULL, INOUT wall_ns bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE r record; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  IF handler = 'bench.pay_sql(jsonb)'::regprocedure THEN
    FOR r IN SELECT a.i, a.key, a.request FROM bench.idem_args AS a WHERE a.set_id = s ORDER BY a.i LOOP
      PERFORM bench.pay_sql(r.request);
      COMMIT;
      n := n + 1;
    END LOOP;
  ELSIF handler = 'bench.pay_sql_atomic(jsonb)'::regprocedure THEN
    FOR r IN SELECT a.i, a.key, a.request FROM bench.idem_args AS a WHERE a.set_id = s ORDER BY a.i LOOP
      PERFORM bench.pay_sql_atomic(r.request);
      COMMIT;
      n := n + 1;
    END LOOP;
  ELSE
    FOR r IN SELECT a.i, a.key, a.request FROM bench.idem_args AS a WHERE a.set_id = s ORDER BY a.i LOOP
      PERFORM bench.pay_plpgsql(r.request);
      COMMIT;
      n := n + 1;
    END LOOP;
  END IF;
  calls := n;
  cpu_ns := bench.cpu_ns() - c0;
  wall_ns := (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint;
END $$;

-- What a new-key loop wrote under scope sc: gone again, so that every loop
-- meets the same tables (the stored keys of the replays, and nothing else)
CREATE PROCEDURE bench.idem_forget(sc text) LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM public.okno_key WHERE operation = 'payment' AND scope = sc;
  DELETE FROM plp.idem_keys WHERE operation = 'payment' AND scope = sc;
  TRUNCATE bench.payments;
END $$;

-- ---------------------------------------------------------------------
-- okno_canonical_json of a 1 KiB request: a checkout with a nested object,
-- 20 numbers of mixed kinds (integers, decimals, a negative, exponents, an
-- integer beyond 2^53, a 13-digit timestamp), strings with non-ASCII
-- letters, symbols and CJK, and a few arrays.  Request i differs in its
-- customer id and request id only.
CREATE FUNCTION bench.request_1k(i integer) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT format($json${
    "operation": "checkout",
    "request_id": "req-%s-7f3c9a2e",
    "customer": {"id": %s, "name": "Zoë Müller-Łukasiewicz", "email": "zoe.mueller@example.com",
                 "tier": "gold", "verified": true, "since": "2019-03-14"},
    "shipping": {"name": "Zoë Müller", "street": "Ågatan 12", "city": "Göteborg", "postcode": "411 03",
                 "country": "SE", "phone": "+46 31 123 45 67", "instructions": "Leave at the door — ring twice ☺"},
    "items": [{"sku": "TSHIRT-RED-M", "qty": 2, "unit_price": 19.99, "discount": 0.1},
              {"sku": "MUG-ČAJ", "qty": 1, "unit_price": 12.5, "discount": 0},
              {"sku": "POSTER-日本", "qty": 3, "unit_price": 7.25, "discount": 0.15}],
    "totals": {"subtotal": 73.72, "tax": 18.43, "shipping": 4.90, "total": 97.05, "currency": "EUR"},
    "payment": {"method": "card", "last4": "4242", "amount_minor": 9705, "fx_rate": 1.0834, "risk_score": -0.37},
    "tags": ["gift", "express", "β-test"],
    "metadata": {"source": "mobile", "app_version": "5.12.3", "ts": 1733328000123,
                 "big": 12345678901234567890, "tiny": 1e-7, "flags": [true, false, null]},
    "comment": "Bitte schnell liefern! Спасибо. 谢谢 — Zoë"
  }$json$, i, 100000 + i)::jsonb
$$;

CREATE UNLOGGED TABLE bench.json_args (i integer PRIMARY KEY, request jsonb);

CREATE FUNCTION bench.make_json_args(n integer) RETURNS void LANGUAGE sql AS $$
  TRUNCATE bench.json_args;
  INSERT INTO bench.json_args SELECT g, bench.request_1k(g) FROM generate_series(1, n) AS g;
$$;

-- reps walks of bench.json_args, calling okno_canonical_json on each row;
-- bench.loop_json_empty is the same walk with a trivial call
CREATE FUNCTION bench.loop_json_empty(reps integer) RETURNS bench.timing LANGUAGE plpgsql AS $$
DECLARE r bench.json_args; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR pass IN 1..reps LOOP
  FOR r IN SELECT * FROM bench.json_args ORDER BY i LOOP
    PERFORM r.i;
    n := n + 1;
  END LOOP;
  END LOOP;
  RETURN (n, bench.cpu_ns() - c0, (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint);
END $$;

CREATE FUNCTION bench.loop_canonical_json(reps integer) RETURNS bench.timing LANGUAGE plpgsql AS $$
DECLARE r bench.json_args; n integer := 0; c0 bigint; t0 timestamptz;
BEGIN
  c0 := bench.cpu_ns(); t0 := clock_timestamp();
  FOR pass IN 1..reps LOOP
  FOR r IN SELECT * FROM bench.json_args ORDER BY i LOOP
    PERFORM public.okno_canonical_json(r.request);
    n := n + 1;
  END LOOP;
  END LOOP;
  RETURN (n, bench.cpu_ns() - c0, (extract(epoch FROM clock_timestamp() - t0) * 1e9)::bigint);
END $$;
