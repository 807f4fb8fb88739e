/*-------------------------------------------------------------------------
 *
 * direct.c
 *	  okno's direct access to a table: the one place above PostgreSQL that
 *	  scans an index or inserts a row without a plan.
 *
 * It is what execReplication.c is to logical replication's apply worker:
 *   - a map of the relations okno reads or writes directly, keyed by relid
 *     (as logical/relation.c keeps its LogicalRepRelMap): each entry holds
 *     the attribute numbers of the columns its caller names, and whether
 *     the unique index it probes is a valid btree on exactly the key
 *     columns, with the equality function of each column's operator class
 *     (as build_replindex_scan_key finds it).  An entry is derived when its
 *     relation is first opened and again after a relcache invalidation of
 *     the table or its index, so a call reads the catalogs only after the
 *     table changed;
 *   - a probe of that index by key, under the snapshot given;
 *   - an executor state for a statement's range table, a result relation
 *     with its indexes opened (their IndexInfos built, or prepared once by
 *     a caller that writes the table many times in a transaction), and the
 *     insert of a row
 *     (ExecSimpleRelationInsert: generated columns, constraints, the row,
 *     its index entries with their unique and exclusion checks, the AFTER
 *     row triggers).
 *
 * The callers keep what the statement they replace would do around that:
 * its locks, its privilege check and its snapshot (relation.c).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/base.h"

static HTAB *direct_map = NULL;

/*
 * A relcache invalidation of a table in the map, or of the index it
 * probes, or of every relation (InvalidOid): derive the entry again when
 * it is next opened (logicalrep_relmap_invalidate_cb's rule).
 */
static void
direct_map_invalidate(Datum arg pg_attribute_unused(), Oid relid)
{
	HASH_SEQ_STATUS status;
	OknoDirectRel *entry;

	if (direct_map == NULL)
		return;
	hash_seq_init(&status, direct_map);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (!OidIsValid(relid) || entry->relid == relid || entry->indexid == relid)
			entry->valid = false;
	}
}

/*
 * Register the map's invalidation callback.
 */
void
okno_direct_init(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(OknoDirectRel);
	direct_map = hash_create("okno direct relations", 16, &ctl,
							 HASH_ELEM | HASH_BLOBS);
	CacheRegisterRelcacheCallback(direct_map_invalidate, (Datum) 0);
}

/*
 * Whether the index is a valid unique btree on exactly the first nkeys
 * columns of cols, in order, each of the operator class input type cols
 * names; if so, note each column's equality function.  The table and the
 * index are locked.
 */
static bool
derive_probe(OknoDirectRel *r, Relation index)
{
	const OknoDirectCols *cols = r->cols;
	int			i;

	if (!r->all_columns || !index->rd_index->indisunique ||
		!okno_index_is(index, r->relid, cols->nkeys, r->attnum))
		return false;
	for (i = 0; i < cols->nkeys; i++)
	{
		Oid			opcintype = index->rd_opcintype[i];
		Oid			op;

		if (opcintype != cols->keytypes[i])
			return false;
		op = get_opfamily_member(index->rd_opfamily[i], opcintype, opcintype,
								 BTEqualStrategyNumber);
		if (!OidIsValid(op))
			return false;
		r->eqproc[i] = get_opcode(op);
		if (!RegProcedureIsValid(r->eqproc[i]))
			return false;
		r->collation[i] = index->rd_indcollation[i];
	}
	return true;
}

/*
 * Derive the columns of r's table that cols names, and the range tables
 * of the statements that read and write the first nchecked of them.
 */
static void
derive_columns(OknoDirectRel *r, const OknoDirectCols *cols)
{
	AttrNumber	checked[OKNO_DIRECT_MAX_COLS + 1];
	MemoryContext oldcxt;
	int			i;

	Assert(cols->ncols <= OKNO_DIRECT_MAX_COLS && cols->nkeys <= OKNO_DIRECT_MAX_KEYS &&
		   cols->nkeys <= cols->ncols && cols->nchecked <= cols->ncols);
	/* assume valid from here: an invalidation while deriving resets it */
	r->valid = true;
	r->probe_valid = false;
	r->cols = cols;
	r->citus = okno_citus_table(r->relid);
	r->all_columns = true;
	for (i = 0; i < cols->ncols; i++)
	{
		r->attnum[i] = okno_attnum(r->relid, cols->names[i]);
		if (r->attnum[i] == InvalidAttrNumber)
			r->all_columns = false;
	}

	if (r->cxt == NULL)
		r->cxt = AllocSetContextCreate(CacheMemoryContext, "okno direct relation",
									   ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(r->cxt);
	r->read_rt.rtable = r->read_rt.perminfos = NIL;
	r->write_rt.rtable = r->write_rt.perminfos = NIL;
	if (!r->all_columns || cols->nchecked == 0)
		return;
	memcpy(checked, r->attnum, sizeof(AttrNumber) * cols->nchecked);
	checked[cols->nchecked] = InvalidAttrNumber;
	oldcxt = MemoryContextSwitchTo(r->cxt);
	okno_rt_add(&r->read_rt, r->relid, ACL_SELECT, checked, NULL);
	okno_rt_add(&r->write_rt, r->relid, ACL_INSERT, NULL, checked);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * The map's entry of the relation relid, for the columns cols names,
 * derived now if it is not yet or the relation changed since.  The
 * columns can be read without a lock (as a statement's parser reads
 * them); a caller that reads or writes the table opens it.
 */
OknoDirectRel *
okno_direct_rel(Oid relid, const OknoDirectCols *cols)
{
	OknoDirectRel *r;
	bool		found;

	r = hash_search(direct_map, &relid, HASH_ENTER, &found);
	if (!found)
	{
		r->valid = false;
		r->cxt = NULL;
		r->rel = NULL;
		r->index = NULL;
	}
	if (!r->valid || r->cols != cols)
		derive_columns(r, cols);
	return r;
}

/*
 * Open the relation relid with lockmode, as the plan of the statement a
 * direct path replaces opens it; returns its entry, derived anew if the
 * relation changed since, with rel set until okno_direct_close.
 */
OknoDirectRel *
okno_direct_open(Oid relid, const OknoDirectCols *cols, LOCKMODE lockmode)
{
	Relation	rel;
	OknoDirectRel *r;

	/* the lock first: taking it processes pending invalidations */
	rel = table_open(relid, lockmode);
	r = okno_direct_rel(relid, cols);
	r->rel = rel;
	r->index = NULL;
	return r;
}

/*
 * Open the unique index indexid of r's open table with AccessShareLock,
 * as a plan that scans it does; returns whether it can be probed by the
 * key (derived when the index, the table or indexid changed).
 */
bool
okno_direct_open_index(OknoDirectRel *r, Oid indexid)
{
	Assert(r->rel != NULL && r->index == NULL);
	r->index = index_open(indexid, AccessShareLock);
	if (!r->valid)
		derive_columns(r, r->cols);
	if (!r->probe_valid || r->indexid != indexid)
	{
		r->indexid = indexid;
		r->probe_valid = true;
		r->probe_fits = derive_probe(r, r->index);
	}
	return r->probe_fits;
}

/*
 * Close what okno_direct_open opened; the locks stay until the end of the
 * transaction.
 */
void
okno_direct_close(OknoDirectRel *r)
{
	if (r->index != NULL)
		index_close(r->index, NoLock);
	table_close(r->rel, NoLock);
	r->index = NULL;
	r->rel = NULL;
}

/*
 * Whether r's open table is one okno may read or write itself: a plain
 * table standing alone (no partition), without row-level security, that
 * Citus does not know (its shell holds no rows: they are in the shards).
 * Any other takes the statements' path, planned by the server (and by
 * Citus).
 */
bool
okno_direct_plain(const OknoDirectRel *r)
{
	Relation	rel = r->rel;

	Assert(rel != NULL);
	return rel->rd_rel->relkind == RELKIND_RELATION && !rel->rd_rel->relispartition &&
		!rel->rd_rel->relrowsecurity && !r->citus;
}

/*
 * Whether a row with the key values (in the index's column order) is
 * visible in r's table under snapshot, reading it into slot if one is
 * given (a slot of the table's own kind, table_slot_create).  The index
 * scan takes the predicate locks an index scan takes under SERIALIZABLE.
 * r is open and its probe_fits.
 */
bool
okno_direct_probe(const OknoDirectRel *r, const Datum *values, Snapshot snapshot,
				  TupleTableSlot *slot)
{
	int			nkeys = r->cols->nkeys;
	ScanKeyData skey[OKNO_DIRECT_MAX_KEYS];
	IndexScanDesc scan;
	TupleTableSlot *own = NULL;
	bool		found;
	int			i;

	Assert(r->index != NULL && r->probe_fits);
	for (i = 0; i < nkeys; i++)
	{
		ScanKeyInit(&skey[i], i + 1, BTEqualStrategyNumber, r->eqproc[i], values[i]);
		skey[i].sk_collation = r->collation[i];
	}
	if (slot == NULL)
		slot = own = table_slot_create(r->rel, NULL);
	scan = okno_index_beginscan(r->rel, r->index, snapshot, nkeys);
	index_rescan(scan, skey, nkeys, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, slot);
	index_endscan(scan);
	if (own != NULL)
		ExecDropSingleTupleTableSlot(own);
	return found;
}

/*
 * An executor state for a statement over rt, run under the active
 * snapshot with the current command id, as the executor's start-up
 * makes it.
 */
EState *
okno_direct_begin(const OknoRangeTable *rt)
{
	EState	   *estate = CreateExecutorState();

	okno_rt_init_estate(estate, rt);
	estate->es_snapshot = GetActiveSnapshot();
	estate->es_output_cid = GetCurrentCommandId(true);
	return estate;
}

/*
 * Build the IndexInfo of each index of rel, in the current memory context,
 * their expression and predicate states prepared in prep, as
 * ExecOpenIndices, FormIndexDatum and ExecInsertIndexTuples prepare them.
 * rel is locked.
 */
void
okno_direct_prepare_indexes(Relation rel, EState *prep, OknoDirectIndexes *ix)
{
	List	   *oids = RelationGetForm(rel)->relhasindex ? RelationGetIndexList(rel) : NIL;
	ListCell   *lc;
	int			i = 0;

	ix->n = list_length(oids);
	ix->oids = palloc(sizeof(Oid) * Max(ix->n, 1));
	ix->infos = palloc(sizeof(IndexInfo *) * Max(ix->n, 1));
	foreach(lc, oids)
	{
		Relation	index = index_open(lfirst_oid(lc), RowExclusiveLock);
		IndexInfo  *ii = BuildIndexInfo(index);

		if (ii->ii_Expressions != NIL)
			ii->ii_ExpressionsState = ExecPrepareExprList(ii->ii_Expressions, prep);
		if (ii->ii_Predicate != NIL)
			ii->ii_PredicateState = ExecPrepareQual(ii->ii_Predicate, prep);
		ix->oids[i] = lfirst_oid(lc);
		ix->infos[i] = ii;
		/* as ExecCloseIndices: the index's lock goes, the table's stays */
		index_close(index, RowExclusiveLock);
		i++;
	}
	list_free(oids);
}

/*
 * Whether the indexes ix lists are still rel's, in its order (a change of
 * the table makes its callers prepare them anew; this is the check that
 * they did).
 */
static bool
indexes_as_prepared(Relation rel, const OknoDirectIndexes *ix)
{
	List	   *oids = RelationGetForm(rel)->relhasindex ? RelationGetIndexList(rel) : NIL;
	bool		same = list_length(oids) == ix->n;
	int			i;

	for (i = 0; same && i < ix->n; i++)
		same = list_nth_oid(oids, i) == ix->oids[i];
	list_free(oids);
	return same;
}

/*
 * The result relation of the range table entry rti, its indexes opened as
 * the executor opens them for an INSERT: ExecOpenIndices, or with the
 * IndexInfos ix prepared (NULL: none).
 */
ResultRelInfo *
okno_direct_result_rel(EState *estate, Index rti, const OknoDirectIndexes *ix)
{
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	int			i;

	ExecInitResultRelation(estate, rri, rti);
	if (ix == NULL || !indexes_as_prepared(rri->ri_RelationDesc, ix))
	{
		ExecOpenIndices(rri, false);
		return rri;
	}
	rri->ri_NumIndices = ix->n;
	rri->ri_IndexRelationDescs = palloc(sizeof(Relation) * Max(ix->n, 1));
	rri->ri_IndexRelationInfo = palloc(sizeof(IndexInfo *) * Max(ix->n, 1));
	for (i = 0; i < ix->n; i++)
	{
		IndexInfo  *ii = palloc(sizeof(IndexInfo));

		/*
		 * The prepared IndexInfo, but for the index AM's own cache: GiST,
		 * GIN and BRIN keep there what points into the index's relcache
		 * entry, valid only while the index is open (as BuildIndexInfo
		 * leaves it: none yet, built in the current context)
		 */
		memcpy(ii, ix->infos[i], sizeof(IndexInfo));
		ii->ii_AmCache = NULL;
		ii->ii_Context = CurrentMemoryContext;
		rri->ri_IndexRelationDescs[i] = index_open(ix->oids[i], RowExclusiveLock);
		rri->ri_IndexRelationInfo[i] = ii;
	}
	return rri;
}

/*
 * An empty row of rri's table: every column NULL until the caller sets
 * it.
 */
TupleTableSlot *
okno_direct_row(EState *estate, ResultRelInfo *rri)
{
	TupleDesc	desc = RelationGetDescr(rri->ri_RelationDesc);
	TupleTableSlot *slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	int			i;

	ExecClearTuple(slot);
	for (i = 0; i < desc->natts; i++)
	{
		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
	}
	return slot;
}

/*
 * Store the row the caller filled in slot.
 */
void
okno_direct_insert(EState *estate, ResultRelInfo *rri, TupleTableSlot *slot)
{
	ExecStoreVirtualTuple(slot);
	ExecSimpleRelationInsert(rri, estate, slot);
}

/*
 * Release the executor state of okno_direct_begin, as the executor's
 * shut-down does.
 */
void
okno_direct_end(EState *estate)
{
	ExecResetTupleTable(estate->es_tupleTable, false);
	ExecCloseResultRelations(estate);
	ExecCloseRangeTableRelations(estate);
	FreeExecutorState(estate);
}
