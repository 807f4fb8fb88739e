-- The course "Окно", migrations/002: bookings, and no two confirmed
-- bookings of a resource overlap.  (Reconstructed, see 001.)
CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE TABLE bookings (
    id bigserial PRIMARY KEY,
    resource_id integer NOT NULL REFERENCES resources(id),
    actor_id integer NOT NULL REFERENCES actors(id),
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'confirmed'
        CHECK (status IN ('confirmed', 'cancelled')),
    CHECK (starts_at < ends_at),
    CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        resource_id WITH =,
        tstzrange(starts_at, ends_at) WITH &&
    ) WHERE (status = 'confirmed')
);
