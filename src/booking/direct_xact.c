/*-------------------------------------------------------------------------
 *
 * direct_xact.c
 *	  The executor states the direct write (direct_write.c) prepares once
 *	  per transaction.
 *
 * The prepared CHECK expressions, the IndexInfo of each index (what
 * ExecOpenIndices builds for every statement, its expression and predicate
 * states prepared) and the column defaults of the three tables are kept
 * for the rest of the transaction, in a context under TopTransactionContext:
 * the first call of a transaction prepares them, the others reuse them.  They hold no
 * resources and point into no relcache entry, so the transaction's end
 * needs only to forget them; a change to any of the tables (a new cache
 * generation, schema.c) makes the next call prepare them anew.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "parser/parse_coerce.h"
#include "rewrite/rewriteHandler.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "base/base.h"
#include "booking/booking.h"

static OknoDirectXact *xcache = NULL;

static void insert_xact_callback(XactEvent event, void *arg);

/*
 * Register what the booking group needs to know of transactions: the
 * end of the one whose executor states this file keeps.
 */
void
okno_booking_init(void)
{
	RegisterXactCallback(insert_xact_callback, NULL);
}

/*
 * At the end of a transaction: its cache went with TopTransactionContext.
 */
static void
insert_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			xcache = NULL;
			break;
		default:
			break;
	}
}

/*
 * What the statement gives a column it leaves out, as an expression: its
 * default, or for a generated column nothing (ExecSimpleRelationInsert
 * computes it), or else a NULL coerced to the column's type, which checks
 * a domain's constraints as the planner's NULL does.
 */
static Expr *
column_fill(Relation rel, Form_pg_attribute att)
{
	Node	   *expr;

	if (att->attisdropped || att->attgenerated != '\0')
		return NULL;
	expr = build_column_default(rel, att->attnum);
	if (expr == NULL)
		expr = coerce_to_domain((Node *) makeNullConst(att->atttypid, att->atttypmod,
													   att->attcollation),
								InvalidOid, -1, att->atttypid,
								COERCION_IMPLICIT, COERCE_IMPLICIT_CAST, -1, false);
	if (IsA(expr, Const) && ((Const *) expr)->constisnull)
		return NULL;
	return (Expr *) expr;
}

/*
 * Prepare what ExecRelCheck and ExecOpenIndices would prepare for the
 * three tables, and their columns' defaults, for the rest of the
 * transaction.  rels[] are locked.
 */
static OknoDirectXact *
build_xact_cache(const OknoDirectInfo *info, Relation *rels)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	OknoDirectXact  *xc;
	int			t;

	cxt = AllocSetContextCreate(TopTransactionContext, "okno direct insert (transaction)",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);
	xc = palloc0(sizeof(OknoDirectXact));
	xc->generation = info->generation;
	xc->cxt = cxt;
	xc->prep = CreateExecutorState();

	for (t = 0; t < OKNO_RT_WRITTEN; t++)
	{
		Relation	rel = rels[t];
		TupleDesc	desc = RelationGetDescr(rel);
		TupleConstr *constr = desc->constr;
		int			i;

		if (constr != NULL && constr->num_check > 0)
		{
			xc->checks[t] = palloc(sizeof(ExprState *) * constr->num_check);
			for (i = 0; i < constr->num_check; i++)
				xc->checks[t][i] =
					ExecPrepareExpr((Expr *) stringToNode(constr->check[i].ccbin),
									xc->prep);
		}

		xc->defaults[t] = palloc0(sizeof(ExprState *) * desc->natts);
		for (i = 0; i < desc->natts; i++)
		{
			Expr	   *fill;

			if (info->argof[t][i] != OKNO_NOT_SUPPLIED)
				continue;
			fill = column_fill(rel, TupleDescAttr(desc, i));
			if (fill != NULL)
				xc->defaults[t][i] = ExecPrepareExpr(fill, xc->prep);
		}

		okno_direct_prepare_indexes(rel, xc->prep, &xc->indexes[t]);
	}
	MemoryContextSwitchTo(oldcxt);
	return xc;
}

/*
 * The executor states of this transaction for the tables info describes,
 * prepared now if they are not yet (or were prepared for tables that have
 * changed since); rels[] are locked.
 */
const OknoDirectXact *
okno_direct_xact(const OknoDirectInfo *info, Relation *rels)
{
	if (xcache != NULL && xcache->generation != info->generation)
	{
		MemoryContextDelete(xcache->cxt);
		xcache = NULL;
	}
	if (xcache == NULL)
		xcache = build_xact_cache(info, rels);
	return xcache;
}
