/*-------------------------------------------------------------------------
 *
 * key_table.c
 *	  okno's table of operations' keys, okno_key: a key's lookup, and the
 *	  store of its fingerprint and response.
 *
 *	  okno_key (operation, scope, request_key) primary key, fingerprint
 *	  bytea (the SHA-256 of the request's RFC 8785 form), response jsonb,
 *	  created_at timestamptz (when the key was first used: the transaction's
 *	  start, as now()).
 *
 * The table is okno's own (okno 0.7.0), so both are written directly, the
 * way key_lookup.c reads a booking's key and the apply worker inserts a
 * row: an index scan of okno_key_pkey and ExecSimpleRelationInsert
 * (constraints, the row, its index entries with the unique check), with
 * the locks, privilege check and snapshot of the statements they replace.
 * The caller needs SELECT on the columns it reads and INSERT on those it
 * writes, as those statements would (the role that installed okno has
 * them, with the grant option).  okno's table has no triggers, rules or
 * row-level security (nobody but a superuser could add them); a table that
 * has any is refused rather than written around them.
 *
 * Neither needs the application's five tables: an operation's keys work in
 * a database that has none of them.
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
#include "access/xact.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/base.h"
#include "keys/keys.h"

/* okno_key's columns, in the order okno names them */
typedef enum KeyColumn
{
	COL_OPERATION,
	COL_SCOPE,
	COL_KEY,
	COL_FINGERPRINT,
	COL_RESPONSE,
	COL_CREATED_AT,
	NUM_COLS
} KeyColumn;

static const char *const column_names[NUM_COLS] = {
	"operation", "scope", "request_key", "fingerprint", "response", "created_at"
};

/*
 * What the lookup and the insert know about okno_key, derived again when
 * its OID changes (DROP and CREATE EXTENSION).
 */
typedef struct KeyTableInfo
{
	Oid			relid;			/* InvalidOid: not derived yet */
	Oid			indexid;
	AttrNumber	attno[NUM_COLS];
	MemoryContext cxt;			/* holds the range tables */
	OknoRangeTable select_rt;	/* the lookup's SELECT */
	OknoRangeTable insert_rt;	/* the store's INSERT */
} KeyTableInfo;

static KeyTableInfo key_table = {0};

/*
 * okno_key's OIDs, attribute numbers and range tables; an error where the
 * table does not exist (a database not yet updated to okno 0.7.0).
 */
static const KeyTableInfo *
key_table_info(void)
{
	KeyTableInfo *k = &key_table;
	Oid			relid = okno_relid_by_name(OKNO_KEY_TABLE);
	AttrNumber	selected[NUM_COLS];
	AttrNumber	inserted[NUM_COLS];
	MemoryContext oldcxt;
	int			i;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("okno's table \"%s\" does not exist", OKNO_KEY_TABLE),
				 errhint("Update okno to its current version with ALTER EXTENSION okno UPDATE.")));
	if (relid == k->relid)
		return k;

	if (k->cxt == NULL)
		k->cxt = AllocSetContextCreate(TopMemoryContext, "okno key table",
									   ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(k->cxt);
	k->relid = InvalidOid;
	k->indexid = okno_relid_by_name(OKNO_KEY_INDEX);
	if (!OidIsValid(k->indexid))
		elog(ERROR, "okno's index \"%s\" is missing", OKNO_KEY_INDEX);
	for (i = 0; i < NUM_COLS; i++)
	{
		k->attno[i] = okno_attnum(relid, column_names[i]);
		if (k->attno[i] == InvalidAttrNumber)
			elog(ERROR, "okno's table \"%s\" has no column \"%s\"",
				 OKNO_KEY_TABLE, column_names[i]);
	}

	/*
	 * The SELECT reads, and the INSERT names, every column but created_at,
	 * which the INSERT leaves to its default (now(), written here as the
	 * transaction's start)
	 */
	for (i = 0; i < COL_CREATED_AT; i++)
		selected[i] = inserted[i] = k->attno[i];
	selected[COL_CREATED_AT] = inserted[COL_CREATED_AT] = InvalidAttrNumber;

	oldcxt = MemoryContextSwitchTo(k->cxt);
	k->select_rt.rtable = NIL;
	k->select_rt.perminfos = NIL;
	okno_rt_add(&k->select_rt, relid, ACL_SELECT, selected, NULL);
	k->insert_rt.rtable = NIL;
	k->insert_rt.perminfos = NIL;
	okno_rt_add(&k->insert_rt, relid, ACL_INSERT, NULL, inserted);
	MemoryContextSwitchTo(oldcxt);
	k->relid = relid;
	return k;
}

/*
 * The caller's privileges on okno_key, checked before a request's key is
 * locked (store false: SELECT of what the lookup reads) and before its
 * tombstone is read (store true: INSERT of what the store writes), so that
 * a role that may not look the key up, or not store it, learns nothing of
 * it: neither that a request holds it nor that it expired (42501).
 */
void
okno_op_key_check_privileges(bool store)
{
	const KeyTableInfo *k = key_table_info();

	okno_rt_check(store ? &k->insert_rt : &k->select_rt);
}

/* refuse a table that a superuser gave triggers, rules or row security */
static void
check_plain(Relation rel)
{
	if (rel->rd_rel->relkind != RELKIND_RELATION ||
		rel->trigdesc != NULL || rel->rd_rules != NULL ||
		rel->rd_rel->relrowsecurity)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("okno's table \"%s.%s\" has triggers, rules or row-level security",
						okno_schema_name(), RelationGetRelationName(rel)),
				 errdetail("okno writes its own tables directly and does not run code of other roles on them."),
				 errhint("Drop the triggers, rules or policies of okno's table.")));
}

static Datum
text_datum(const char *s)
{
	return PointerGetDatum(cstring_to_text(s));
}

/*
 * Look up the key ref names (an operation's) in snapshot, or with
 * InvalidSnapshot in the snapshot a statement would take now (a new one
 * under READ COMMITTED); the response is copied into resultcxt.
 */
void
okno_op_key_lookup(const OknoKeyRef *ref, Snapshot snapshot,
				   MemoryContext resultcxt, OknoOpKey *out)
{
	const KeyTableInfo *k = key_table_info();
	Relation	rel;
	Relation	index;
	ScanKeyData skey[3];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	int			i;

	Assert(ref->operation != NULL);

	rel = table_open(k->relid, AccessShareLock);
	check_plain(rel);
	index = index_open(k->indexid, AccessShareLock);
	if (!okno_index_is(index, k->relid, 3, k->attno))
		elog(ERROR, "okno's index \"%s\" is not a btree on the key", OKNO_KEY_INDEX);
	okno_rt_check(&k->select_rt);

	okno_push_statement_snapshot(snapshot);

	ScanKeyInit(&skey[0], 1, BTEqualStrategyNumber, F_TEXTEQ, text_datum(ref->operation));
	ScanKeyInit(&skey[1], 2, BTEqualStrategyNumber, F_TEXTEQ, text_datum(ref->scope));
	ScanKeyInit(&skey[2], 3, BTEqualStrategyNumber, F_TEXTEQ, text_datum(ref->key));
	for (i = 0; i < 3; i++)
		skey[i].sk_collation = index->rd_indcollation[i];

	slot = table_slot_create(rel, NULL);
	scan = okno_index_beginscan(rel, index, GetActiveSnapshot(), 3);
	index_rescan(scan, skey, 3, NULL, 0);
	out->found = index_getnext_slot(scan, ForwardScanDirection, slot);
	if (out->found)
	{
		bool		isnull;
		Datum		d;
		bytea	   *fp;
		MemoryContext oldcxt;

		d = slot_getattr(slot, k->attno[COL_FINGERPRINT], &isnull);
		fp = isnull ? NULL : DatumGetByteaPP(d);
		if (fp == NULL || VARSIZE_ANY_EXHDR(fp) != OKNO_HASH_LEN)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("idempotency key \"%s\" of %s has a malformed fingerprint",
							ref->key, okno_key_owner(ref)),
					 errdetail("A fingerprint is the 32 bytes of a SHA-256 digest.")));
		memcpy(out->fingerprint, VARDATA_ANY(fp), OKNO_HASH_LEN);

		d = slot_getattr(slot, k->attno[COL_RESPONSE], &isnull);
		if (isnull)
			elog(ERROR, "okno_key row of %s has a null response", okno_key_owner(ref));
		oldcxt = MemoryContextSwitchTo(resultcxt);
		out->response = DatumGetJsonbPCopy(d);
		MemoryContextSwitchTo(oldcxt);
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	PopActiveSnapshot();
	index_close(index, NoLock);
	table_close(rel, NoLock);
}

/*
 * Store the key ref names with its fingerprint and response, as an INSERT
 * statement would; what follows in the transaction sees the row.
 */
void
okno_op_key_insert(const OknoKeyRef *ref, const uint8 fingerprint[OKNO_HASH_LEN],
				   Jsonb *response)
{
	const KeyTableInfo *k = key_table_info();
	Relation	rel;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	bytea	   *fp;
	TupleDesc	desc;
	int			i;

	rel = table_open(k->relid, RowExclusiveLock);
	check_plain(rel);
	okno_rt_check(&k->insert_rt);

	fp = palloc(VARHDRSZ + OKNO_HASH_LEN);
	SET_VARSIZE(fp, VARHDRSZ + OKNO_HASH_LEN);
	memcpy(VARDATA(fp), fingerprint, OKNO_HASH_LEN);

	okno_push_statement_snapshot(InvalidSnapshot);
	estate = CreateExecutorState();
	okno_rt_init_estate(estate, &k->insert_rt);
	estate->es_snapshot = GetActiveSnapshot();
	estate->es_output_cid = GetCurrentCommandId(true);

	rri = makeNode(ResultRelInfo);
	ExecInitResultRelation(estate, rri, 1);
	ExecOpenIndices(rri, false);

	desc = RelationGetDescr(rel);
	slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	ExecClearTuple(slot);
	for (i = 0; i < desc->natts; i++)
	{
		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
	}
#define SET_COL(col, value) \
	do { \
		slot->tts_values[k->attno[col] - 1] = (value); \
		slot->tts_isnull[k->attno[col] - 1] = false; \
	} while (0)
	SET_COL(COL_OPERATION, text_datum(ref->operation));
	SET_COL(COL_SCOPE, text_datum(ref->scope));
	SET_COL(COL_KEY, text_datum(ref->key));
	SET_COL(COL_FINGERPRINT, PointerGetDatum(fp));
	SET_COL(COL_RESPONSE, JsonbPGetDatum(response));
	SET_COL(COL_CREATED_AT, TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()));
#undef SET_COL
	ExecStoreVirtualTuple(slot);
	ExecSimpleRelationInsert(rri, estate, slot);

	ExecResetTupleTable(estate->es_tupleTable, false);
	ExecCloseResultRelations(estate);
	ExecCloseRangeTableRelations(estate);
	FreeExecutorState(estate);
	PopActiveSnapshot();
	table_close(rel, NoLock);

	/* what follows in this statement sees the new row */
	CommandCounterIncrement();
}
