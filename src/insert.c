/*-------------------------------------------------------------------------
 *
 * insert.c
 *	  The booking, its key and its event, inserted without a plan.
 *
 * okno_insert_booking's statement (store.c) costs an executor start-up
 * and shut-down per call.  This file does its work the way logical
 * replication's apply worker applies an INSERT: an EState with the three
 * tables as result relations, their indexes opened, each row formed in C
 * and stored with ExecConstraints, table_tuple_insert,
 * ExecInsertIndexTuples (unique and exclusion checks) and
 * ExecARInsertTriggers, between AfterTriggerBeginQuery and
 * AfterTriggerEndQuery so that the foreign-key checks run as they do at
 * the end of the statement.
 *
 * What the statement does is kept:
 *   - its relation locks, and its privilege check (ExecCheckRTPerms on the
 *     range table the statement would have, before anything else);
 *   - its snapshot: a CommandCounterIncrement and the snapshot of a
 *     non-read-only SPI statement, under which the actor and then the
 *     resource must exist (direct probes of their primary keys) before
 *     anything is inserted, so actor_missing and resource_missing still
 *     come before slot_busy and no identity value is used up;
 *   - its values: the columns the statement leaves out get their defaults,
 *     read from the catalogue once (an identity column its sequence's
 *     nextval, now() the transaction start, a constant default its value);
 *   - the order: booking, key, event, then the AFTER triggers.
 *
 * The prepared CHECK expressions of the three tables and the expression and
 * predicate states of their indexes are kept for the rest of the
 * transaction, in a context under TopTransactionContext: the first call of
 * a transaction prepares them, the others reuse them.  They hold no
 * resources and point into no relcache entry (the IndexInfos, whose access
 * method state may, are built on every call), so a transaction's end, or
 * its subtransaction's abort, needs only to forget them; a change to any of
 * the tables (okno.c's cache generation) makes the next call prepare them
 * anew.
 *
 * Whenever the direct path could differ from the statement it is not
 * used and the caller runs the statement: row-level security on any of
 * the five tables, a trigger other than a foreign key's on the three it
 * writes, a default other than a constant, now() or an identity, a column
 * type other than the install script's, a generated column, an unexpected
 * primary key on actors or resources.
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
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "rewrite/rewriteHandler.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "okno.h"
#include "errors.h"

/* The range table of the statement, in this order (range table indexes). */
#define RT_BOOKINGS		1
#define RT_IDEMPOTENCY	2
#define RT_OUTBOX		3
#define RT_ACTORS		4
#define RT_RESOURCES	5
#define RT_COUNT		5

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
	Oid			typid;
	int32		typmod;
} SuppliedColumn;

/* in the order of InsertArg; types and typmods as the install script has */
static const SuppliedColumn supplied[NUM_ARGS] = {
	{RT_BOOKINGS, "resource_id", INT4OID, -1},
	{RT_BOOKINGS, "actor_id", INT4OID, -1},
	{RT_BOOKINGS, "starts_at", TIMESTAMPTZOID, -1},
	{RT_BOOKINGS, "ends_at", TIMESTAMPTZOID, -1},
	{RT_IDEMPOTENCY, "actor_id", INT4OID, -1},
	{RT_IDEMPOTENCY, "request_key", VARCHAROID, 80 + VARHDRSZ},
	{RT_IDEMPOTENCY, "fingerprint", BPCHAROID, OKNO_FINGERPRINT_LEN + VARHDRSZ},
	{RT_IDEMPOTENCY, "fingerprint_version", INT2OID, -1},
	{RT_IDEMPOTENCY, "response_body", JSONBOID, -1},
	{RT_OUTBOX, "id", UUIDOID, -1},
	{RT_OUTBOX, "kind", VARCHAROID, 40 + VARHDRSZ},
	{RT_OUTBOX, "payload", JSONBOID, -1},
};

/* Where the value of a column comes from. */
typedef enum ColumnSource
{
	COL_NULL,					/* no default, or a dropped column */
	COL_CONST,					/* a constant default */
	COL_NOW,					/* DEFAULT now() */
	COL_IDENTITY,				/* nextval of the identity sequence */
	COL_ARG						/* supplied: args[arg] */
} ColumnSource;

typedef struct ColumnFill
{
	ColumnSource source;
	InsertArg	arg;
	Datum		value;			/* COL_CONST, in the info's context */
	bool		isnull;			/* COL_CONST */
} ColumnFill;

/*
 * What the direct path knows about the tables, derived under their locks
 * and derived again when okno.c's cache changes.
 */
typedef struct DirectInfo
{
	uint64		generation;
	bool		usable;
	MemoryContext cxt;
	Oid			relids[RT_COUNT];
	Oid			actors_pkey;
	Oid			resources_pkey;
	AttrNumber	actors_id;
	AttrNumber	resources_id;
	AttrNumber	booking_id;		/* bookings.id, the identity column */
	Oid			booking_seq;
	int			natts[RT_COUNT];
	ColumnFill *fill[RT_COUNT];
	List	   *rtable;
} DirectInfo;

static DirectInfo info = {0};

/* What the rest of the transaction reuses, for the three tables. */
typedef struct XactCache
{
	uint64		generation;
	MemoryContext cxt;			/* under TopTransactionContext */
	EState	   *prep;			/* its es_query_cxt holds the states */
	int			nchecks[3];
	ExprState **checks[3];		/* as ExecRelCheck prepares them */
	int			nindexes[3];
	Oid		   *indexoids[3];	/* as ExecOpenIndices lists them */
	List	  **exprstates[3];	/* per index, its ii_ExpressionsState */
	ExprState **predstates[3];	/* per index, its ii_PredicateState */
} XactCache;

static XactCache *xcache = NULL;

/*
 * How a column that the statement leaves out gets its value; false if
 * the direct path cannot give it the very value the statement would.
 */
static bool
classify_default(Relation rel, Form_pg_attribute att, ColumnFill *fill)
{
	Node	   *expr;

	fill->source = COL_NULL;
	fill->isnull = true;
	if (att->attisdropped)
		return true;
	if (att->attgenerated != '\0')
		return false;

	expr = build_column_default(rel, att->attnum);
	if (expr == NULL)
		return true;

	if (IsA(expr, NextValueExpr))
	{
		NextValueExpr *nve = (NextValueExpr *) expr;

		if (att->attidentity == '\0' || nve->typeId != INT8OID ||
			att->atttypid != INT8OID)
			return false;
		fill->source = COL_IDENTITY;
		info.booking_seq = nve->seqid;
		return true;
	}

	expr = eval_const_expressions(NULL, expr);
	if (IsA(expr, Const))
	{
		Const	   *c = (Const *) expr;

		if (c->consttype != att->atttypid)
			return false;
		fill->source = COL_CONST;
		fill->isnull = c->constisnull;
		fill->value = c->constisnull ? (Datum) 0 :
			datumCopy(c->constvalue, att->attbyval, att->attlen);
		return true;
	}
	if (IsA(expr, FuncExpr) &&
		((FuncExpr *) expr)->funcid == F_NOW &&
		((FuncExpr *) expr)->args == NIL &&
		att->atttypid == TIMESTAMPTZOID)
	{
		fill->source = COL_NOW;
		return true;
	}
	return false;
}

/*
 * Fill in info for the tables, whose relations are locked; false if the
 * direct path cannot be used with them.
 */
static bool
prepare_table(int rti, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	ColumnFill *fill;
	int			i;

	fill = palloc0(sizeof(ColumnFill) * desc->natts);
	info.fill[rti - 1] = fill;
	info.natts[rti - 1] = desc->natts;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		int			a;
		bool		found = false;

		for (a = 0; a < NUM_ARGS; a++)
		{
			if (supplied[a].rti == rti && !att->attisdropped &&
				strcmp(NameStr(att->attname), supplied[a].name) == 0)
			{
				if (att->atttypid != supplied[a].typid ||
					att->atttypmod != supplied[a].typmod)
					return false;
				fill[i].source = COL_ARG;
				fill[i].arg = (InsertArg) a;
				found = true;
				break;
			}
		}
		if (found)
			continue;
		if (!classify_default(rel, att, &fill[i]))
			return false;
		if (fill[i].source == COL_IDENTITY)
		{
			if (rti != RT_BOOKINGS || strcmp(NameStr(att->attname), "id") != 0)
				return false;
			info.booking_id = att->attnum;
		}
	}
	return true;
}

static AttrNumber *
attnums(Oid relid, int n, const char *const *names)
{
	AttrNumber *result = palloc(sizeof(AttrNumber) * (n + 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		result[i] = okno_attnum(relid, names[i]);
		if (result[i] == InvalidAttrNumber)
			return NULL;
	}
	result[n] = InvalidAttrNumber;
	return result;
}

/*
 * Derive info for this generation; the five tables are locked.
 */
static void
prepare_info(uint64 generation, Relation *rels)
{
	static const char *const booking_ins[] = {"resource_id", "actor_id", "starts_at", "ends_at"};
	static const char *const booking_sel[] = {"id"};
	static const char *const key_ins[] = {"actor_id", "request_key", "fingerprint",
	"fingerprint_version", "response_body"};
	static const char *const key_sel[] = {"response_body"};
	static const char *const event_ins[] = {"id", "kind", "payload"};
	static const char *const id_sel[] = {"id"};
	AttrNumber *b_ins,
			   *b_sel,
			   *k_ins,
			   *k_sel,
			   *e_ins,
			   *a_sel,
			   *r_sel;
	MemoryContext oldcxt;
	int			rti;

	if (info.cxt == NULL)
		info.cxt = AllocSetContextCreate(TopMemoryContext, "okno direct insert",
										 ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(info.cxt);
	info.usable = false;
	info.generation = generation;
	info.rtable = NIL;
	info.booking_id = InvalidAttrNumber;
	info.booking_seq = InvalidOid;
	memset(info.fill, 0, sizeof(info.fill));

	oldcxt = MemoryContextSwitchTo(info.cxt);

	for (rti = 1; rti <= RT_COUNT; rti++)
		if (!OidIsValid(info.relids[rti - 1]))
			goto done;

	/* the range table of the statement, with its privileges */
	b_ins = attnums(info.relids[RT_BOOKINGS - 1], lengthof(booking_ins), booking_ins);
	b_sel = attnums(info.relids[RT_BOOKINGS - 1], lengthof(booking_sel), booking_sel);
	k_ins = attnums(info.relids[RT_IDEMPOTENCY - 1], lengthof(key_ins), key_ins);
	k_sel = attnums(info.relids[RT_IDEMPOTENCY - 1], lengthof(key_sel), key_sel);
	e_ins = attnums(info.relids[RT_OUTBOX - 1], lengthof(event_ins), event_ins);
	a_sel = attnums(info.relids[RT_ACTORS - 1], lengthof(id_sel), id_sel);
	r_sel = attnums(info.relids[RT_RESOURCES - 1], lengthof(id_sel), id_sel);
	if (!b_ins || !b_sel || !k_ins || !k_sel || !e_ins || !a_sel || !r_sel)
		goto done;
	info.actors_id = a_sel[0];
	info.resources_id = r_sel[0];
	info.rtable = list_make5(okno_perm_rte(info.relids[RT_BOOKINGS - 1],
										   ACL_INSERT | ACL_SELECT, b_sel, b_ins),
							 okno_perm_rte(info.relids[RT_IDEMPOTENCY - 1],
										   ACL_INSERT | ACL_SELECT, k_sel, k_ins),
							 okno_perm_rte(info.relids[RT_OUTBOX - 1],
										   ACL_INSERT, NULL, e_ins),
							 okno_perm_rte(info.relids[RT_ACTORS - 1],
										   ACL_SELECT, a_sel, NULL),
							 okno_perm_rte(info.relids[RT_RESOURCES - 1],
										   ACL_SELECT, r_sel, NULL));

	/* what goes into each column of the three tables */
	for (rti = RT_BOOKINGS; rti <= RT_OUTBOX; rti++)
		if (!prepare_table(rti, rels[rti - 1]))
			goto done;
	if (info.booking_id == InvalidAttrNumber || !OidIsValid(info.booking_seq))
		goto done;

	info.usable = true;
done:
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Whether the triggers of a table the statement writes are all a foreign
 * key's (those the executor fires here exactly as for the statement).
 */
static bool
triggers_ok(Relation rel)
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
	return !trigdesc->trig_insert_new_table;
}

/*
 * Whether index is the one-column int4 primary key on attno.
 */
static bool
pkey_ok(Relation index, Oid relid, AttrNumber attno)
{
	return okno_index_is(index, relid, 1, &attno) &&
		index->rd_opcintype[0] == INT4OID;
}

/*
 * Whether a row with this int4 key is visible in the index's table under
 * snapshot (predicate locks as for an index scan under SERIALIZABLE).
 */
static bool
probe(Relation heap, Relation index, int32 value, Snapshot snapshot,
	  TupleTableSlot *slot)
{
	ScanKeyData skey;
	IndexScanDesc scan;
	bool		found;

	ScanKeyInit(&skey, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(value));
	skey.sk_collation = index->rd_indcollation[0];
	scan = index_beginscan(heap, index, snapshot, 1, 0);
	index_rescan(scan, &skey, 1, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, slot);
	index_endscan(scan);
	ExecClearTuple(slot);
	return found;
}

/*
 * Fill slot for the table at rti from info and args, and store it.
 */
static void
insert_row(EState *estate, ResultRelInfo *rri, TupleTableSlot *slot, int rti,
		   const Datum *args, TimestampTz now, int64 *identity)
{
	const ColumnFill *fill = info.fill[rti - 1];
	int			natts = info.natts[rti - 1];
	int			i;
	List	   *recheck = NIL;

	ExecClearTuple(slot);
	for (i = 0; i < natts; i++)
	{
		switch (fill[i].source)
		{
			case COL_NULL:
				slot->tts_values[i] = (Datum) 0;
				slot->tts_isnull[i] = true;
				break;
			case COL_CONST:
				slot->tts_values[i] = fill[i].value;
				slot->tts_isnull[i] = fill[i].isnull;
				break;
			case COL_NOW:
				slot->tts_values[i] = TimestampTzGetDatum(now);
				slot->tts_isnull[i] = false;
				break;
			case COL_IDENTITY:
				*identity = nextval_internal(info.booking_seq, false);
				slot->tts_values[i] = Int64GetDatum(*identity);
				slot->tts_isnull[i] = false;
				break;
			case COL_ARG:
				slot->tts_values[i] = args[fill[i].arg];
				slot->tts_isnull[i] = false;
				break;
		}
	}
	ExecStoreVirtualTuple(slot);

	/* as ExecSimpleRelationInsert: no BEFORE triggers, no generated columns */
	if (rri->ri_RelationDesc->rd_att->constr)
		ExecConstraints(rri, slot, estate);
	simple_table_tuple_insert(rri->ri_RelationDesc, slot);
	if (rri->ri_NumIndices > 0)
		recheck = ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL);
	ExecARInsertTriggers(estate, rri, slot, recheck, NULL);
	list_free(recheck);
}

/*
 * Prepare what ExecRelCheck and ExecOpenIndices would prepare for the
 * three tables, for the rest of the transaction.  rels[] are locked.
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

	for (t = 0; t < 3; t++)
	{
		Relation	rel = rels[t];
		TupleConstr *constr = rel->rd_att->constr;
		List	   *indexoids;
		ListCell   *lc;
		int			i;

		xc->nchecks[t] = constr ? constr->num_check : 0;
		if (xc->nchecks[t] > 0)
		{
			xc->checks[t] = palloc(sizeof(ExprState *) * xc->nchecks[t]);
			for (i = 0; i < xc->nchecks[t]; i++)
				xc->checks[t][i] =
					ExecPrepareExpr((Expr *) stringToNode(constr->check[i].ccbin),
									xc->prep);
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
 * ExecOpenIndices, with the transaction's expression and predicate states;
 * and the transaction's CHECK expressions for ExecConstraints.
 */
static void
open_result_rel(ResultRelInfo *rri, int t)
{
	int			n = xcache->nindexes[t];
	int			i;

	if (xcache->nchecks[t] > 0)
		rri->ri_ConstraintExprs = xcache->checks[t];
	if (n == 0)
		return;
	rri->ri_NumIndices = n;
	rri->ri_IndexRelationDescs = palloc(sizeof(Relation) * n);
	rri->ri_IndexRelationInfo = palloc(sizeof(IndexInfo *) * n);
	for (i = 0; i < n; i++)
	{
		Relation	index = index_open(xcache->indexoids[t][i], RowExclusiveLock);
		IndexInfo  *ii = BuildIndexInfo(index);

		ii->ii_ExpressionsState = xcache->exprstates[t][i];
		ii->ii_PredicateState = xcache->predstates[t][i];
		rri->ri_IndexRelationDescs[i] = index;
		rri->ri_IndexRelationInfo[i] = ii;
	}
}

/*
 * At the end of a transaction: its cache went with TopTransactionContext.
 */
void
okno_insert_xact_callback(XactEvent event)
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
 * Insert the booking, its key and its event; return the card (allocated
 * in cxt) through *card.  Returns false, having done nothing but take
 * locks, if the statement must do it instead.
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
	uint64		generation = okno_cache_generation();
	Oid			relids[RT_COUNT];
	Relation	rels[RT_COUNT];
	Relation	actors_pkey;
	Relation	resources_pkey;
	EState	   *estate;
	ResultRelInfo *rri[3];
	TupleTableSlot *slot;
	Datum		args[NUM_ARGS];
	TimestampTz now;
	int64		booking_id = 0;
	Jsonb	   *result;
	bool		ok = true;
	int			i;

	relids[RT_BOOKINGS - 1] = okno_relid(OKNO_REL_BOOKINGS);
	relids[RT_IDEMPOTENCY - 1] = okno_relid(OKNO_REL_IDEMPOTENCY);
	relids[RT_OUTBOX - 1] = okno_relid(OKNO_REL_OUTBOX);
	relids[RT_ACTORS - 1] = okno_relid(OKNO_REL_ACTORS);
	relids[RT_RESOURCES - 1] = okno_relid(OKNO_REL_RESOURCES);
	for (i = 0; i < RT_COUNT; i++)
		if (!OidIsValid(relids[i]))
			return false;
	if (!OidIsValid(okno_relid(OKNO_REL_ACTORS_PKEY)) ||
		!OidIsValid(okno_relid(OKNO_REL_RESOURCES_PKEY)))
		return false;

	/* the statement's locks, taken as its plan takes them */
	for (i = 0; i < RT_COUNT; i++)
		LockRelationOid(relids[i], lockmodes[i]);
	/* the tables changed before we locked them: the statement knows better */
	if (okno_cache_generation() != generation)
		return false;

	for (i = 0; i < RT_COUNT; i++)
	{
		rels[i] = table_open(relids[i], NoLock);
		if (rels[i]->rd_rel->relkind != RELKIND_RELATION ||
			rels[i]->rd_rel->relrowsecurity ||
			rels[i]->rd_rel->relispartition)
			ok = false;
		if (i < RT_ACTORS - 1 &&
			(!triggers_ok(rels[i]) ||
			 (rels[i]->rd_att->constr && rels[i]->rd_att->constr->has_generated_stored)))
			ok = false;
	}
	if (ok && info.generation != generation)
	{
		memcpy(info.relids, relids, sizeof(relids));
		prepare_info(generation, rels);
	}
	actors_pkey = index_open(okno_relid(OKNO_REL_ACTORS_PKEY), AccessShareLock);
	resources_pkey = index_open(okno_relid(OKNO_REL_RESOURCES_PKEY), AccessShareLock);
	if (!ok || !info.usable ||
		!pkey_ok(actors_pkey, relids[RT_ACTORS - 1], info.actors_id) ||
		!pkey_ok(resources_pkey, relids[RT_RESOURCES - 1], info.resources_id))
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
	for (i = 0; i < RT_COUNT; i++)
		table_close(rels[i], NoLock);

	/* the executor's privilege check, before anything else */
	(void) ExecCheckRTPerms(info.rtable, true);

	/* the statement's snapshot, and its output command id */
	okno_push_statement_snapshot(InvalidSnapshot);

	estate = CreateExecutorState();
	ExecInitRangeTable(estate, info.rtable);
	estate->es_snapshot = GetActiveSnapshot();
	estate->es_output_cid = GetCurrentCommandId(true);

	/* the actor, then the resource, must exist */
	slot = ExecInitExtraTupleSlot(estate,
								  RelationGetDescr(ExecGetRangeTableRelation(estate, RT_ACTORS)),
								  table_slot_callbacks(ExecGetRangeTableRelation(estate, RT_ACTORS)));
	if (!probe(ExecGetRangeTableRelation(estate, RT_ACTORS), actors_pkey, actor,
			   estate->es_snapshot, slot))
		okno_error_actor_missing(actor, false);
	slot = ExecInitExtraTupleSlot(estate,
								  RelationGetDescr(ExecGetRangeTableRelation(estate, RT_RESOURCES)),
								  table_slot_callbacks(ExecGetRangeTableRelation(estate, RT_RESOURCES)));
	if (!probe(ExecGetRangeTableRelation(estate, RT_RESOURCES), resources_pkey,
			   in->resource_id, estate->es_snapshot, slot))
		okno_error_resource_missing(in->resource_id);

	AfterTriggerBeginQuery();

	for (i = 0; i < 3; i++)
	{
		rri[i] = makeNode(ResultRelInfo);
		ExecInitResultRelation(estate, rri[i], i + 1);
		open_result_rel(rri[i], i);
	}

	now = GetCurrentTransactionStartTimestamp();
	args[ARG_BOOKING_RESOURCE] = Int32GetDatum(in->resource_id);
	args[ARG_BOOKING_ACTOR] = Int32GetDatum(actor);
	args[ARG_BOOKING_STARTS] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->starts_us));
	args[ARG_BOOKING_ENDS] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->ends_us));

	slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(rri[0]->ri_RelationDesc),
								  &TTSOpsVirtual);
	insert_row(estate, rri[0], slot, RT_BOOKINGS, args, now, &booking_id);

	result = okno_booking_card(booking_id, actor, in, "confirmed");
	args[ARG_KEY_ACTOR] = Int32GetDatum(actor);
	args[ARG_KEY_KEY] = PointerGetDatum(key);
	args[ARG_KEY_FINGERPRINT] = PointerGetDatum(cstring_to_text(fingerprint));
	args[ARG_KEY_VERSION] = Int16GetDatum(OKNO_FINGERPRINT_VERSION);
	args[ARG_KEY_RESPONSE] = JsonbPGetDatum(result);
	slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(rri[1]->ri_RelationDesc),
								  &TTSOpsVirtual);
	insert_row(estate, rri[1], slot, RT_IDEMPOTENCY, args, now, NULL);

	args[ARG_EVENT_ID] = UUIDPGetDatum(event_id);
	args[ARG_EVENT_KIND] = PointerGetDatum(cstring_to_text(OKNO_EVENT_BOOKING_CREATED));
	args[ARG_EVENT_PAYLOAD] = JsonbPGetDatum(okno_event_payload(booking_id));
	slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(rri[2]->ri_RelationDesc),
								  &TTSOpsVirtual);
	insert_row(estate, rri[2], slot, RT_OUTBOX, args, now, NULL);

	/* the foreign-key checks, as at the end of the statement */
	AfterTriggerEndQuery(estate);

	ExecResetTupleTable(estate->es_tupleTable, false);
	ExecCloseResultRelations(estate);
	ExecCloseRangeTableRelations(estate);
	FreeExecutorState(estate);
	index_close(resources_pkey, NoLock);
	index_close(actors_pkey, NoLock);
	PopActiveSnapshot();

	/* what follows in this statement sees the new rows */
	CommandCounterIncrement();

	*card = (Jsonb *) MemoryContextAlloc(cxt, VARSIZE(result));
	memcpy(*card, result, VARSIZE(result));
	return true;
}
