--
-- distribute: okno_distribute_tables() lays okno's tables out on a Citus
-- cluster (test/citus runs it there).  Without Citus in the database it is
-- refused (0A000) before it reads or changes anything.
--
-- what it is: PL/pgSQL, SECURITY INVOKER, with its own search_path
SELECT p.proname, l.lanname, p.prosecdef, p.provolatile, p.proconfig,
       pg_get_function_result(p.oid) AS result
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.proname IN ('okno_distribute_tables', 'okno_distribute_own_tables')
 ORDER BY p.proname;

-- (errors without their PL/pgSQL context: its line numbers)
\set SHOW_CONTEXT never

-- the tables' layout before
CREATE TEMP TABLE layout_before AS
SELECT c.conrelid::regclass::text AS table_name, c.conname, pg_get_constraintdef(c.oid) AS definition
  FROM pg_constraint c
 WHERE c.conrelid IN ('actors'::regclass, 'resources'::regclass, 'bookings'::regclass,
                      'idempotency'::regclass, 'outbox'::regclass);

SELECT okno_test.err('SELECT * FROM okno_distribute_tables()');
-- the whole error, with its hint
SELECT * FROM okno_distribute_tables();

-- nothing changed: every constraint as before, and no Citus metadata
SELECT count(*) AS constraints_changed
  FROM ((SELECT * FROM layout_before
         EXCEPT
         SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
           FROM pg_constraint c
          WHERE c.conrelid IN ('actors'::regclass, 'resources'::regclass, 'bookings'::regclass,
                               'idempotency'::regclass, 'outbox'::regclass))
        UNION ALL
        (SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
           FROM pg_constraint c
          WHERE c.conrelid IN ('actors'::regclass, 'resources'::regclass, 'bookings'::regclass,
                               'idempotency'::regclass, 'outbox'::regclass)
         EXCEPT
         SELECT * FROM layout_before)) AS d;
SELECT conname, pg_get_constraintdef(oid) AS definition
  FROM pg_constraint WHERE conrelid = 'bookings'::regclass AND contype = 'p';
SELECT to_regclass('pg_catalog.pg_dist_partition') AS citus_metadata;

-- in a transaction, refused the same, and the transaction goes on after a
-- savepoint's rollback
BEGIN;
SAVEPOINT s;
SELECT * FROM okno_distribute_tables();
ROLLBACK TO SAVEPOINT s;
SELECT okno_create_booking(1, 'distribute-1', '{"resource_id":1,"starts_at":"2031-01-01T10:00:00Z","ends_at":"2031-01-01T11:00:00Z"}') ->> 'status' AS status;
ROLLBACK;
DROP TABLE layout_before;

-- okno_distribute_own_tables() (okno's tables of keys, by a superuser):
-- refused the same without Citus, nothing changed
SELECT okno_test.err('SELECT * FROM okno_distribute_own_tables()');
SELECT * FROM okno_distribute_own_tables();
SELECT count(*) AS okno_keys_tables FROM pg_class
 WHERE relname IN ('okno_key', 'okno_key_tombstone') AND relkind = 'r';
