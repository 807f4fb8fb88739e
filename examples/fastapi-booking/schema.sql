-- examples/fastapi-booking/schema.sql: the app's own database objects, beside
-- okno's tables (okno_create_tables() or okno_prepare_tables()). Apply it as
-- the tables' owner after them (psql -v ON_ERROR_STOP=1 -f schema.sql); it
-- can be applied again at any time (CREATE OR REPLACE). The app applies it
-- itself at startup when the function is missing and its role may create it.
--
-- reschedule_booking(request jsonb) → jsonb: the handler of
-- POST /bookings/{id}/reschedule, run by okno_idempotent_result under the
-- key ('bookings/reschedule', actor id as text, Idempotency-Key):
--
--   request   {"booking_id": N, "actor_id": A, "starts_at": "…", "ends_at": "…"}
--             (the client's body plus the id from the path and the actor)
--   response  the booking's card with its new times, as okno_get_booking
--             writes it; or a refusal, {"code": …, "message": …}, which
--             okno stores and replays like a success:
--               booking_missing    no booking N of actor A (another actor's
--                                  looks the same)                      404
--               booking_cancelled  booking N is cancelled               409
--               slot_busy          the new period overlaps another
--                                  confirmed booking of the resource    409
--   raised    invalid_payload (OKB02): the new times break okno's rule for
--             a booking's times (RFC 3339 with an offset, start before end).
--             An error stores nothing: the key stays free.
--
-- The booking is updated only when it is the actor's and confirmed, and
-- the update writes the event booking_rescheduled with the booking's id as
-- its order key, so that it is delivered after the booking's
-- booking_created (and before a later booking_cancelled).
--
-- LANGUAGE sql with BEGIN ATOMIC: the body is parsed and its names bound
-- when the function is created, so nothing depends on the search_path of
-- the session that runs it; names are schema-qualified all the same (okno
-- and its tables in public, as the example's README assumes).

CREATE OR REPLACE FUNCTION public.reschedule_booking(request jsonb) RETURNS jsonb
LANGUAGE sql VOLATILE
BEGIN ATOMIC
    -- 1. The new times, first of all: okno_canonical applies okno's rule for
    --    a booking's payload (its DETAIL names the field); resource_id 1 only
    --    completes that payload, the booking keeps its own resource.
    SELECT public.okno_canonical(pg_catalog.jsonb_build_object(
               'resource_id', 1, 'starts_at', request -> 'starts_at', 'ends_at', request -> 'ends_at'));

    -- 2. The work, one statement.
    WITH new AS (
        -- the times in okno's canonical UTC form, as okno's cards write them
        SELECT public.okno_canonical(pg_catalog.jsonb_build_object(
                   'resource_id', 1, 'starts_at', request -> 'starts_at', 'ends_at', request -> 'ends_at'
               ))::jsonb AS t
    ), target AS (
        -- the actor's booking, locked: a concurrent cancel or reschedule of
        -- it is seen after it commits
        SELECT b.id, b.resource_id, b.actor_id, b.status,
               n.t ->> 'starts_at' AS starts_text, n.t ->> 'ends_at' AS ends_text,
               (n.t ->> 'starts_at')::timestamptz AS starts_at,
               (n.t ->> 'ends_at')::timestamptz AS ends_at
          FROM public.bookings AS b CROSS JOIN new AS n
         WHERE b.id = (request ->> 'booking_id')::bigint
           AND b.actor_id = (request ->> 'actor_id')::integer
           FOR UPDATE OF b
    ), verdict AS (
        SELECT t.*,
               CASE WHEN t.status <> 'confirmed' THEN 'booking_cancelled'
                    -- the check bookings_no_overlap makes, made first so
                    -- that a busy slot is an answer (stored, replayed) and
                    -- not an error; a booking committed meanwhile still
                    -- meets the constraint (23P01: the route's 409, not
                    -- stored)
                    WHEN EXISTS (SELECT FROM public.bookings AS o
                                  WHERE o.resource_id = t.resource_id AND o.id <> t.id
                                    AND o.status = 'confirmed'
                                    AND pg_catalog.tstzrange(o.starts_at, o.ends_at)
                                        OPERATOR(pg_catalog.&&) pg_catalog.tstzrange(t.starts_at, t.ends_at))
                    THEN 'slot_busy'
               END AS refusal
          FROM target AS t
    ), moved AS (
        UPDATE public.bookings AS b
           SET starts_at = v.starts_at, ends_at = v.ends_at
          FROM verdict AS v
         WHERE b.id = v.id AND v.refusal IS NULL AND b.status = 'confirmed'
        RETURNING b.id, b.resource_id, b.actor_id, v.starts_text, v.ends_text
    )
    SELECT COALESCE(
        -- moved: the card, and the event in order with the booking's events
        (SELECT pg_catalog.jsonb_build_object(
                    'id', m.id, 'resource_id', m.resource_id, 'actor_id', m.actor_id,
                    'starts_at', m.starts_text, 'ends_at', m.ends_text, 'status', 'confirmed')
           FROM moved AS m
                CROSS JOIN LATERAL public.okno_emit(
                    'booking_rescheduled',
                    pg_catalog.jsonb_build_object('booking_id', m.id,
                                                  'starts_at', m.starts_text, 'ends_at', m.ends_text),
                    m.id::text) AS e),
        -- refused: an answer of the course's shape
        (SELECT pg_catalog.jsonb_build_object(
                    'code', v.refusal,
                    'message', CASE v.refusal WHEN 'slot_busy' THEN 'the time slot is already booked'
                                              ELSE 'the booking is cancelled' END)
           FROM verdict AS v
          WHERE v.refusal IS NOT NULL),
        pg_catalog.jsonb_build_object('code', 'booking_missing', 'message', 'booking does not exist'));
END;
