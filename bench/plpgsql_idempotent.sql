-- bench/plpgsql_idempotent.sql: the hand-written baseline of scenario 8
-- (okno_idempotent), in schema plp of the benchmark database only.  Nothing
-- here is part of the extension.
--
-- Brandur Leach's pattern ("Implementing Stripe-like Idempotency Keys in
-- Postgres", brandur.org/idempotency-keys), reduced to one operation that
-- runs one INSERT, as a careful user writes it in PL/pgSQL:
--
--   1. a transaction-level advisory lock on the key's identity
--      (pg_advisory_xact_lock(hashtextextended(op:key:scope, 0))), so two
--      requests with one key never both run;
--   2. SELECT of the stored key from the user's own keys table (the same
--      shape as okno_key: operation, scope, key as primary key,
--      fingerprint, response, created_at);
--   3. the request's fingerprint: sha256(convert_to(request::text, 'UTF8')),
--      jsonb's own text form (keys sorted, duplicates gone, whitespace
--      fixed), not RFC 8785's: {"a": 1.0} and {"a": 1} differ here and are
--      one request to okno;
--   4. stored with the same fingerprint: its response (a replay); another:
--      key_reused (SQLSTATE OKB04, as okno);
--   5. new: the operation's INSERT (exactly the statement of scenario 8's
--      handlers, bench/idempotent.sql, into the same table) and the key row
--      with the response.
--
-- What okno_idempotent does besides, and this does not: the rules of an
-- operation's name, a scope and a key; okno.key_wait; a claim that must be
-- stored by the commit; the key's tombstone (okno_purge's expired keys);
-- REPEATABLE READ's check of a key stored after the snapshot.
\set ON_ERROR_STOP 1

CREATE TABLE plp.idem_keys (
  operation text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  request_key text COLLATE "C" NOT NULL,
  fingerprint bytea NOT NULL,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (operation, scope, request_key));

CREATE FUNCTION plp.idempotent_payment(p_operation text, p_scope text, p_key text, p_request jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  fp bytea := sha256(convert_to(p_request::text, 'UTF8'));
  stored_fp bytea;
  stored_response jsonb;
  response jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_operation || ':' || p_key || ':' || p_scope, 0));
  SELECT k.fingerprint, k.response INTO stored_fp, stored_response
    FROM plp.idem_keys AS k
   WHERE k.operation = p_operation AND k.scope = p_scope AND k.request_key = p_key;
  IF FOUND THEN
    IF stored_fp <> fp THEN
      RAISE EXCEPTION 'idempotency key "%" was used with another request', p_key
        USING ERRCODE = 'OKB04';
    END IF;
    RETURN stored_response;
  END IF;
  -- the operation: the handlers' INSERT (bench/idempotent.sql)
  INSERT INTO bench.payments (order_id, customer_id, amount, currency)
  VALUES (p_request->>'order_id', (p_request->>'customer_id')::integer,
          (p_request->>'amount')::numeric, p_request->>'currency')
  RETURNING jsonb_build_object('payment_id', id, 'order_id', order_id, 'customer_id', customer_id,
                               'amount', amount, 'currency', currency, 'status', 'accepted')
  INTO response;
  INSERT INTO plp.idem_keys (operation, scope, request_key, fingerprint, response)
  VALUES (p_operation, p_scope, p_key, fp, response);
  RETURN response;
END $$;
