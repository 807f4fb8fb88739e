/*-------------------------------------------------------------------------
 *
 * handout.c
 *	  Events are handed out only to a reader that reads them all.
 *
 * A drain marks its events delivered when it runs, and the caller's commit
 * makes that final: the caller's transaction is the delivery.  That holds
 * only if every row the drain returned reaches the caller.  When the query
 * that drains is run as a portal that can be read in part — a cursor (SQL's
 * DECLARE, or one of PL/pgSQL's), or the extended protocol's Execute with a
 * row limit, which is how drivers read a server-side cursor — the client
 * may stop early and commit, and the events of the rows it never fetched
 * would be lost.
 *
 * So when a drain runs as the query of a portal, the portal is watched:
 * when its executor ends (the portal is closed, replaced, or dropped at
 * commit) and the portal was not read to its end, an error is raised, and
 * the transaction rolls back with every event it marked delivered.  "Read
 * to its end" is what the portal knows: a fetch returned fewer rows than
 * asked for (FETCH ALL, a plain query, an Execute without a row limit); or,
 * when the query is the drain alone (SELECT ... FROM okno_drain(n) with no
 * filter), as many rows were fetched as the drain returned.  A portal whose
 * executor ends without being read to its end can not have given the client
 * the rest.
 *
 * Not watched: a drain inside another query's executor (a function's SPI
 * statement, EXPLAIN ANALYZE, CREATE TABLE AS): what becomes of its rows is
 * that query's business, as with a LIMIT or a WHERE on the drain's result;
 * docs/REFERENCE.md (okno_drain) says so.
 *
 * The check runs from a shutdown callback of an expression context of the
 * portal's executor state, created for it and never rescanned, so it runs
 * once, when the executor state is freed at the executor's end (not on a
 * rescan or a rewind, and not on abort, when nothing needs checking).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "tcop/pquery.h"
#include "utils/portal.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"

typedef struct HandoutWatch
{
	Portal		portal;
	EState	   *estate;
	const char *fname;
	bool		alone;			/* the portal's query is the drain alone */
	uint64		rows;			/* rows the drain returned in this portal */
} HandoutWatch;

/* the watch of the last executor state watched, while that state lives */
static HandoutWatch *current = NULL;

static void handout_end(Datum arg);
static void handout_xact_callback(XactEvent event, void *arg);
static void handout_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
									 SubTransactionId parentSubid, void *arg);

/*
 * Register what this file needs to know of transactions.
 */
void
okno_handout_init(void)
{
	RegisterXactCallback(handout_xact_callback, NULL);
	RegisterSubXactCallback(handout_subxact_callback, NULL);
}

/* after an abort, the watched executor state is gone without its callback */
static void
handout_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		current = NULL;
}

static void
handout_subxact_callback(SubXactEvent event,
						 SubTransactionId mySubid pg_attribute_unused(),
						 SubTransactionId parentSubid pg_attribute_unused(),
						 void *arg pg_attribute_unused())
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		current = NULL;
}

/*
 * Whether the plan is the scan of one function and nothing else: then the
 * portal's rows are the function's, one for one.
 */
static bool
plan_is_function_alone(PlannedStmt *stmt)
{
	Plan	   *plan = stmt ? stmt->planTree : NULL;

	return plan != NULL && IsA(plan, FunctionScan) &&
		plan->qual == NIL &&
		list_length(((FunctionScan *) plan)->functions) == 1;
}

/*
 * The drain fname, called as fcinfo, returned rows rows: if its query is a
 * portal's, watch that portal (see above).
 */
void
okno_handout_watch(FunctionCallInfo fcinfo, const char *fname, uint64 rows)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	EState	   *estate;
	Portal		portal = ActivePortal;
	HandoutWatch *w;
	ExprContext *econtext;
	MemoryContext oldcxt;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) || rsinfo->econtext == NULL)
		return;
	estate = rsinfo->econtext->ecxt_estate;
	if (estate == NULL || portal == NULL || portal->queryDesc == NULL ||
		portal->queryDesc->estate != estate)
		return;

	if (current != NULL && current->estate == estate)
	{
		current->rows += rows;
		return;
	}

	oldcxt = MemoryContextSwitchTo(estate->es_query_cxt);
	w = palloc(sizeof(HandoutWatch));
	w->portal = portal;
	w->estate = estate;
	w->fname = fname;
	w->alone = plan_is_function_alone(portal->queryDesc->plannedstmt);
	w->rows = rows;
	econtext = CreateExprContext(estate);
	RegisterExprContextCallback(econtext, handout_end, PointerGetDatum(w));
	MemoryContextSwitchTo(oldcxt);
	current = w;
}

/*
 * The portal's executor state is being freed: was every row read?
 */
static void
handout_end(Datum arg)
{
	HandoutWatch *w = (HandoutWatch *) DatumGetPointer(arg);
	Portal		portal = w->portal;

	const char *which;

	if (current == w)
		current = NULL;
	if (portal->atEnd || (w->alone && portal->portalPos >= w->rows))
		return;
	which = portal->name[0] != '\0' ?
		psprintf("Cursor \"%s\"", portal->name) : "The unnamed portal";
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_CURSOR_STATE),
			 errmsg("events handed out by %s were not all read", w->fname),
			 errdetail("%s was closed after %llu of its rows were fetched, "
					   "and the events are marked delivered in this transaction; "
					   "the transaction is rolled back so that they are handed out again.",
					   which, (unsigned long long) portal->portalPos),
			 errhint("Read the result to its end (fetch until no row comes back), "
					 "or ask %s for no more events than will be read.", w->fname)));
}
