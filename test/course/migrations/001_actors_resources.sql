-- The course "Окно", migrations/001: who books and what is booked.
-- (Reconstructed: the course's pages quote 003 and 005 in full, not 001
-- and 002; these follow what its models and later migrations rely on.)
CREATE TABLE actors (
    id serial PRIMARY KEY,
    name text NOT NULL
);
CREATE TABLE resources (
    id serial PRIMARY KEY,
    name text NOT NULL
);
