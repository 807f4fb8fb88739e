/* okno--0.4.0--0.4.1.sql: the installing role's privileges cut to what using okno needs */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.4.1'" to load this file. \quit

-- Up to 0.4.0 the install granted ALL on okno's tables to the role that ran
-- CREATE EXTENSION, with the right to pass it on.  ALL includes TRIGGER and
-- REFERENCES, and each lets a role that is not a superuser run code of its
-- own as a superuser: a trigger runs as whoever writes the row (a superuser
-- draining, purging or creating through okno), and a foreign key's check
-- reads the referenced table as that table's owner (the bootstrap
-- superuser), applying whatever cast the referencing column needs.  This
-- takes TRIGGER, REFERENCES and (on PostgreSQL 17 and later) MAINTAIN back
-- from every role they were granted to, and from whoever that role passed
-- them on to.
--
-- What such a role may already have made with them is made harmless, with
-- a WARNING each: a trigger on okno's tables whose function belongs to a
-- role that is not a superuser is disabled (a superuser may review it and
-- enable it again), and a foreign key onto okno's tables whose checks apply
-- a cast made of a function is dropped (its definition is in the WARNING).
DO $okno$
DECLARE
    ext oid := (SELECT e.oid FROM pg_catalog.pg_extension AS e
                 WHERE e.extname OPERATOR(pg_catalog.=) 'okno');
    r record;
BEGIN
    -- the privileges, from whoever holds them through the tables' owner
    -- (from the owner itself, only the right to grant them: the owner of a
    -- table always holds every privilege on it)
    FOR r IN
        SELECT DISTINCT c.oid::pg_catalog.regclass AS tab, a.privilege_type AS priv,
               CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                    ELSE pg_catalog.quote_ident(g.rolname) END AS grantee,
               a.grantee OPERATOR(pg_catalog.=) c.relowner AS owner
          FROM pg_catalog.pg_depend AS d
          JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) d.objid
          CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) AS a
          LEFT JOIN pg_catalog.pg_roles AS g ON g.oid OPERATOR(pg_catalog.=) a.grantee
         WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
           AND d.refobjid OPERATOR(pg_catalog.=) ext
           AND d.deptype OPERATOR(pg_catalog.=) 'e'
           AND a.grantor OPERATOR(pg_catalog.=) c.relowner
           AND (a.grantee OPERATOR(pg_catalog.<>) c.relowner OR a.is_grantable)
           AND a.privilege_type OPERATOR(pg_catalog.=) ANY (ARRAY['TRIGGER', 'REFERENCES', 'MAINTAIN'])
         ORDER BY 1, 2, 3
    LOOP
        EXECUTE pg_catalog.format('REVOKE %s%s ON TABLE %s FROM %s CASCADE',
                                  CASE WHEN r.owner THEN 'GRANT OPTION FOR ' ELSE '' END,
                                  r.priv, r.tab, r.grantee);
    END LOOP;

    -- triggers that a role that is not a superuser could put on the tables
    FOR r IN
        SELECT t.tgrelid::pg_catalog.regclass AS tab, t.tgname, t.tgfoid::pg_catalog.regprocedure AS func,
               pg_catalog.pg_get_userbyid(p.proowner) AS owner
          FROM pg_catalog.pg_depend AS d
          JOIN pg_catalog.pg_trigger AS t ON t.tgrelid OPERATOR(pg_catalog.=) d.objid
          JOIN pg_catalog.pg_proc AS p ON p.oid OPERATOR(pg_catalog.=) t.tgfoid
          JOIN pg_catalog.pg_roles AS o ON o.oid OPERATOR(pg_catalog.=) p.proowner
         WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
           AND d.refobjid OPERATOR(pg_catalog.=) ext
           AND d.deptype OPERATOR(pg_catalog.=) 'e'
           AND NOT t.tgisinternal
           AND t.tgenabled OPERATOR(pg_catalog.<>) 'D'
           AND NOT o.rolsuper
         ORDER BY 1, 2
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s DISABLE TRIGGER %I', r.tab, r.tgname);
        RAISE WARNING 'okno disabled trigger "%" on table %', r.tgname, r.tab
            USING DETAIL = pg_catalog.format('Its function %s belongs to role %s, which is not a superuser, and would run as whoever writes the table, a superuser included.', r.func, r.owner),
                  HINT = 'Review the function; a superuser may enable the trigger again with ALTER TABLE ... ENABLE TRIGGER.';
    END LOOP;

    -- foreign keys onto the tables whose check applies a cast made of a
    -- function: the check runs it as the tables' owner
    FOR r IN
        SELECT DISTINCT k.conname, k.conrelid::pg_catalog.regclass AS fromtab,
               k.confrelid::pg_catalog.regclass AS tab,
               pg_catalog.pg_get_constraintdef(k.oid) AS def
          FROM pg_catalog.pg_depend AS d
          JOIN pg_catalog.pg_constraint AS k ON k.confrelid OPERATOR(pg_catalog.=) d.objid
          CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(k.conkey), pg_catalog.unnest(k.conpfeqop)) AS u(fk, op)
          JOIN pg_catalog.pg_attribute AS fa
            ON fa.attrelid OPERATOR(pg_catalog.=) k.conrelid AND fa.attnum OPERATOR(pg_catalog.=) u.fk
          JOIN pg_catalog.pg_type AS ft ON ft.oid OPERATOR(pg_catalog.=) fa.atttypid
          JOIN pg_catalog.pg_operator AS o ON o.oid OPERATOR(pg_catalog.=) u.op
          JOIN pg_catalog.pg_cast AS c
            ON c.castsource OPERATOR(pg_catalog.=) ANY (ARRAY[ft.oid, ft.typbasetype])
           AND c.casttarget OPERATOR(pg_catalog.=) o.oprright
           AND c.castmethod OPERATOR(pg_catalog.=) 'f'
         WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
           AND d.refobjid OPERATOR(pg_catalog.=) ext
           AND d.deptype OPERATOR(pg_catalog.=) 'e'
           AND k.contype OPERATOR(pg_catalog.=) 'f'
           AND fa.atttypid OPERATOR(pg_catalog.<>) o.oprright
         ORDER BY 1, 2
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s DROP CONSTRAINT %I', r.fromtab, r.conname);
        RAISE WARNING 'okno dropped foreign key "%" of table % onto %', r.conname, r.fromtab, r.tab
            USING DETAIL = pg_catalog.format('Its checks cast the referencing column with a function and run as the owner of %s, a superuser. It was: %s', r.tab, r.def),
                  HINT = 'Review the cast; a superuser may add the foreign key again.';
    END LOOP;
END
$okno$;
