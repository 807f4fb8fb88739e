-- The course "Окно", migrations/005_outbox.sql, as the course quotes it
-- (lesson 14).
CREATE TABLE outbox (
    id uuid PRIMARY KEY,
    kind varchar(40) NOT NULL,
    payload jsonb NOT NULL,
    delivered_at timestamptz
);
CREATE INDEX outbox_pending ON outbox (id) WHERE delivered_at IS NULL;
