/*-------------------------------------------------------------------------
 *
 * tables.c
 *	  okno_create_tables() and okno_prepare_tables(): the application's
 *	  tables, made or made ready by their owner.
 *
 * The five tables okno serves are the application's, so no extension
 * script creates or changes them.  In a fresh database the application's
 * role calls okno_create_tables() once after CREATE EXTENSION: the tables
 * are created as the course defines them, with what okno needs besides,
 * and they belong to the caller.  A database the course's migrations made
 * has its tables already; okno_prepare_tables() adds what okno needs and
 * they lack (prepare.c says what), and so does okno_create_tables() for
 * the tables that were there.
 *
 * Both run with the caller's rights (SECURITY INVOKER), so only a role that
 * may create in okno's schema, or that owns a table, changes it; a
 * superuser changes a table of another role as that role, in a
 * security-restricted operation (owner.c), as PostgreSQL's own maintenance
 * commands do.  Each returns one line per change it made.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "base/base.h"
#include "maintenance/maintenance.h"

PG_FUNCTION_INFO_V1(okno_create_tables);
PG_FUNCTION_INFO_V1(okno_prepare_tables);

/*
 * The constraints of the tables as okno_create_tables() creates them, in
 * the order of okno_table_names (each refers to those before): the
 * course's definitions (migrations 001 to 005) with okno's keys; their
 * columns are base/bind.c's okno_columns.  %1$s is okno's schema, quoted.
 */
static const char *const create_constraints[] = {
	"CONSTRAINT actors_pkey PRIMARY KEY (id)",

	"CONSTRAINT resources_pkey PRIMARY KEY (id)",

	"CONSTRAINT bookings_pkey PRIMARY KEY (id),"
	" CONSTRAINT bookings_resource_id_fkey FOREIGN KEY (resource_id)"
	"  REFERENCES %1$s.resources (id),"
	" CONSTRAINT bookings_actor_id_fkey FOREIGN KEY (actor_id)"
	"  REFERENCES %1$s.actors (id),"
	" CONSTRAINT bookings_status_check"
	"  CHECK (status OPERATOR(pg_catalog.=) ANY (ARRAY['confirmed', 'cancelled']::pg_catalog.text[])),"
	" CONSTRAINT bookings_check CHECK (starts_at OPERATOR(pg_catalog.<) ends_at),"
	" CONSTRAINT bookings_no_overlap EXCLUDE USING gist ("
	"  resource_id WITH OPERATOR(pg_catalog.=),"
	"  pg_catalog.tstzrange(starts_at, ends_at) WITH OPERATOR(pg_catalog.&&)"
	" ) WHERE (status OPERATOR(pg_catalog.=) 'confirmed')",

	"CONSTRAINT idempotency_pkey PRIMARY KEY (actor_id, request_key),"
	" CONSTRAINT idempotency_actor_id_fkey FOREIGN KEY (actor_id)"
	"  REFERENCES %1$s.actors (id)",

	"CONSTRAINT outbox_pkey PRIMARY KEY (id),"
	" CONSTRAINT outbox_attempts_check CHECK (attempts OPERATOR(pg_catalog.>=) 0)"
};

StaticAssertDecl(lengthof(create_constraints) == OKNO_NUM_TABLES,
				 "create_constraints does not match okno_table_names");

/* CREATE TABLE for table t in schema (quoted): its columns, then constraints */
static char *
create_table_sql(OknoRel t, const char *schema)
{
	StringInfoData sql;
	int			i;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s.%s (", schema, okno_table_names[t]);
	for (i = 0; i < okno_num_columns; i++)
		if (okno_columns[i].table == t)
			appendStringInfo(&sql, "%s %s, ", okno_columns[i].name,
							 okno_column_definition(&okno_columns[i]));
	appendStringInfo(&sql, create_constraints[t], schema);
	appendStringInfoChar(&sql, ')');
	return sql.data;
}

static Datum
return_changes(FunctionCallInfo fcinfo, OknoChanges *ch)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	foreach(lc, ch->lines)
	{
		Datum		value = CStringGetTextDatum((char *) lfirst(lc));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
	return (Datum) 0;
}

/* the comments a created table gets (those of okno 0.5.0's own tables) */
static const char *const table_comments[] = {
	"who books: the owner of idempotency keys",
	"what is booked: rooms",
	"bookings; confirmed ones of a resource never overlap",
	"one row per (actor, Idempotency-Key): the fingerprint and the original response",
	"transactional outbox: events written with the booking, delivered at least once"
};

StaticAssertDecl(lengthof(table_comments) == OKNO_NUM_TABLES,
				 "table_comments does not match okno_table_names");

/*
 * What both functions do first: the schema, and a search_path of
 * pg_catalog alone for the statements they run (every name they write is
 * qualified, and the definitions they compare are deparsed as pg_catalog
 * sees them), restored when they return.
 */
static int
begin_call(const char *fname, Oid *nsp, const char **schema, OknoChanges *ch)
{
	int			nestlevel;

	PreventCommandIfReadOnly(fname);
	*schema = quote_identifier(okno_schema_name());
	*nsp = get_namespace_oid(okno_schema_name(), false);
	ch->cxt = CurrentMemoryContext;
	ch->lines = NIL;
	ch->course_rows = false;
	ch->dry_run = false;

	okno_check_may_record(*nsp, *schema);
	/* tables it could not make fit: refused before anything is changed */
	okno_check_preparable(*nsp, *schema, okno_installed_version_uncached(), fname);

	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	okno_spi_connect();
	return nestlevel;
}

static void
end_call(int nestlevel)
{
	okno_spi_finish();
	AtEOXact_GUC(true, nestlevel);
}

/*
 * okno_create_tables() RETURNS SETOF text
 */
Datum
okno_create_tables(PG_FUNCTION_ARGS)
{
	const char *schema;
	Oid			nsp;
	OknoChanges		ch;
	int			i;
	int			nestlevel;

	nestlevel = begin_call("okno_create_tables()", &nsp, &schema, &ch);
	if (okno_citus_distributed_schema(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("okno_create_tables() cannot make the tables of distributed schema %s",
						schema),
				 errdetail("Citus makes a table one of a distributed schema's only when a top-level CREATE TABLE creates it; the tables this function would create stay this node's own."),
				 errhint("Create the five tables with top-level CREATE TABLE statements (the course's migrations), then call okno_prepare_tables(); see README, \"Schema mode\".")));
	for (i = 0; i < (int) OKNO_NUM_TABLES; i++)
	{
		if (OidIsValid(get_relname_relid(okno_table_names[i], nsp)))
			continue;
		okno_run_ddl(&ch, create_table_sql((OknoRel) i, schema));
		okno_run_ddl(&ch, psprintf("COMMENT ON TABLE %s.%s IS %s", schema, okno_table_names[i],
							  quote_literal_cstr(table_comments[i])));
		okno_changed(&ch, psprintf("%s: created", okno_table_names[i]), NULL);
		/* the next one refers to it */
		CommandCounterIncrement();
	}
	okno_prepare_all(&ch, nsp, schema);
	end_call(nestlevel);

	return return_changes(fcinfo, &ch);
}

/*
 * okno_prepare_tables() RETURNS SETOF text
 */
Datum
okno_prepare_tables(PG_FUNCTION_ARGS)
{
	const char *schema;
	Oid			nsp;
	OknoChanges		ch;
	int			nestlevel;

	nestlevel = begin_call("okno_prepare_tables()", &nsp, &schema, &ch);
	okno_prepare_all(&ch, nsp, schema);
	end_call(nestlevel);

	return return_changes(fcinfo, &ch);
}
