-- the floor on a Citus cluster: the same three rows as three INSERTs in one
-- transaction, the booking's id carried by the client (Citus plans the
-- one-statement floor of create_floor.sql through the coordinator), and the
-- event's bucket computed as okno_emit's is (outbox is distributed by it:
-- a booking's events go by its id); tools/bench's scenario 9 (docs/PERFORMANCE.md,
-- "Creates on a Citus cluster")
\set seq :seq + 1
\set slot :run * 1000000 + :seq
BEGIN;
INSERT INTO bookings (resource_id, actor_id, starts_at, ends_at)
VALUES (100 + :client_id, 1, bench.slot_start(:slot), bench.slot_start(:slot) + interval '1 minute')
RETURNING id AS bid \gset
INSERT INTO idempotency (actor_id, request_key, fingerprint, response_body)
VALUES (1, 'f' || :slot::text || '.' || :client_id::text,
        'a19762a6fd4d927261433e3e92d3c4493afa55f12b160bf79dbbd2c7a6a293e6',
        jsonb_build_object('id', :bid::bigint, 'resource_id', 100 + :client_id::int, 'actor_id', 1,
                           'starts_at', bench.slot_text(:slot), 'ends_at', bench.slot_text(:slot + 1),
                           'status', 'confirmed'));
INSERT INTO outbox (id, kind, payload, bucket)
VALUES (gen_random_uuid(), 'booking_created', jsonb_build_object('booking_id', :bid::bigint),
        okno_outbox_bucket(:bid::text));
COMMIT;
