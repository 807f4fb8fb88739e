/*-------------------------------------------------------------------------
 *
 * insert.c
 *	  The booking, its key and its event, written without a plan.
 *
 * The statements of store.c cost an executor start-up and shut-down each.
 * This file writes the three rows the way logical replication's apply
 * worker applies an INSERT: an executor state with the three tables as
 * result relations and their indexes opened (ExecOpenIndices); every
 * column the statement would leave out filled as the planner fills it, with
 * its default (build_column_default, planned and evaluated as worker.c
 * does) or else a NULL coerced to the column's type, domains included; and
 * each row stored with ExecSimpleRelationInsert (generated columns,
 * constraints, the row, its index entries with their unique and exclusion
 * checks, the AFTER row triggers), between AfterTriggerBeginQuery and
 * AfterTriggerEndQuery, so that the foreign-key checks run as they do at
 * the end of a statement.
 *
 * What the statement does around that is kept:
 *   - its relation locks, and its privilege check (okno_rt_check on the
 *     range table the statement would have, before anything else);
 *   - its snapshot: a CommandCounterIncrement and the snapshot of a
 *     non-read-only SPI statement, under which the actor and then the
 *     resource must exist (direct probes of their primary keys) before
 *     anything is inserted, so actor_missing and resource_missing still
 *     come before slot_busy and no default (a sequence) is evaluated in
 *     vain;
 *   - the order: booking, key, event, then the AFTER triggers.
 *
 * The direct path is used only where it is the statements' equal by
 * construction; direct_supported() lists what that takes, and anything
 * else (a rule, a trigger that is not a foreign key's, row-level security,
 * a column of another type than okno gives it, a table that is not a plain
 * table ...) goes to the statements.
 *
 * The prepared CHECK expressions, index expression and predicate states and
 * column defaults of the three tables are kept for the rest of the
 * transaction, in a context under TopTransactionContext: the first call of
 * a transaction prepares them, the others reuse them.  They hold no
 * resources and point into no relcache entry, so the transaction's end
 * needs only to forget them; a change to any of the tables (okno.c's cache
 * generation) makes the next call prepare them anew.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "parser/parse_coerce.h"
#include "rewrite/rewriteHandler.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "okno.h"
#include "compat.h"
#include "errors.h"

/* The range table of the statement, in this order (range table indexes). */
#define RT_BOOKINGS		1
#define RT_IDEMPOTENCY	2
#define RT_OUTBOX		3
#define RT_ACTORS		4
#define RT_RESOURCES	5
#define RT_COUNT		5
#define RT_WRITTEN		3		/* the first three are written */

/* The values the caller supplies, by column. */
typedef enum InsertArg
{
	ARG_BOOKING_RESOURCE,
	ARG_BOOKING_ACTOR,
	ARG_BOOKING_STARTS,
	ARG_BOOKING_ENDS,
	ARG_KEY_ACTOR,
	ARG_KEY_KEY,
	ARG_KEY_FINGERPRINT,
	ARG_KEY_VERSION,
	ARG_KEY_RESPONSE,
	ARG_EVENT_ID,
	ARG_EVENT_KIND,
	ARG_EVENT_PAYLOAD,
	NUM_ARGS
} InsertArg;

typedef struct SuppliedColumn
{
	int			rti;
	const char *name;
	Oid			typid;			/* TEXTOID: a string column, see strlen */
	int			strlen;			/* a string's longest value */
} SuppliedColumn;

/*
 * In the order of InsertArg.  A string column may be text, or varchar long
 * enough for any value okno writes (the install script's varchar(80) and
 * varchar(40); a course table's text); the fingerprint also char(64), which
 * its 64 characters fill.  okno supplies each as a text datum, which is
 * what the statement would store in any of them.
 */
static const SuppliedColumn supplied[NUM_ARGS] = {
	{RT_BOOKINGS, "resource_id", INT4OID, 0},
	{RT_BOOKINGS, "actor_id", INT4OID, 0},
	{RT_BOOKINGS, "starts_at", TIMESTAMPTZOID, 0},
	{RT_BOOKINGS, "ends_at", TIMESTAMPTZOID, 0},
	{RT_IDEMPOTENCY, "actor_id", INT4OID, 0},
	{RT_IDEMPOTENCY, "request_key", TEXTOID, 80},
	{RT_IDEMPOTENCY, "fingerprint", TEXTOID, OKNO_FINGERPRINT_LEN},
	{RT_IDEMPOTENCY, "fingerprint_version", INT2OID, 0},
	{RT_IDEMPOTENCY, "response_body", JSONBOID, 0},
	{RT_OUTBOX, "id", UUIDOID, 0},
	{RT_OUTBOX, "kind", TEXTOID, 17},	/* booking_cancelled */
	{RT_OUTBOX, "payload", JSONBOID, 0},
};

#define NOT_SUPPLIED	(-1)

/*
 * What the direct path knows about the tables, derived under their locks
 * and derived again when okno.c's cache changes.
 */
typedef struct DirectInfo
{
	uint64		generation;
	bool		usable;			/* direct_supported() said yes */
	MemoryContext cxt;
	Oid			relids[RT_COUNT];
	AttrNumber	actors_id;
	AttrNumber	resources_id;
	AttrNumber	booking_id;		/* bookings.id, filled by its default */
	Oid			booking_id_type;	/* int8 or int4 */
	int			natts[RT_WRITTEN];
	int		   *argof[RT_WRITTEN];	/* per column, an InsertArg or NOT_SUPPLIED */
	OknoRangeTable rt;
} DirectInfo;

static DirectInfo info = {0};

/* What the rest of the transaction reuses, for the three tables. */
typedef struct XactCache
{
	uint64		generation;
	MemoryContext cxt;			/* under TopTransactionContext */
	EState	   *prep;			/* its es_query_cxt holds the states */
	ExprState **checks[RT_WRITTEN]; /* as ExecRelCheck prepares them */
	int			nindexes[RT_WRITTEN];
	Oid		   *indexoids[RT_WRITTEN];	/* as ExecOpenIndices lists them */
	List	  **exprstates[RT_WRITTEN]; /* per index, its ii_ExpressionsState */
	ExprState **predstates[RT_WRITTEN]; /* per index, its ii_PredicateState */
	ExprState **defaults[RT_WRITTEN];	/* per column not supplied, or NULL */
} XactCache;

static XactCache *xcache = NULL;

static void insert_xact_callback(XactEvent event, void *arg);

/*
 * Register what this file needs to know of transactions.
 */
void
okno_insert_init(void)
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
 * Whether every trigger of a table the statement writes is a foreign key's
 * (those fire here exactly as for the statement).
 */
static bool
only_foreign_key_triggers(Relation rel)
{
	TriggerDesc *trigdesc = rel->trigdesc;
	int			i;

	if (trigdesc == NULL)
		return true;
	for (i = 0; i < trigdesc->numtriggers; i++)
	{
		Trigger    *t = &trigdesc->triggers[i];

		if (!t->tgisinternal || RI_FKey_trigger_type(t->tgfoid) == RI_TRIGGER_NONE)
			return false;
	}
	return true;
}

/*
 * Whether the column stores what okno supplies for it as it is.
 */
static bool
type_fits(Form_pg_attribute att, const SuppliedColumn *col)
{
	if (col->typid != TEXTOID)
		return att->atttypid == col->typid && att->atttypmod == -1;
	switch (att->atttypid)
	{
		case TEXTOID:
			return true;
		case VARCHAROID:
			return att->atttypmod == -1 || att->atttypmod - VARHDRSZ >= col->strlen;
		case BPCHAROID:
			return col->strlen == OKNO_FINGERPRINT_LEN &&
				att->atttypmod - VARHDRSZ == OKNO_FINGERPRINT_LEN;
		default:
			return false;
	}
}

/*
 * Map the columns of a table the statement writes to the supplied values;
 * false if a supplied column is missing or not of the type okno gives it.
 */
static bool
map_columns(int rti, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int		   *argof = palloc(sizeof(int) * desc->natts);
	int			a;
	int			i;

	info.argof[rti - 1] = argof;
	info.natts[rti - 1] = desc->natts;
	for (i = 0; i < desc->natts; i++)
		argof[i] = NOT_SUPPLIED;

	for (a = 0; a < NUM_ARGS; a++)
	{
		AttrNumber	attno;
		Form_pg_attribute att;

		if (supplied[a].rti != rti)
			continue;
		attno = okno_attnum(RelationGetRelid(rel), supplied[a].name);
		if (attno == InvalidAttrNumber)
			return false;
		att = TupleDescAttr(desc, attno - 1);
		if (att->attgenerated != '\0' || !type_fits(att, &supplied[a]))
			return false;
		argof[attno - 1] = a;
	}
	return true;
}

/*
 * What the direct path supports, positively: true only if writing the rows
 * here does what the statements of store.c would do.  rels[] are locked.
 *
 *   - all five tables are plain tables (not partitions, views, foreign
 *     tables), without row-level security;
 *   - the three written have no rules, and no triggers but a foreign key's;
 *   - every column okno supplies exists, is not generated, and stores the
 *     value as it is (its type: the install script's, or for a string text
 *     or a varchar long enough; type_fits());
 *   - bookings.id is left to its default, and is bigint or integer;
 *   - actors and resources have their one-column integer primary keys on
 *     id (probed for actor_missing and resource_missing).
 *
 * Every other column gets what the statement would give it: its default,
 * or a NULL coerced to its type (a domain's constraints apply), or, if
 * generated, its generation expression.
 */
static bool
direct_supported(Relation *rels, Relation actors_pkey, Relation resources_pkey)
{
	static const char *const booking_ins[] = {"resource_id", "actor_id", "starts_at", "ends_at"};
	static const char *const key_ins[] = {"actor_id", "request_key", "fingerprint",
	"fingerprint_version", "response_body"};
	static const char *const key_sel[] = {"response_body"};
	static const char *const event_ins[] = {"id", "kind", "payload"};
	static const char *const id_sel[] = {"id"};
	AttrNumber	ins[6];
	AttrNumber	sel[2];
	Form_pg_attribute idatt;
	int			rti;
	int			i;

	for (rti = 1; rti <= RT_COUNT; rti++)
	{
		Relation	rel = rels[rti - 1];

		if (rel->rd_rel->relkind != RELKIND_RELATION ||
			rel->rd_rel->relispartition ||
			rel->rd_rel->relrowsecurity)
			return false;
		if (rti <= RT_WRITTEN &&
			(rel->rd_rules != NULL || !only_foreign_key_triggers(rel) ||
			 !map_columns(rti, rel)))
			return false;
	}

	info.booking_id = okno_attnum(info.relids[RT_BOOKINGS - 1], "id");
	if (info.booking_id == InvalidAttrNumber)
		return false;
	idatt = TupleDescAttr(RelationGetDescr(rels[RT_BOOKINGS - 1]), info.booking_id - 1);
	if (idatt->attgenerated != '\0' ||
		(!idatt->atthasdef && idatt->attidentity == '\0') ||
		(idatt->atttypid != INT8OID && idatt->atttypid != INT4OID))
		return false;
	info.booking_id_type = idatt->atttypid;

	info.actors_id = okno_attnum(info.relids[RT_ACTORS - 1], "id");
	info.resources_id = okno_attnum(info.relids[RT_RESOURCES - 1], "id");
	if (info.actors_id == InvalidAttrNumber || info.resources_id == InvalidAttrNumber ||
		!okno_index_is(actors_pkey, info.relids[RT_ACTORS - 1], 1, &info.actors_id) ||
		actors_pkey->rd_opcintype[0] != INT4OID ||
		!okno_index_is(resources_pkey, info.relids[RT_RESOURCES - 1], 1, &info.resources_id) ||
		resources_pkey->rd_opcintype[0] != INT4OID)
		return false;

	/* the range table of the statement, with its privileges */
#define FILL(arr, names) \
	do { \
		for (i = 0; i < (int) lengthof(names); i++) \
			arr[i] = okno_attnum(info.relids[rti - 1], names[i]); \
		arr[i] = InvalidAttrNumber; \
	} while (0)
	rti = RT_BOOKINGS;
	FILL(ins, booking_ins);
	sel[0] = info.booking_id;
	sel[1] = InvalidAttrNumber;
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_INSERT | ACL_SELECT, sel, ins);
	rti = RT_IDEMPOTENCY;
	FILL(ins, key_ins);
	FILL(sel, key_sel);
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_INSERT | ACL_SELECT, sel, ins);
	rti = RT_OUTBOX;
	FILL(ins, event_ins);
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_INSERT, NULL, ins);
	rti = RT_ACTORS;
	FILL(sel, id_sel);
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_SELECT, sel, NULL);
	rti = RT_RESOURCES;
	FILL(sel, id_sel);
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_SELECT, sel, NULL);
#undef FILL
	return true;
}

/*
 * Derive info for this generation; the tables and keys are locked.
 */
static void
prepare_info(uint64 generation, const Oid *relids, Relation *rels,
			 Relation actors_pkey, Relation resources_pkey)
{
	MemoryContext oldcxt;

	if (info.cxt == NULL)
		info.cxt = AllocSetContextCreate(TopMemoryContext, "okno direct insert",
										 ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(info.cxt);
	memset(info.argof, 0, sizeof(info.argof));
	info.rt.rtable = NIL;
	info.rt.perminfos = NIL;
	info.generation = generation;
	memcpy(info.relids, relids, sizeof(info.relids));

	oldcxt = MemoryContextSwitchTo(info.cxt);
	info.usable = direct_supported(rels, actors_pkey, resources_pkey);
	MemoryContextSwitchTo(oldcxt);
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
static XactCache *
build_xact_cache(uint64 generation, Relation *rels)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	XactCache  *xc;
	int			t;

	cxt = AllocSetContextCreate(TopTransactionContext, "okno direct insert (transaction)",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);
	xc = palloc0(sizeof(XactCache));
	xc->generation = generation;
	xc->cxt = cxt;
	xc->prep = CreateExecutorState();

	for (t = 0; t < RT_WRITTEN; t++)
	{
		Relation	rel = rels[t];
		TupleDesc	desc = RelationGetDescr(rel);
		TupleConstr *constr = desc->constr;
		List	   *indexoids;
		ListCell   *lc;
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

			if (info.argof[t][i] != NOT_SUPPLIED)
				continue;
			fill = column_fill(rel, TupleDescAttr(desc, i));
			if (fill != NULL)
				xc->defaults[t][i] = ExecPrepareExpr(fill, xc->prep);
		}

		indexoids = RelationGetForm(rel)->relhasindex ? RelationGetIndexList(rel) : NIL;
		xc->nindexes[t] = list_length(indexoids);
		xc->indexoids[t] = palloc(sizeof(Oid) * Max(xc->nindexes[t], 1));
		xc->exprstates[t] = palloc0(sizeof(List *) * Max(xc->nindexes[t], 1));
		xc->predstates[t] = palloc0(sizeof(ExprState *) * Max(xc->nindexes[t], 1));
		i = 0;
		foreach(lc, indexoids)
		{
			Relation	index = index_open(lfirst_oid(lc), RowExclusiveLock);
			IndexInfo  *ii = BuildIndexInfo(index);

			/* as FormIndexDatum and ExecInsertIndexTuples prepare them */
			if (ii->ii_Expressions != NIL)
				xc->exprstates[t][i] = ExecPrepareExprList(ii->ii_Expressions, xc->prep);
			if (ii->ii_Predicate != NIL)
				xc->predstates[t][i] = ExecPrepareQual(ii->ii_Predicate, xc->prep);
			xc->indexoids[t][i] = lfirst_oid(lc);
			/* as ExecCloseIndices: the table's lock stays */
			index_close(index, RowExclusiveLock);
			i++;
		}
	}
	MemoryContextSwitchTo(oldcxt);
	return xc;
}

/*
 * A result relation for the table at rti, its indexes opened as the
 * executor opens them, with the transaction's prepared states.
 */
static ResultRelInfo *
open_result_rel(EState *estate, int rti)
{
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	int			t = rti - 1;
	int			i;

	ExecInitResultRelation(estate, rri, rti);
	ExecOpenIndices(rri, false);
	if (xcache->checks[t] != NULL)
		OKNO_RRI_CHECK_EXPRS(rri) = xcache->checks[t];
	for (i = 0; i < rri->ri_NumIndices && i < xcache->nindexes[t]; i++)
	{
		IndexInfo  *ii = rri->ri_IndexRelationInfo[i];

		if (RelationGetRelid(rri->ri_IndexRelationDescs[i]) != xcache->indexoids[t][i])
			break;				/* not as prepared: let the executor prepare */
		ii->ii_ExpressionsState = xcache->exprstates[t][i];
		ii->ii_PredicateState = xcache->predstates[t][i];
	}
	return rri;
}

/*
 * Fill a slot for the table at rti, supplied values from args and every
 * other column as the statement would, and store the row.
 */
static TupleTableSlot *
insert_row(EState *estate, ResultRelInfo *rri, int rti, const Datum *args)
{
	int			t = rti - 1;
	TupleTableSlot *slot;
	ExprContext *econtext = GetPerTupleExprContext(estate);
	int			i;

	slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(rri->ri_RelationDesc),
								  &TTSOpsVirtual);
	ExecClearTuple(slot);
	for (i = 0; i < info.natts[t]; i++)
	{
		int			arg = info.argof[t][i];

		if (arg != NOT_SUPPLIED)
		{
			slot->tts_values[i] = args[arg];
			slot->tts_isnull[i] = false;
		}
		else if (xcache->defaults[t][i] != NULL)
			slot->tts_values[i] = ExecEvalExpr(xcache->defaults[t][i], econtext,
											   &slot->tts_isnull[i]);
		else
		{
			slot->tts_values[i] = (Datum) 0;
			slot->tts_isnull[i] = true;
		}
	}
	ExecStoreVirtualTuple(slot);
	ExecSimpleRelationInsert(rri, estate, slot);
	return slot;
}

/*
 * Whether a row with this int4 key is visible in the index's table under
 * snapshot (predicate locks as for an index scan under SERIALIZABLE).
 */
static bool
probe(Relation heap, Relation index, int32 value, Snapshot snapshot)
{
	ScanKeyData skey;
	IndexScanDesc scan;
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	bool		found;

	ScanKeyInit(&skey, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(value));
	skey.sk_collation = index->rd_indcollation[0];
	scan = okno_index_beginscan(heap, index, snapshot, 1);
	index_rescan(scan, &skey, 1, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, slot);
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return found;
}

/*
 * Insert the booking, its key and its event; return the card (allocated
 * in cxt) through *card.  Returns false, having done nothing but take
 * locks, if the statements must do it instead.
 */
bool
okno_insert_direct(int32 actor, const OknoBookingIn *in, text *key,
				   const char *fingerprint, pg_uuid_t *event_id,
				   MemoryContext cxt, Jsonb **card)
{
	static const LOCKMODE lockmodes[RT_COUNT] = {
		RowExclusiveLock, RowExclusiveLock, RowExclusiveLock,
		AccessShareLock, AccessShareLock
	};
	static const OknoRel rels_of[RT_COUNT] = {
		OKNO_REL_BOOKINGS, OKNO_REL_IDEMPOTENCY, OKNO_REL_OUTBOX,
		OKNO_REL_ACTORS, OKNO_REL_RESOURCES
	};
	uint64		generation = okno_cache_generation();
	Oid			relids[RT_COUNT];
	Relation	rels[RT_COUNT];
	Relation	actors_pkey;
	Relation	resources_pkey;
	EState	   *estate;
	ResultRelInfo *rri[RT_WRITTEN];
	TupleTableSlot *slot;
	Datum		args[NUM_ARGS];
	Datum		id;
	bool		isnull;
	int64		booking_id;
	Jsonb	   *result;
	int			i;

	for (i = 0; i < RT_COUNT; i++)
	{
		relids[i] = okno_relid(rels_of[i]);
		if (!OidIsValid(relids[i]))
			return false;
	}
	if (!OidIsValid(okno_relid(OKNO_REL_ACTORS_PKEY)) ||
		!OidIsValid(okno_relid(OKNO_REL_RESOURCES_PKEY)))
		return false;

	/* the statement's locks, taken as its plan takes them */
	for (i = 0; i < RT_COUNT; i++)
		LockRelationOid(relids[i], lockmodes[i]);
	/* the tables changed before we locked them: the statements know better */
	if (okno_cache_generation() != generation)
		return false;

	for (i = 0; i < RT_COUNT; i++)
		rels[i] = table_open(relids[i], NoLock);
	actors_pkey = index_open(okno_relid(OKNO_REL_ACTORS_PKEY), AccessShareLock);
	resources_pkey = index_open(okno_relid(OKNO_REL_RESOURCES_PKEY), AccessShareLock);
	if (info.generation != generation || info.cxt == NULL)
		prepare_info(generation, relids, rels, actors_pkey, resources_pkey);
	if (!info.usable)
	{
		index_close(resources_pkey, NoLock);
		index_close(actors_pkey, NoLock);
		for (i = 0; i < RT_COUNT; i++)
			table_close(rels[i], NoLock);
		return false;
	}
	if (xcache != NULL && xcache->generation != generation)
	{
		MemoryContextDelete(xcache->cxt);
		xcache = NULL;
	}
	if (xcache == NULL)
		xcache = build_xact_cache(generation, rels);

	/* the executor's privilege check, before anything else */
	okno_rt_check(&info.rt);

	/* the statement's snapshot, and its output command id */
	okno_push_statement_snapshot(InvalidSnapshot);

	/* the actor, then the resource, must exist */
	if (!probe(rels[RT_ACTORS - 1], actors_pkey, actor, GetActiveSnapshot()))
		okno_error_actor_missing(actor, false);
	if (!probe(rels[RT_RESOURCES - 1], resources_pkey, in->resource_id, GetActiveSnapshot()))
		okno_error_resource_missing(in->resource_id);
	index_close(resources_pkey, NoLock);
	index_close(actors_pkey, NoLock);
	for (i = 0; i < RT_COUNT; i++)
		table_close(rels[i], NoLock);

	estate = CreateExecutorState();
	okno_rt_init_estate(estate, &info.rt);
	estate->es_snapshot = GetActiveSnapshot();
	estate->es_output_cid = GetCurrentCommandId(true);

	AfterTriggerBeginQuery();

	for (i = 0; i < RT_WRITTEN; i++)
		rri[i] = open_result_rel(estate, i + 1);

	args[ARG_BOOKING_RESOURCE] = Int32GetDatum(in->resource_id);
	args[ARG_BOOKING_ACTOR] = Int32GetDatum(actor);
	args[ARG_BOOKING_STARTS] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->starts_us));
	args[ARG_BOOKING_ENDS] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->ends_us));
	slot = insert_row(estate, rri[RT_BOOKINGS - 1], RT_BOOKINGS, args);
	id = slot_getattr(slot, info.booking_id, &isnull);
	if (isnull)
		elog(ERROR, "booking stored without an id");
	booking_id = info.booking_id_type == INT8OID ? DatumGetInt64(id) : DatumGetInt32(id);

	result = okno_booking_card(booking_id, actor, in, "confirmed");
	args[ARG_KEY_ACTOR] = Int32GetDatum(actor);
	args[ARG_KEY_KEY] = PointerGetDatum(key);
	args[ARG_KEY_FINGERPRINT] = PointerGetDatum(cstring_to_text(fingerprint));
	args[ARG_KEY_VERSION] = Int16GetDatum(OKNO_FINGERPRINT_VERSION);
	args[ARG_KEY_RESPONSE] = JsonbPGetDatum(result);
	(void) insert_row(estate, rri[RT_IDEMPOTENCY - 1], RT_IDEMPOTENCY, args);

	args[ARG_EVENT_ID] = UUIDPGetDatum(event_id);
	args[ARG_EVENT_KIND] = PointerGetDatum(cstring_to_text(OKNO_EVENT_BOOKING_CREATED));
	args[ARG_EVENT_PAYLOAD] = JsonbPGetDatum(okno_event_payload(booking_id));
	(void) insert_row(estate, rri[RT_OUTBOX - 1], RT_OUTBOX, args);

	/* the foreign-key checks, as at the end of the statement */
	AfterTriggerEndQuery(estate);

	ExecResetTupleTable(estate->es_tupleTable, false);
	ExecCloseResultRelations(estate);
	ExecCloseRangeTableRelations(estate);
	FreeExecutorState(estate);
	PopActiveSnapshot();

	/* what follows in this statement sees the new rows */
	CommandCounterIncrement();

	*card = (Jsonb *) MemoryContextAlloc(cxt, VARSIZE(result));
	memcpy(*card, result, VARSIZE(result));
	return true;
}
