/*-------------------------------------------------------------------------
 *
 * key_lookup.c
 *	  The stored key of a request: its fingerprint and its response.
 *
 * The key lookup reads idempotency_pkey directly (an index scan and a heap
 * fetch, no executor), with the snapshot, relation locks, privilege check
 * and predicate locks the SPI SELECT it replaces had; that SELECT remains
 * for tables with row-level security on and for anything unexpected in the
 * table or its key.
 *
 * Each SPI statement is prepared once per backend and kept (okno_plan), and
 * every name in it is qualified: okno's schema for its tables,
 * OPERATOR(pg_catalog.=) for comparisons.  All run in the caller's
 * transaction with read_only = false, so under READ COMMITTED each takes a
 * fresh snapshot and sees what committed while we waited for a lock.
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
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "nodes/bitmapset.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"

static OknoPlan lookup_key_plan = {
	.sql =
	"SELECT fingerprint, fingerprint_version, response_body"
	" FROM %1$s.idempotency"
	" WHERE actor_id OPERATOR(pg_catalog.=) $1"
	" AND request_key OPERATOR(pg_catalog.=) $2",
	.nargs = 2,
	.argtypes = {INT4OID, TEXTOID}
};

/*
 * What the direct lookup needs to know about idempotency, derived from the
 * cached OIDs and derived again when schema.c looks them up again.
 */
typedef struct KeyLookupInfo
{
	uint64		generation;
	bool		usable;			/* false: use the SPI statement */
	Oid			relid;
	Oid			indexid;
	AttrNumber	actor_attno;
	AttrNumber	key_attno;
	AttrNumber	fingerprint_attno;
	AttrNumber	version_attno;
	AttrNumber	response_attno;
	MemoryContext cxt;			/* holds rt and store_rt */
	OknoRangeTable rt;			/* the SELECT's */
	OknoRangeTable store_rt;	/* the create's INSERT of the key */
} KeyLookupInfo;

static KeyLookupInfo key_lookup = {0};

static void
key_lookup_prepare(void)
{
	uint64		generation = okno_cache_generation();
	KeyLookupInfo *k = &key_lookup;
	AttrNumber	columns[6];
	MemoryContext oldcxt;

	if (k->generation == generation && generation != 0)
		return;

	if (k->cxt == NULL)
		k->cxt = AllocSetContextCreate(TopMemoryContext, "okno key lookup",
									   ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(k->cxt);
	k->rt.rtable = NIL;
	k->rt.perminfos = NIL;
	k->store_rt.rtable = NIL;
	k->store_rt.perminfos = NIL;
	k->usable = false;
	k->generation = generation;
	k->relid = okno_relid(OKNO_REL_IDEMPOTENCY);
	k->indexid = okno_relid(OKNO_REL_IDEMPOTENCY_PKEY);
	if (!OidIsValid(k->relid) || !OidIsValid(k->indexid))
		return;
	k->actor_attno = okno_attnum(k->relid, "actor_id");
	k->key_attno = okno_attnum(k->relid, "request_key");
	k->fingerprint_attno = okno_attnum(k->relid, "fingerprint");
	k->version_attno = okno_attnum(k->relid, "fingerprint_version");
	k->response_attno = okno_attnum(k->relid, "response_body");
	if (k->actor_attno == InvalidAttrNumber || k->key_attno == InvalidAttrNumber ||
		k->fingerprint_attno == InvalidAttrNumber ||
		k->version_attno == InvalidAttrNumber ||
		k->response_attno == InvalidAttrNumber)
		return;

	/*
	 * the columns the SELECT names, which are those the create's INSERT
	 * names (sql_write.c, direct_tables.c)
	 */
	columns[0] = k->actor_attno;
	columns[1] = k->key_attno;
	columns[2] = k->fingerprint_attno;
	columns[3] = k->version_attno;
	columns[4] = k->response_attno;
	columns[5] = InvalidAttrNumber;
	oldcxt = MemoryContextSwitchTo(k->cxt);
	okno_rt_add(&k->rt, k->relid, ACL_SELECT, columns, NULL);
	okno_rt_add(&k->store_rt, k->relid, ACL_INSERT, NULL, columns);
	MemoryContextSwitchTo(oldcxt);
	k->usable = true;
}

/*
 * The caller's privileges on idempotency, checked before a request's key
 * is locked (store false: SELECT of what the lookup reads) and before its
 * tombstone is read (store true: INSERT of what the create writes), so
 * that a role that may not look the key up, or not store it, learns
 * nothing of it: neither that a request holds it nor that it expired
 * (42501, as the statements would raise it later).
 */
void
okno_check_key_privileges(bool store)
{
	key_lookup_prepare();
	if (key_lookup.usable)
		okno_rt_check(store ? &key_lookup.store_rt : &key_lookup.rt);
}

/*
 * The lookup without the executor; false if it cannot be done so (the
 * caller then runs the SPI statement).
 */
static bool
lookup_key_direct(int32 actor, text *key, Snapshot snapshot,
				  MemoryContext resultcxt, OknoStoredKey *out)
{
	KeyLookupInfo *k = &key_lookup;
	Relation	rel;
	Relation	index;
	AttrNumber	keycols[2];
	ScanKeyData skey[2];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	bool		isnull;
	Datum		d;

	key_lookup_prepare();
	if (!k->usable)
		return false;

	/*
	 * The locks the SELECT's plan takes, then its privilege check.  If the
	 * table changed before we had locked it, the SELECT knows better.
	 */
	rel = table_open(k->relid, AccessShareLock);
	if (okno_cache_generation() != k->generation ||
		rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relrowsecurity)
	{
		table_close(rel, NoLock);
		return false;
	}
	index = index_open(k->indexid, AccessShareLock);
	keycols[0] = k->actor_attno;
	keycols[1] = k->key_attno;
	if (!okno_index_is(index, k->relid, 2, keycols) ||
		index->rd_opcintype[0] != INT4OID || index->rd_opcintype[1] != TEXTOID)
	{
		index_close(index, NoLock);
		table_close(rel, NoLock);
		return false;
	}
	okno_rt_check(&k->rt);

	okno_push_statement_snapshot(snapshot);

	ScanKeyInit(&skey[0], 1, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(actor));
	skey[0].sk_collation = index->rd_indcollation[0];
	ScanKeyInit(&skey[1], 2, BTEqualStrategyNumber, F_TEXTEQ,
				PointerGetDatum(key));
	skey[1].sk_collation = index->rd_indcollation[1];

	slot = table_slot_create(rel, NULL);
	scan = okno_index_beginscan(rel, index, GetActiveSnapshot(), 2);
	index_rescan(scan, skey, 2, NULL, 0);

	out->found = index_getnext_slot(scan, ForwardScanDirection, slot);
	if (out->found)
	{
		MemoryContext oldcxt;

		d = slot_getattr(slot, k->fingerprint_attno, &isnull);
		if (isnull)
			out->fingerprint[0] = '\0';
		else
		{
			char	   *fp = TextDatumGetCString(d);

			strlcpy(out->fingerprint, fp, sizeof(out->fingerprint));
			pfree(fp);
		}

		d = slot_getattr(slot, k->version_attno, &isnull);
		out->fingerprint_version = isnull ? 0 : DatumGetInt16(d);

		d = slot_getattr(slot, k->response_attno, &isnull);
		if (isnull)
			elog(ERROR, "idempotency row for actor %d has a null response_body", actor);
		oldcxt = MemoryContextSwitchTo(resultcxt);
		out->response = DatumGetJsonbPCopy(d);
		MemoryContextSwitchTo(oldcxt);
	}

	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	PopActiveSnapshot();
	index_close(index, NoLock);
	table_close(rel, NoLock);
	return true;
}

/*
 * Look up (actor, key).  With snapshot = InvalidSnapshot the lookup uses
 * the transaction's own snapshot rules; otherwise the one given.  The
 * stored response is copied into resultcxt.
 */
void
okno_lookup_key(int32 actor, text *key, Snapshot snapshot,
				MemoryContext resultcxt, OknoStoredKey *out)
{
	Datum		values[2];
	int			rc;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		d;
	MemoryContext oldcxt;
	char	   *fp;

	if (lookup_key_direct(actor, key, snapshot, resultcxt, out))
		return;

	values[0] = Int32GetDatum(actor);
	values[1] = PointerGetDatum(key);

	if (snapshot == InvalidSnapshot)
		rc = SPI_execute_plan(okno_plan(&lookup_key_plan), values, NULL, false, 1);
	else
		rc = SPI_execute_snapshot(okno_plan(&lookup_key_plan), values, NULL,
								  snapshot, InvalidSnapshot, true, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "idempotency lookup");

	out->found = (SPI_processed > 0);
	if (!out->found)
		return;

	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;

	fp = SPI_getvalue(tup, desc, 1);
	strlcpy(out->fingerprint, fp ? fp : "", sizeof(out->fingerprint));

	d = SPI_getbinval(tup, desc, 2, &isnull);
	out->fingerprint_version = isnull ? 0 : DatumGetInt16(d);

	d = SPI_getbinval(tup, desc, 3, &isnull);
	if (isnull)
		elog(ERROR, "idempotency row for actor %d has a null response_body", actor);
	oldcxt = MemoryContextSwitchTo(resultcxt);
	out->response = DatumGetJsonbPCopy(d);
	MemoryContextSwitchTo(oldcxt);
}
