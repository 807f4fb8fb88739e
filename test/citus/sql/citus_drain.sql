-- okno's delivery on the coordinator (test/citus/drain.psql), on the
-- layout citus_layout made: outbox distributed by bucket
\set tag cd
\set day 01
\i test/citus/drain.psql
\i test/citus/purge.psql
\i test/citus/subscribers.psql
