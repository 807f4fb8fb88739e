--
-- upgrade_paths: every earlier version, installed by a database owner who
-- is not a superuser and used, then updated by a superuser, as a DBA
-- updates okno with the package (test/upgrade/from_version.psql says
-- what each goes through).  Runs where the older versions can be
-- installed (tools/run's history cluster: REGRESS_HISTORY).
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
\getenv abs_srcdir PG_ABS_SRCDIR
\set v 0.1.0
\set n v010
\i :abs_srcdir/upgrade/from_version.psql
\set v 0.2.0
\set n v020
\i :abs_srcdir/upgrade/from_version.psql
\set v 0.3.0
\set n v030
\i :abs_srcdir/upgrade/from_version.psql
\set v 0.4.0
\set n v040
\i :abs_srcdir/upgrade/from_version.psql
\set v 0.4.1
\set n v041
\i :abs_srcdir/upgrade/from_version.psql
\set v 0.5.0
\set n v050
\i :abs_srcdir/upgrade/from_version.psql
\set v 0.6.0
\set n v060
\i :abs_srcdir/upgrade/from_version.psql
\set v 0.7.0
\set n v070
\i :abs_srcdir/upgrade/from_version.psql
\set v 0.7.1
\set n v071
\i :abs_srcdir/upgrade/from_version.psql
