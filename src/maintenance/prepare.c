/*-------------------------------------------------------------------------
 *
 * prepare.c
 *	  What okno needs of the application's existing tables, added by
 *	  okno_prepare_tables() (and okno_create_tables(), tables.c) as their
 *	  owner, or listed without a change for okno_verify.
 *
 * okno_prepare_tables() adds what okno needs and the tables lack: columns
 * with constant defaults or none (so no table is rewritten; a course's row
 * gets the time of the change as its created_at), the defaults okno's
 * inserts rely on, okno's partial indexes on outbox (those okno's drains
 * and counts are planned on; one of the course's of another definition
 * stays, and okno's gets a name of its own), the grants a new column needs
 * so that the roles reading the table through okno go on reading it, and
 * it drops okno's indexes a later okno no longer uses.  A later okno that
 * needs more adds it here, and until the owner calls okno_prepare_tables()
 * again it serves the tables as before, where it can (base.h), and
 * okno_verify lists what preparing would do (okno_tables_unprepared: the
 * same walk, changing nothing).
 *
 * A table is changed as its owner: a superuser's call runs as that role,
 * in a security-restricted operation (owner.c), as PostgreSQL's own
 * maintenance commands do.  Each change is one line of the result.
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
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "maintenance/maintenance.h"

/*
 * okno's partial indexes on outbox: the definition after "USING" as
 * pg_get_indexdef prints it (with only pg_catalog in the search_path), and
 * the statement that creates it (%1$s the index's name, %2$s the table).
 */
typedef struct OutboxIndex
{
	const char *name;
	const char *pattern;
	const char *create;
} OutboxIndex;

static const OutboxIndex outbox_indexes[] = {
	/* pending = not delivered and not parked; available_at rides along so
	 * the counts tell due from delayed events from the index alone */
	{"outbox_pending",
		"^ USING btree \\(id\\) INCLUDE \\(available_at\\)"
		" WHERE \\(\\(delivered_at IS NULL\\) AND \\(parked_at IS NULL\\)\\)$",
	"CREATE INDEX %1$s ON %2$s (id) INCLUDE (available_at)"
	" WHERE delivered_at IS NULL AND parked_at IS NULL"},
	{"outbox_parked",
		"^ USING btree \\(id\\) WHERE \\(\\(parked_at IS NOT NULL\\) AND \\(delivered_at IS NULL\\)\\)$",
	"CREATE INDEX %1$s ON %2$s (id) WHERE parked_at IS NOT NULL AND delivered_at IS NULL"},
	/*
	 * the undelivered events of each order key, for delivery in order
	 * (0.7.0: base.h's OKNO_SQL_ORDER_KEY, which replaces 0.5.0's
	 * outbox_order on payload -> 'booking_id', obsolete_indexes below)
	 */
	{"outbox_order_key",
		"^ USING btree \\(\\(\\s*CASE\\s+WHEN \\(\\(\\(?kind\\)?(::text)? = 'booking_created'::text\\)"
		" OR \\(\\(?kind\\)?(::text)? = 'booking_cancelled'::text\\)\\)"
		" THEN \\(payload ->> 'booking_id'::text\\)\\s+ELSE order_key\\s+END\\), id\\)"
		" WHERE \\(delivered_at IS NULL\\)$",
	"CREATE INDEX %1$s ON %2$s (" OKNO_SQL_ORDER_KEY("outbox") ", id)"
	" WHERE delivered_at IS NULL"},
	/* the undelivered events that are not a booking's first */
	{"outbox_later",
		"^ USING btree \\(id\\) WHERE \\(\\(delivered_at IS NULL\\) AND"
		" \\(\\(?kind\\)?(::text)? <> 'booking_created'::(text|character varying)\\)\\)$",
	"CREATE INDEX %1$s ON %2$s (id)"
	" WHERE delivered_at IS NULL AND kind OPERATOR(pg_catalog.<>) 'booking_created'"},
	/* the events by the transaction that wrote them (subscribers) */
	{"outbox_created_xid",
		"^ USING btree \\(created_xid\\) WHERE \\(created_xid IS NOT NULL\\)$",
	"CREATE INDEX %1$s ON %2$s (created_xid) WHERE created_xid IS NOT NULL"},
};

/*
 * okno's indexes on outbox that a later okno no longer uses: dropped once
 * the database's okno is at least that version (every write pays for an
 * index; until the update the library serves the database as its own
 * version did, on them).
 */
typedef struct ObsoleteIndex
{
	int			until;			/* the okno version that replaced it */
	OutboxIndex index;
} ObsoleteIndex;

static const ObsoleteIndex obsolete_indexes[] = {
	/* 0.5.0's order per booking, replaced by outbox_order_key */
	{OKNO_V(0, 7, 0), {"outbox_order",
			"^ USING btree \\(\\(?\\(payload -> 'booking_id'::text\\)\\)?, id\\) WHERE \\(delivered_at IS NULL\\)$",
	NULL}},
};

/* a change: the line that says it was made (done) or would be (todo) */
void
okno_changed(OknoChanges *ch, const char *done, const char *todo)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(ch->cxt);

	ch->lines = lappend(ch->lines, pstrdup(ch->dry_run ? todo : done));
	MemoryContextSwitchTo(oldcxt);
}

void
okno_run_ddl(OknoChanges *ch, const char *sql)
{
	int			rc;

	if (ch->dry_run)
		return;
	rc = SPI_execute(sql, false, 0);
	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed for \"%s\": %s", sql, SPI_result_code_string(rc));
}

static Oid
table_oid(Oid nsp, const char *name)
{
	Oid			relid = get_relname_relid(name, nsp);

	if (OidIsValid(relid) && get_rel_relkind(relid) != RELKIND_RELATION)
		return InvalidOid;
	return relid;
}

static Oid
table_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * The names of the indexes on table relid, not unique, whose definition
 * matches pattern (OutboxIndex), the valid ones only if valid_only; in the
 * caller's memory context.
 */
static List *
indexes_matching(Oid relid, const char *pattern, bool valid_only)
{
	Datum		args[3];
	int			rc;
	uint64		i;
	List	   *names = NIL;

	args[0] = ObjectIdGetDatum(relid);
	args[1] = CStringGetTextDatum(pattern);
	args[2] = BoolGetDatum(valid_only);
	/* (deparsed with only pg_catalog in the search_path: see begin_call) */
	rc = SPI_execute_with_args("SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_index AS i"
							   " JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) i.indexrelid"
							   " WHERE i.indrelid OPERATOR(pg_catalog.=) $1"
							   " AND (i.indisvalid OR NOT $3) AND NOT i.indisunique"
							   " AND pg_catalog.substring(pg_catalog.pg_get_indexdef(i.indexrelid),"
							   " ' USING .*$') OPERATOR(pg_catalog.~) $2",
							   3, (Oid[]) {OIDOID, TEXTOID, BOOLOID}, args, NULL, true, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "index lookup");
	for (i = 0; i < SPI_processed; i++)
		names = lappend(names, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	return names;
}

/*
 * Whether an index of okno's definition is on table relid already, and the
 * name to create it under: its own, or okno_<its own> where an index of
 * another definition has that name (the course's outbox_pending).
 */
static bool
index_present(OknoChanges *ch, Oid relid, Oid nsp, const OutboxIndex *ix, const char **name)
{
	bool		present = indexes_matching(relid, ix->pattern, true) != NIL;

	if (!present)
	{
		*name = ix->name;
		if (OidIsValid(get_relname_relid(ix->name, nsp)))
			*name = psprintf("okno_%s", ix->name);
		if (OidIsValid(get_relname_relid(*name, nsp)) && !ch->dry_run)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_TABLE),
					 errmsg("okno cannot add its index %s to table outbox: relations \"%s\" and \"okno_%s\" exist",
							ix->name, ix->name, ix->name),
					 errhint("Rename one of them and call okno_prepare_tables() again.")));
	}
	return present;
}

/*
 * Whether one of the tables there lacks a column that okno's own tables
 * have always had (base.h's OknoColumn.course): their rows were written by
 * someone else before okno served them, which okno_verify must know
 * (record_checked_since).
 */
static bool
lacks_course_column(Oid nsp)
{
	int			i;

	for (i = 0; i < okno_num_columns; i++)
	{
		const OknoColumn *c = &okno_columns[i];
		Oid			relid = table_oid(nsp, okno_table_names[c->table]);

		if (c->course && c->add_sql != NULL && OidIsValid(relid) &&
			get_attnum(relid, c->name) == InvalidAttrNumber)
			return true;
	}
	return false;
}

/*
 * Before anything is changed: where the call will find rows written before
 * okno served the tables, it must record so in okno's own
 * okno_purge_horizon, so the caller must be allowed to write it (a
 * superuser, or the role that installed okno or was granted it).  Refused
 * otherwise, with nothing done: a later call would find nothing to add and
 * never record it.
 */
void
okno_check_may_record(Oid nsp, const char *schema)
{
	Oid			horizon = get_relname_relid("okno_purge_horizon", nsp);

	if (!OidIsValid(horizon) || !lacks_course_column(nsp))
		return;
	/* (all three: pg_class_aclcheck would be content with any) */
	if (pg_class_aclmask(horizon, GetUserId(), ACL_SELECT | ACL_INSERT | ACL_UPDATE, ACLMASK_ALL) !=
		(ACL_SELECT | ACL_INSERT | ACL_UPDATE))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s.okno_purge_horizon", schema),
				 errdetail("The tables hold rows written before okno served them, and okno records since when okno_verify checks bookings in okno_purge_horizon."),
				 errhint("Call it as a superuser (it changes another role's tables as their owner), or grant SELECT, INSERT and UPDATE on okno_purge_horizon to role %s.",
						 GetUserNameFromId(GetUserId(), false))));
}

/*
 * Record, in okno's own okno_purge_horizon, that the bookings there now
 * were written before okno served the tables (okno_verify does not ask them
 * for a key or an event).  Recorded once, the first time a table lacked
 * what okno's own tables have (check_may_record saw to the privileges),
 * and never moved later.
 */
static void
record_checked_since(OknoChanges *ch, const char *schema)
{
	int			rc;

	if (ch->dry_run)
	{
		okno_changed(ch, NULL, "okno_verify: check the bookings created from then on");
		return;
	}
	rc = SPI_execute(psprintf("INSERT INTO %1$s.okno_purge_horizon AS h (singleton, checked_since)"
							  " VALUES (true, pg_catalog.now())"
							  " ON CONFLICT (singleton) DO UPDATE SET checked_since = EXCLUDED.checked_since"
							  " WHERE h.checked_since IS NULL", schema),
					 false, 0);
	okno_check_spi(rc, SPI_OK_INSERT, "purge horizon");
	if (SPI_processed > 0)
		okno_changed(ch, "okno_verify: checks bookings created from now on", NULL);
}

/*
 * Drop okno's indexes on outbox that the installed okno no longer uses
 * (obsolete_indexes), found by their definition whatever their name.
 */
static void
drop_obsolete_indexes(OknoChanges *ch, Oid relid, const char *schema)
{
	int			version = okno_installed_version_uncached();
	int			i;

	for (i = 0; i < (int) lengthof(obsolete_indexes); i++)
	{
		ListCell   *lc;

		if (version < obsolete_indexes[i].until)
			continue;
		/* (an invalid one too: it would still be written) */
		foreach(lc, indexes_matching(relid, obsolete_indexes[i].index.pattern, false))
		{
			const char *name = (const char *) lfirst(lc);

			okno_run_ddl(ch, psprintf("DROP INDEX %s.%s", schema, quote_identifier(name)));
			okno_changed(ch, psprintf("outbox: dropped index %s (okno no longer uses it)", name),
					psprintf("outbox: drop index %s (okno no longer uses it)", name));
		}
	}
}

/*
 * The column c just added to table relid (qualified), granted SELECT to
 * each role, PUBLIC included, that holds SELECT on every column of
 * c->readers_of by a grant of its own on those columns (base/bind.c says
 * why); run as the table's owner, the grantor.
 */
static void
grant_to_readers(OknoChanges *ch, Oid relid, const char *qualified, const char *table,
				 const OknoColumn *c)
{
	List	   *grantees = NIL;
	ListCell   *lc;
	Datum		args[2];
	int			rc;
	uint64		i;

	args[0] = ObjectIdGetDatum(relid);
	args[1] = CStringGetTextDatum(c->readers_of);
	rc = SPI_execute_with_args("SELECT CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'"
							   " ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END"
							   " FROM (SELECT a.grantee"
							   "   FROM pg_catalog.pg_attribute AS t, pg_catalog.aclexplode(t.attacl) AS a"
							   "  WHERE t.attrelid OPERATOR(pg_catalog.=) $1"
							   "    AND t.attname::pg_catalog.text OPERATOR(pg_catalog.=)"
							   "        ANY (pg_catalog.string_to_array($2, ', '))"
							   "    AND a.privilege_type OPERATOR(pg_catalog.=) 'SELECT'"
							   "  GROUP BY a.grantee"
							   " HAVING pg_catalog.count(DISTINCT t.attname) OPERATOR(pg_catalog.=)"
							   "        pg_catalog.cardinality(pg_catalog.string_to_array($2, ', '))) AS g"
							   " WHERE g.grantee OPERATOR(pg_catalog.<>) (SELECT r.relowner"
							   "   FROM pg_catalog.pg_class AS r WHERE r.oid OPERATOR(pg_catalog.=) $1)"
							   " ORDER BY 1",
							   2, (Oid[]) {OIDOID, TEXTOID}, args, NULL, true, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "column grants");
	for (i = 0; i < SPI_processed; i++)
		grantees = lappend(grantees, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	foreach(lc, grantees)
	{
		const char *grantee = (const char *) lfirst(lc);

		okno_run_ddl(ch, psprintf("GRANT SELECT (%s) ON %s TO %s", quote_identifier(c->name),
							 qualified, grantee));
		okno_changed(ch, psprintf("%s: granted SELECT (%s) to %s, who may read %s",
							 table, c->name, grantee, c->readers_of),
				psprintf("%s: grant SELECT (%s) to %s, who may read %s",
						 table, c->name, grantee, c->readers_of));
	}
}

/*
 * Column c of table relid (qualified) given the default okno's inserts rely
 * on, where it has none (a column just added without its volatile default,
 * or one of the course's without any).
 */
static void
ensure_default(OknoChanges *ch, Oid relid, const char *qualified, const char *table,
			   const OknoColumn *c)
{
	HeapTuple	tup = SearchSysCacheAttName(relid, c->name);
	bool		hasdef = false;

	if (HeapTupleIsValid(tup))
	{
		hasdef = ((Form_pg_attribute) GETSTRUCT(tup))->atthasdef;
		ReleaseSysCache(tup);
	}
	if (hasdef)
		return;
	okno_run_ddl(ch, psprintf("ALTER TABLE %s ALTER COLUMN %s SET DEFAULT %s", qualified,
							  quote_identifier(c->name), c->default_sql));
	okno_changed(ch, psprintf("%s: default of %s set to %s", table, c->name, c->default_sql),
				 psprintf("%s: set the default of %s to %s", table, c->name, c->default_sql));
}

/* the columns, defaults and indexes okno needs on one existing table */
static void
prepare_table(OknoChanges *ch, Oid nsp, const char *schema, const char *table)
{
	Oid			relid = table_oid(nsp, table);
	char	   *qualified;
	OknoGuard	guard;
	int			i;

	if (!OidIsValid(relid))
		return;					/* missing, or not a table: the binding says so */
	qualified = psprintf("%s.%s", schema, quote_identifier(table));

	okno_guard_begin_owner(&guard, table_owner(relid));
	for (i = 0; i < okno_num_columns; i++)
	{
		const OknoColumn *c = &okno_columns[i];
		AttrNumber	att;

		if (strcmp(okno_table_names[c->table], table) != 0)
			continue;
		att = get_attnum(relid, c->name);
		if (att == InvalidAttrNumber && c->add_sql != NULL)
		{
			okno_run_ddl(ch, psprintf("ALTER TABLE %s ADD COLUMN %s %s", qualified,
								 quote_identifier(c->name), c->add_sql));
			okno_changed(ch, psprintf("%s: added column %s %s", table, c->name, c->add_sql),
					psprintf("%s: add column %s %s", table, c->name, c->add_sql));
			if (c->course)
				ch->course_rows = true;
			if (c->readers_of != NULL)
				grant_to_readers(ch, relid, qualified, table, c);
		}
		if (c->default_sql != NULL)
			ensure_default(ch, relid, qualified, table, c);
	}
	if (strcmp(table, "outbox") == 0)
	{
		for (i = 0; i < (int) lengthof(outbox_indexes); i++)
		{
			const char *name;

			if (index_present(ch, relid, nsp, &outbox_indexes[i], &name))
				continue;
			okno_run_ddl(ch, psprintf(outbox_indexes[i].create, quote_identifier(name), qualified));
			okno_changed(ch, psprintf("outbox: created index %s", name),
					psprintf("outbox: create index %s", name));
		}
		drop_obsolete_indexes(ch, relid, schema);
	}
	okno_guard_end(&guard);
}

/* the tables that exist, prepared; the lines of what was done */
void
okno_prepare_all(OknoChanges *ch, Oid nsp, const char *schema)
{
	int			i;

	for (i = 0; i < OKNO_NUM_TABLES; i++)
		prepare_table(ch, nsp, schema, okno_table_names[i]);
	if (ch->course_rows)
		record_checked_since(ch, schema);
}

/*
 * What okno_prepare_tables() would change now, one line each, changing
 * nothing (okno_verify reports them): NIL when the tables are prepared.
 * The caller is connected to SPI; the lines are in its memory context.
 */
List *
okno_tables_unprepared(void)
{
	const char *schema = quote_identifier(okno_schema_name());
	Oid			nsp = get_namespace_oid(okno_schema_name(), false);
	OknoChanges		ch;
	int			nestlevel;

	ch.cxt = CurrentMemoryContext;
	ch.lines = NIL;
	ch.course_rows = false;
	ch.dry_run = true;
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	okno_prepare_all(&ch, nsp, schema);
	AtEOXact_GUC(true, nestlevel);
	return ch.lines;
}
