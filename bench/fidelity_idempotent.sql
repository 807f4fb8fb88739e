-- bench/fidelity_idempotent.sql: scenario 8's baseline must do what
-- okno_idempotent does with the bench's handlers, or the comparison means
-- nothing.  Run by tools/bench before scenario 8, in a transaction that is
-- rolled back; prints one line "fidelity: N checks, M differ" and the
-- differing checks.  For each request: a new key (the response and the
-- row written), the same request again (a replay: the same response, no
-- second row), another request with that key (key_reused, OKB04), for
-- okno_idempotent with each handler (SQL, SQL in BEGIN ATOMIC form,
-- PL/pgSQL), and plp.idempotent_payment.  The payments' id sequence is reset before each
-- so that all three hand out the same payment_id.
\set ON_ERROR_STOP 1
BEGIN;

CREATE FUNCTION pg_temp.outcome(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE stmt INTO r;
  RETURN 'ok:' || coalesce(r, 'NULL');
EXCEPTION WHEN OTHERS THEN
  RETURN 'error:' || SQLSTATE;
END $$;

-- the calls of one implementation: CALL is a format() string with %L for
-- the scope, the key and the request
CREATE FUNCTION pg_temp.run(call text, req jsonb, other jsonb, sc text, k text)
RETURNS TABLE (step text, result text) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM setval('bench.payments_id_seq', 1000000, false);
  step := 'new'; result := pg_temp.outcome(format(call, sc, k, req)); RETURN NEXT;
  step := 'row'; result := (SELECT string_agg(format('%s %s %s %s %s', id, order_id, customer_id, amount, currency), '; ')
                              FROM bench.payments WHERE id >= 1000000); RETURN NEXT;
  step := 'replay'; result := pg_temp.outcome(format(call, sc, k, req)); RETURN NEXT;
  step := 'rows after the replay'; result := (SELECT count(*) FROM bench.payments WHERE id >= 1000000); RETURN NEXT;
  step := 'key_reused'; result := pg_temp.outcome(format(call, sc, k, other)); RETURN NEXT;
  DELETE FROM bench.payments WHERE id >= 1000000;
END $$;

CREATE TEMP TABLE reqs (n integer, req jsonb, other jsonb);
INSERT INTO reqs VALUES
  (1, bench.payment_request(1), bench.payment_request(2)),
  (2, bench.payment_request(42), bench.payment_request(42) || '{"currency": "USD"}'),
  (3, bench.payment_request(7) || jsonb_build_object('customer', bench.request_1k(7)),
      bench.payment_request(7) || jsonb_build_object('customer', bench.request_1k(8)));

CREATE TEMP TABLE checks (what text, okno text, plp text);
INSERT INTO checks
SELECT format('request %s, %s handler: %s', r.n, h.lang, o.step), o.result, p.result
  FROM reqs AS r
 CROSS JOIN (VALUES ('sql', 'bench.pay_sql(jsonb)'), ('sql_atomic', 'bench.pay_sql_atomic(jsonb)'),
                    ('plpgsql', 'bench.pay_plpgsql(jsonb)')) AS h (lang, fn)
 CROSS JOIN LATERAL pg_temp.run(
        format('SELECT public.okno_idempotent(''payment'', %%L, %%L, %%L, %L::regprocedure)', h.fn),
        r.req, r.other, 'fid-okno-' || h.lang, 'fid.' || r.n) WITH ORDINALITY AS o
  JOIN LATERAL pg_temp.run('SELECT plp.idempotent_payment(''payment'', %L, %L, %L)',
        r.req, r.other, 'fid-plp-' || h.lang, 'fid.' || r.n) WITH ORDINALITY AS p ON p.ordinality = o.ordinality;

-- and the key rows each stored: the same response, once
INSERT INTO checks
SELECT 'a key row per new request, with the response',
       (SELECT count(*) || ' ' || count(DISTINCT response) FROM public.okno_key WHERE scope LIKE 'fid-okno-%'),
       (SELECT count(*) || ' ' || count(DISTINCT response) FROM plp.idem_keys WHERE scope LIKE 'fid-plp-%');

SELECT format('fidelity: %s checks, %s differ', count(*), count(*) FILTER (WHERE okno IS DISTINCT FROM plp))
  FROM checks;
SELECT format('differs: %s: okno %s, plpgsql %s', what, okno, plp)
  FROM checks WHERE okno IS DISTINCT FROM plp;
SELECT format('same: %s: %s', what, okno) FROM checks WHERE okno IS NOT DISTINCT FROM plp ORDER BY what;
ROLLBACK;
