/* okno--0.7.1--0.8.0.sql: okno on a Citus cluster */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION okno UPDATE TO '0.8.0'" to load this file. \quit

-- Nothing of okno's changes yet.
