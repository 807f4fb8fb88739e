/*-------------------------------------------------------------------------
 *
 * adopt.c
 *	  Tables okno adopted stay when okno goes.
 *
 * CREATE EXTENSION okno in a schema that already holds the course's tables
 * takes them over (the install script; the tables become members of the
 * extension, so that pg_dump dumps their rows as it dumps a fresh
 * install's) and lists them in okno_adoption.  Members are dropped with
 * their extension, but DROP EXTENSION okno must never drop tables and rows
 * that existed before okno was installed.  So the install script puts an
 * event trigger on DROP EXTENSION and DROP OWNED, whose function is below:
 * when the command would drop okno, it first takes the adopted tables (and
 * their ids' sequences) out of the extension, and they stay, owned by the
 * bootstrap superuser as okno left them.
 *
 * The function runs as whoever drops okno (its owner or a superuser); the
 * ALTER EXTENSION ... DROP statements that release the tables need the
 * tables' owner too, so they run as that owner, in a security-restricted
 * context, as PostgreSQL's foreign-key checks run as a table's owner.
 * Should the command fail afterwards (a missing privilege, a dependent
 * object), its transaction rolls the release back with it.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "base/base.h"
#include "maintenance/maintenance.h"

PG_FUNCTION_INFO_V1(okno_drop_guard);

/* an adopted table, and what releasing it needs */
typedef struct Adopted
{
	char	   *table;			/* qualified as needed */
	char	   *seq;			/* its ids' serial sequence, or NULL */
	Oid			owner;			/* okno's tables' owner */
	char	   *former;			/* who owned it before, quoted */
} Adopted;

#define OKNO_EXTENSION_NAME "okno"

/*
 * Whether the DROP EXTENSION or DROP OWNED command drops okno.
 */
static bool
drops_okno(Node *parsetree, const OknoExtension *ext)
{
	ListCell   *lc;

	if (IsA(parsetree, DropStmt))
	{
		DropStmt   *stmt = (DropStmt *) parsetree;

		if (stmt->removeType != OBJECT_EXTENSION)
			return false;
		foreach(lc, stmt->objects)
		{
			Node	   *name = (Node *) lfirst(lc);

			if (IsA(name, String) && strcmp(strVal(name), OKNO_EXTENSION_NAME) == 0)
				return true;
		}
		return false;
	}
	if (IsA(parsetree, DropOwnedStmt))
	{
		foreach(lc, ((DropOwnedStmt *) parsetree)->roles)
		{
			RoleSpec   *role = (RoleSpec *) lfirst(lc);

			if (get_rolespec_oid(role, true) == ext->owner)
				return true;
		}
	}
	return false;
}

/*
 * The tables okno adopted in schema nsp that are still members of
 * extension extoid, with their serial sequence (actors, resources and
 * bookings), owner and former owner; *n of them.  The caller is connected
 * to SPI.
 */
static Adopted *
adopted_tables(const char *schema, Oid nsp, Oid extoid, uint64 *n)
{
	char	   *sql;
	Adopted    *tables;
	uint64		i;
	int			rc;

	sql = psprintf("SELECT c.oid::pg_catalog.regclass::pg_catalog.text,"
				   " CASE WHEN a.relation OPERATOR(pg_catalog.=) ANY (ARRAY['actors', 'resources', 'bookings'])"
				   " THEN pg_catalog.pg_get_serial_sequence(c.oid::pg_catalog.regclass::pg_catalog.text, 'id') END,"
				   " c.relowner, pg_catalog.quote_ident(a.former_owner)"
				   " FROM %s.okno_adoption AS a JOIN pg_catalog.pg_class AS c"
				   " ON c.relname OPERATOR(pg_catalog.=) a.relation"
				   " AND c.relnamespace OPERATOR(pg_catalog.=) %u"
				   " JOIN pg_catalog.pg_depend AS d"
				   " ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
				   " AND d.objid OPERATOR(pg_catalog.=) c.oid AND d.deptype OPERATOR(pg_catalog.=) 'e'"
				   " AND d.refobjid OPERATOR(pg_catalog.=) %u"
				   " ORDER BY 1",
				   quote_identifier(schema), nsp, extoid);
	rc = SPI_execute(sql, true, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "adopted tables");

	/* copied out: the statements that release them replace SPI's result */
	*n = SPI_processed;
	tables = palloc(sizeof(Adopted) * Max(*n, 1));
	for (i = 0; i < *n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		tables[i].table = SPI_getvalue(tup, desc, 1);
		tables[i].seq = SPI_getvalue(tup, desc, 2);
		tables[i].owner = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
		tables[i].former = SPI_getvalue(tup, desc, 4);
	}
	return tables;
}

/*
 * Release adopted table t (and its sequence) from the extension, as its
 * owner in a security-restricted operation, and tell the user it stays.
 */
static void
release_table(const Adopted *t)
{
	List	   *stmts;
	ListCell   *lc;
	Oid			save_userid;
	int			save_sec;
	int			rc;

	stmts = list_make1(psprintf("ALTER EXTENSION %s DROP TABLE %s",
								OKNO_EXTENSION_NAME, t->table));
	if (t->seq != NULL)
		stmts = lappend(stmts, psprintf("ALTER EXTENSION %s DROP SEQUENCE %s",
										OKNO_EXTENSION_NAME, t->seq));

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(t->owner, save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	foreach(lc, stmts)
	{
		rc = SPI_execute((const char *) lfirst(lc), false, 0);
		if (rc != SPI_OK_UTILITY)
			elog(ERROR, "could not release table %s from okno: %s",
				 t->table, SPI_result_code_string(rc));
	}
	SetUserIdAndSecContext(save_userid, save_sec);

	ereport(NOTICE,
			(errmsg("table %s stays: it existed before okno was installed", t->table),
			 errdetail("okno adopted it from role %s; it now belongs to role %s.",
					   t->former, GetUserNameFromId(t->owner, false)),
			 errhint("A superuser can give it back: ALTER TABLE %s OWNER TO %s;",
					 t->table, t->former)));
}

/*
 * okno_drop_guard() RETURNS event_trigger, on ddl_command_start of DROP
 * EXTENSION and DROP OWNED.
 */
Datum
okno_drop_guard(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	OknoExtension ext;
	Oid			nsp;
	const char *schema;
	Adopted    *tables;
	uint64		n;
	uint64		i;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("okno_drop_guard() must be called as an event trigger")));
	trigdata = (EventTriggerData *) fcinfo->context;

	if (!okno_read_extension(&ext) || !drops_okno(trigdata->parsetree, &ext))
		PG_RETURN_VOID();
	schema = okno_schema_name();
	nsp = get_namespace_oid(schema, false);
	if (!OidIsValid(get_relname_relid("okno_adoption", nsp)))
		PG_RETURN_VOID();

	okno_spi_connect();
	tables = adopted_tables(schema, nsp, ext.oid, &n);
	for (i = 0; i < n; i++)
		release_table(&tables[i]);
	okno_spi_finish();

	PG_RETURN_VOID();
}
