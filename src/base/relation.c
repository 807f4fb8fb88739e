/*-------------------------------------------------------------------------
 *
 * relation.c
 *	  What okno's direct paths need to read and write its tables as the
 *	  statements they replace would: the statement's range table and
 *	  privilege check, its snapshot, and checks of okno's columns and keys.
 *
 * This file is a leaf: it calls PostgreSQL and nothing of okno's but the
 * cached OIDs (and the error it raises).  Where PostgreSQL's API differs
 * between major versions (permission checks moved from RangeTblEntry to
 * RTEPermissionInfo in 16) it goes through compat.h.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "nodes/bitmapset.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "rewrite/prs2lock.h"
#include "rewrite/rewriteDefine.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/base.h"

static Bitmapset *
column_set(const AttrNumber *attnos)
{
	Bitmapset  *result = NULL;

	for (; attnos != NULL && *attnos != InvalidAttrNumber; attnos++)
		result = bms_add_member(result, *attnos - FirstLowInvalidHeapAttributeNumber);
	return result;
}

/*
 * Add to rt the relation relid, asking for perms on the columns given
 * (attnums ending with InvalidAttrNumber), as the parser adds a table that
 * a statement reads or inserts into.  Allocated in the current memory
 * context.
 */
void
okno_rt_add(OknoRangeTable *rt, Oid relid, AclMode perms,
			const AttrNumber *selected, const AttrNumber *inserted)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);

	rte->rtekind = RTE_RELATION;
	rte->relid = relid;
	rte->relkind = RELKIND_RELATION;
	rte->rellockmode = (perms & ACL_INSERT) ? RowExclusiveLock : AccessShareLock;
	rte->inh = false;
	rte->inFromCl = true;
	okno_set_rte_perms(rte, &rt->perminfos, perms,
					   column_set(selected), column_set(inserted));
	rt->rtable = lappend(rt->rtable, rte);
}

/*
 * The executor's privilege check of the statement's range table: whether
 * the current user has what it asks for, and with raise its error (42501)
 * on a missing privilege; ExecutorCheckPerms_hook sees it.
 */
bool
okno_rt_check(const OknoRangeTable *rt, bool raise)
{
	return okno_check_perms(rt->rtable, rt->perminfos, raise);
}

/*
 * ExecInitRangeTable for an executor state of our own.
 */
void
okno_rt_init_estate(EState *estate, const OknoRangeTable *rt)
{
	okno_init_range_table(estate, rt->rtable, rt->perminfos);
}

/*
 * The attribute number of a column of okno's relation, or InvalidAttrNumber
 * if it is missing (then the direct path is not used).
 */
AttrNumber
okno_attnum(Oid relid, const char *name)
{
	AttrNumber	attno = get_attnum(relid, name);

	return attno > 0 ? attno : InvalidAttrNumber;
}

/*
 * Whether index is a valid btree on exactly the columns given, in order.
 */
bool
okno_index_is(Relation index, Oid relid, int natts, const AttrNumber *attnos)
{
	int			i;

	if (index->rd_rel->relam != BTREE_AM_OID ||
		index->rd_index->indrelid != relid ||
		!index->rd_index->indisvalid ||
		!index->rd_index->indisready ||
		!index->rd_index->indislive ||
		index->rd_index->indnatts != natts ||
		index->rd_index->indnkeyatts != natts ||
		RelationGetIndexExpressions(index) != NIL ||
		RelationGetIndexPredicate(index) != NIL)
		return false;
	for (i = 0; i < natts; i++)
		if (index->rd_index->indkey.values[i] != attnos[i])
			return false;
	return true;
}

/*
 * Push, as the active snapshot, the one a SPI statement run with
 * read_only = false would run with: with snapshot = InvalidSnapshot, after
 * a CommandCounterIncrement, the transaction snapshot (a new one under READ
 * COMMITTED) with the current command id; otherwise the snapshot given,
 * as it is (SPI_execute_snapshot with read_only = true).  The caller pops
 * it.
 */
void
okno_push_statement_snapshot(Snapshot snapshot)
{
	if (snapshot != InvalidSnapshot)
	{
		PushActiveSnapshot(snapshot);
		return;
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	CommandCounterIncrement();
	UpdateActiveSnapshotCommandId();
}

/*
 * Raise okno_error_instead_rule if okno's table rel has an INSTEAD rule on
 * INSERT that can fire.  Takes the lock the INSERT that follows takes.
 */
void
okno_refuse_instead_rules(OknoRel rel, const char *what)
{
	Relation	r = table_open(okno_relid(rel), RowExclusiveLock);
	RuleLock   *rules = r->rd_rules;
	bool		found = false;
	int			i;

	for (i = 0; rules != NULL && i < rules->numLocks; i++)
	{
		RewriteRule *rule = rules->rules[i];

		if (rule->event == CMD_INSERT && rule->isInstead &&
			rule->enabled != RULE_DISABLED)
			found = true;
	}
	table_close(r, NoLock);
	if (found)
		okno_error_instead_rule(rel, what);
}

/*
 * Why okno refuses to lose the row of what: an event is never lost, and a
 * booking is stored only together with its key and its event.
 */
static const char *
why_stored(const char *what)
{
	if (strcmp(what, "event") == 0)
		return "okno does not lose an event it was given";
	return "okno stores a booking only together with its idempotency key and its event";
}

/*
 * A BEFORE trigger on one of okno's tables kept a row okno wrote from being
 * stored.  okno stores a booking only together with its key and its event,
 * and loses no event, so it fails rather than commit without the row.
 */
void
okno_error_not_stored(OknoRel rel, const char *what)
{
	const char *table = get_rel_name(okno_relid(rel));

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the insert of the %s into table \"%s.%s\" stored no row",
					what, okno_schema_name(), table ? table : "?"),
			 errdetail("A BEFORE trigger on the table returned NULL; %s.", why_stored(what)),
			 errhint("Let the trigger return the row for okno's inserts.")));
	pg_unreachable();
}

/*
 * An INSTEAD rule on INSERT would replace okno's insert: refused before
 * anything is written.
 */
void
okno_error_instead_rule(OknoRel rel, const char *what)
{
	const char *table = get_rel_name(okno_relid(rel));

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("table \"%s.%s\" has an INSTEAD rule on INSERT",
					okno_schema_name(), table ? table : "?"),
			 errdetail("The rule would replace the insert of the %s, and %s.",
					   what, why_stored(what)),
			 errhint("Make the rule an ALSO rule, or drop it.")));
	pg_unreachable();
}
