-- okno's delivery on a worker (test/citus/drain.psql): Citus runs a query
-- from any node, and okno's drains too, this node's shards first
\set tag wd
\set day 02
\i test/citus/drain.psql
\i test/citus/purge.psql
\i test/citus/subscribers.psql
