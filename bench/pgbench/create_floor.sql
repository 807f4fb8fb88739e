-- the floor: the same three rows in one statement (prepared: -M prepared),
-- no checks, no lock, no NOTIFY; the fingerprint is precomputed (a constant)
\set seq :seq + 1
\set slot :run * 1000000 + :seq
WITH b AS (
  INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
  VALUES (100 + :client_id, 1, bench.slot_start(:slot), bench.slot_start(:slot) + interval '1 minute')
  RETURNING id, resource_id, actor_id),
k AS (
  INSERT INTO idempotency (actor_id, request_key, fingerprint, response_body)
  SELECT 1, 'c' || :slot || '.' || :client_id,
         'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6',
         jsonb_build_object('id', b.id, 'resource_id', b.resource_id, 'actor_id', b.actor_id,
                            'starts_at', bench.slot_text(:slot), 'ends_at', bench.slot_text(:slot + 1),
                            'status', 'confirmed')
    FROM b)
INSERT INTO outbox (id, kind, payload)
SELECT gen_random_uuid(), 'booking_created', jsonb_build_object('booking_id', b.id) FROM b;
