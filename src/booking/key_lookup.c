/*-------------------------------------------------------------------------
 *
 * key_lookup.c
 *	  Bookings' store of keys, the course's idempotency, for the contract
 *	  of a key (keys/contract.c): the privilege check, the stored key of a
 *	  request (its fingerprint and its response), and its comparison with
 *	  the request in the fingerprint version it was stored under.
 *
 * The key lookup probes idempotency_pkey directly (base/direct.c: an index
 * scan and a heap fetch, no executor), with the snapshot, relation locks,
 * privilege check and predicate locks of an SPI SELECT of the key; that
 * SELECT is run instead for tables with row-level security on, a table
 * Citus distributes (its shell is empty) and anything unexpected in the
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

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

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
 * idempotency's columns that a booking's key is looked up and stored by:
 * the key, then what the lookup reads and the create writes (the SELECT
 * above and sql_write.c's INSERT name these five).
 */
const OknoDirectCols okno_idempotency_cols = {
	.ncols = 5,
	.nkeys = 2,
	.nchecked = 5,
	.names = {"actor_id", "request_key", "fingerprint", "fingerprint_version", "response_body"},
	.keytypes = {INT4OID, TEXTOID}
};

/* fingerprint, fingerprint_version, response_body: the columns read */
#define COL_STORED	2

/*
 * The caller's privileges on idempotency, checked before a request's key
 * is locked (store false: SELECT of what the lookup reads) and before its
 * tombstone is read (store true: INSERT of what the create writes), so
 * that a role that may not look the key up, or not store it, learns
 * nothing of it: neither that a request holds it nor that it expired
 * (42501, as the statements would raise it later).
 */
static bool
check_key_privileges(bool store, bool raise)
{
	Oid			relid = okno_relid(OKNO_REL_IDEMPOTENCY);
	const OknoDirectRel *r;
	const OknoRangeTable *rt;

	if (!OidIsValid(relid))
		return true;
	r = okno_direct_rel(relid, &okno_idempotency_cols);
	if (!r->all_columns)
		return true;
	rt = store ? &r->write_rt : &r->read_rt;
	return okno_rt_check(rt, raise);
}

/*
 * Copy a stored key into out (the response into resultcxt), from its
 * fingerprint, fingerprint_version and response_body in values and nulls.
 */
static void
read_stored_key(const Datum *values, const bool *nulls, int32 actor,
				MemoryContext resultcxt, OknoStoredKey *out)
{
	MemoryContext oldcxt;

	if (nulls[0])
		out->fingerprint[0] = '\0';
	else
	{
		char	   *fp = TextDatumGetCString(values[0]);

		strlcpy(out->fingerprint, fp, sizeof(out->fingerprint));
		pfree(fp);
	}
	out->fingerprint_version = nulls[1] ? 0 : DatumGetInt16(values[1]);
	if (nulls[2])
		elog(ERROR, "idempotency row for actor %d has a null response_body", actor);
	oldcxt = MemoryContextSwitchTo(resultcxt);
	out->response = DatumGetJsonbPCopy(values[2]);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * The lookup without the executor; false if it cannot be done so (the
 * caller then runs the SPI statement).
 */
static bool
lookup_key_direct(int32 actor, text *key, Snapshot snapshot,
				  MemoryContext resultcxt, OknoStoredKey *out)
{
	uint64		generation = okno_cache_generation();
	Oid			relid = okno_relid(OKNO_REL_IDEMPOTENCY);
	Oid			indexid = okno_relid(OKNO_REL_IDEMPOTENCY_PKEY);
	OknoDirectRel *r;
	Relation	rel;
	Datum		values[2];
	TupleTableSlot *slot;

	if (!OidIsValid(relid) || !OidIsValid(indexid))
		return false;

	/*
	 * The locks the SELECT's plan takes, then its privilege check.  If the
	 * table changed before we had locked it, the SELECT knows better.
	 */
	r = okno_direct_open(relid, &okno_idempotency_cols, AccessShareLock);
	rel = r->rel;
	if (okno_cache_generation() != generation || !r->all_columns ||
		!okno_direct_plain(r) || !okno_direct_open_index(r, indexid))
	{
		okno_direct_close(r);
		return false;
	}
	(void) okno_rt_check(&r->read_rt, true);

	okno_push_statement_snapshot(snapshot);
	values[0] = Int32GetDatum(actor);
	values[1] = PointerGetDatum(key);
	slot = table_slot_create(rel, NULL);
	out->found = okno_direct_probe(r, values, GetActiveSnapshot(), slot);
	if (out->found)
	{
		Datum		stored[3];
		bool		nulls[3];
		int			i;

		for (i = 0; i < 3; i++)
			stored[i] = slot_getattr(slot, r->attnum[COL_STORED + i], &nulls[i]);
		read_stored_key(stored, nulls, actor, resultcxt, out);
	}
	ExecDropSingleTupleTableSlot(slot);
	PopActiveSnapshot();
	okno_direct_close(r);
	return true;
}

/*
 * Look up (actor, key).  With snapshot = InvalidSnapshot the lookup uses
 * the transaction's own snapshot rules; otherwise the one given.  The
 * stored response is copied into resultcxt.
 */
static void
lookup_key(int32 actor, text *key, Snapshot snapshot,
		   MemoryContext resultcxt, OknoStoredKey *out)
{
	Datum		values[3];
	bool		nulls[3];
	int			rc;
	int			i;

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

	for (i = 0; i < 3; i++)
		values[i] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1,
								  &nulls[i]);
	read_stored_key(values, nulls, actor, resultcxt, out);
}

/* the store's lookup: the key of an OknoBookingRequest */
static void
lookup(const OknoKeyRef *ref, const void *request, Snapshot snapshot,
	   MemoryContext cxt, OknoStoredKey *out)
{
	lookup_key(ref->actor, ((const OknoBookingRequest *) request)->key, snapshot, cxt, out);
}

/*
 * Whether stored is the key of request: their fingerprints compared in the
 * version the stored one was computed in (a version this okno does not
 * compute is corrupt data).
 */
static bool
same_request(const OknoKeyRef *ref, const OknoStoredKey *stored, const void *request)
{
	const OknoBookingRequest *req = request;
	char		theirs[OKNO_FINGERPRINT_LEN + 1];
	const char *compare = req->fingerprint;

	if (!okno_fingerprint_known(stored->fingerprint_version))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idempotency key \"%s\" of actor %d has unsupported fingerprint version %d",
						ref->key, ref->actor, stored->fingerprint_version),
				 errdetail("This version of okno computes fingerprint versions %d (the course's) and %d only.",
						   OKNO_FINGERPRINT_COURSE, OKNO_FINGERPRINT_VERSION)));
	if (stored->fingerprint_version != OKNO_FINGERPRINT_VERSION)
	{
		okno_fingerprint_hex(req->in, stored->fingerprint_version, theirs);
		compare = theirs;
	}
	return strcmp(stored->fingerprint, compare) == 0;
}

StaticAssertDecl(sizeof(((OknoStoredKey *) 0)->fingerprint) >= OKNO_FINGERPRINT_LEN + 1,
				 "a stored key holds a booking's fingerprint");

/*
 * The key's lock tried on the node of its shard, where Citus distributes
 * idempotency (keys/key_lock.c): $3 the lock's hash; the subquery, routed
 * by the actor, locks no row (a key is never NULL; $2 unused), see
 * okno_key_try_lock_on_shard
 */
static OknoPlan try_lock_plan = {
	.sql =
	"SELECT pg_catalog.pg_try_advisory_xact_lock($3), pg_catalog.count(*)"
	" FROM (SELECT FROM %1$s.idempotency"
	"  WHERE actor_id OPERATOR(pg_catalog.=) $1 AND request_key IS NULL"
	"  AND $2::pg_catalog.text IS NOT NULL FOR UPDATE) AS x",
	.nargs = 3,
	.argtypes = {INT4OID, TEXTOID, INT8OID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

static OknoShardLock
try_lock_on_shard(const OknoKeyRef *ref)
{
	Datum		values[3];

	if (!okno_binding()->citus[OKNO_REL_IDEMPOTENCY])
		return OKNO_SHARD_LOCK_NONE;
	values[0] = Int32GetDatum(ref->actor);
	values[1] = CStringGetTextDatum(ref->key);
	return okno_key_try_lock_on_shard(ref, okno_relid(OKNO_REL_IDEMPOTENCY), &try_lock_plan,
									  values, 2);
}

const OknoKeyStore okno_booking_keys = {
	.check_privileges = check_key_privileges,
	.try_lock_on_shard = try_lock_on_shard,
	.claimed = NULL,
	.lookup = lookup,
	.same_request = same_request
};
