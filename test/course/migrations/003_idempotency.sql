-- The course "Окно", migrations/003_idempotency.sql, as the course quotes it
-- (lesson 10).
CREATE TABLE idempotency (
    actor_id integer NOT NULL REFERENCES actors(id),
    request_key varchar(80) NOT NULL,
    fingerprint char(64) NOT NULL,
    response_body jsonb NOT NULL,
    PRIMARY KEY (actor_id, request_key)
);
