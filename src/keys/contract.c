/*-------------------------------------------------------------------------
 *
 * contract.c
 *	  The contract of an idempotency key, written once for both stores of
 *	  keys: a booking's in the course's idempotency, an operation's in
 *	  okno_key.
 *
 * Before a request runs:
 *
 *	  1. okno_key_lock: the caller may read the store's keys (else 42501,
 *		 before anything about the key is told); the key's lock, held to
 *		 the end of the transaction (with okno.key_wait off, refused at
 *		 once: request_in_progress); a key this transaction claimed and
 *		 has not stored is request_in_progress too.
 *	  2. okno_key_replay: the stored key.  None in the transaction's
 *		 snapshot under REPEATABLE READ or SERIALIZABLE, but one in the
 *		 latest: a request with this key committed while this one waited
 *		 for the lock, which it can neither replay (it cannot see it) nor
 *		 run again (that would run it twice): concurrent_request, 40001.
 *		 A stored key of another request is key_reused; of this request,
 *		 its response is replayed.  No key: the caller may store one
 *		 (else 42501), and a key okno_purge expired is key_expired.  NULL
 *		 then: the request is new, and the caller runs it and stores its
 *		 key.
 *
 * What differs between the stores is in their OknoKeyStore: the table and
 * its privileges, how a stored fingerprint is compared (a booking's in the
 * fingerprint version it was stored under), and whether a key can be
 * claimed without being stored (an operation's, by okno_key_claim).
 *
 * Where Citus distributes a store, the key's lock is each node's own and
 * no longer excludes a request on another node: the key's row in its
 * shard is the arbiter instead.  A new request claims its key by
 * inserting the row first (INSERT ... ON CONFLICT DO NOTHING), before its
 * work; a second request on any node waits there for the first's
 * transaction, and finds the key stored (its response replayed) once the
 * first commits.  okno_key_claim_row runs that statement for both stores.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "base/base.h"
#include "keys/keys.h"

/*
 * Step 1: lock the key ref names, for a request on store.
 */
void
okno_key_lock(const OknoKeyStore *store, const OknoKeyRef *ref)
{
	/* a role that may not read the key learns nothing of it */
	(void) store->check_privileges(false, true);
	okno_lock_key(ref);
	/* across nodes, with okno.key_wait off (key_lock.c) */
	if (!okno_key_wait() && store->try_lock_on_shard != NULL &&
		store->try_lock_on_shard(ref) == OKNO_SHARD_LOCK_HELD)
		okno_error_request_in_progress(okno_key_owner(ref), ref->key, false);
	if (store->claimed != NULL && store->claimed(ref))
		okno_error_request_in_progress(okno_key_owner(ref), ref->key, true);
}

/*
 * Step 2: the response to replay for request, whose key ref names and is
 * locked, or NULL when the request is new; in memory context cxt.
 */
Jsonb *
okno_key_replay(const OknoKeyStore *store, const OknoKeyRef *ref,
				const void *request, MemoryContext cxt)
{
	OknoStoredKey stored;

	store->lookup(ref, request, InvalidSnapshot, cxt, &stored);
	if (!stored.found && IsolationUsesXactSnapshot())
	{
		OknoStoredKey latest;

		store->lookup(ref, request, GetLatestSnapshot(), cxt, &latest);
		if (latest.found)
			okno_error_concurrent_request(okno_key_owner(ref), ref->key);
	}
	if (stored.found)
	{
		if (!store->same_request(ref, &stored, request))
			okno_error_key_reused(okno_key_owner(ref), ref->key);
		return stored.response;
	}

	/* a key okno_purge expired is answered, not run again (to a role that may store it) */
	(void) store->check_privileges(true, true);
	okno_check_expired(ref);
	return NULL;
}

/*
 * Step 2 where the key's row is claimed first (Citus: see above) and the
 * claim itself is the lookup: nothing is read before it, which saves the
 * key's shard a round trip per request.  Whether the caller may store the
 * key: then it claims the row, and a claim that inserts nothing is a key
 * another request stored (the caller looks it up then: okno_key_replay),
 * while a claim that inserts it is a new key, for which
 * okno_key_claimed_new checks the tombstone; else it looks the key up
 * first (okno_key_replay), so that a role that may read keys but not store
 * them is still answered a stored key's replay, as on one server.  Under
 * REPEATABLE READ or SERIALIZABLE a key committed after the snapshot fails
 * the claim (concurrent_request, okno_key_claim_row), one committed before
 * it is found.
 */
bool
okno_key_before_claim(const OknoKeyStore *store)
{
	return store->check_privileges(true, false);
}

/*
 * The key ref names was claimed, new: a key okno_purge expired is
 * answered key_expired, not run again (the error rolls the claim back).
 * (A key that is stored beside its tombstone between a cluster's two
 * purges is not new: its claim inserted nothing, and it is replayed.)
 */
void
okno_key_claimed_new(const OknoKeyRef *ref)
{
	okno_check_expired(ref);
}

/*
 * Run plan with values: the statement that claims the key ref names by
 * inserting its row, INSERT ... ON CONFLICT DO NOTHING (see above).
 * Returns whether it inserted the row; false when another transaction's
 * row holds the key, after waiting for that transaction to commit (the
 * caller then looks the key up again: step 2).  Under REPEATABLE READ or
 * SERIALIZABLE a key committed after this transaction's snapshot makes the
 * statement fail with a serialization failure, which is the contract's
 * concurrent_request; it is raised as that, the claim being the
 * statement's only conflict.  SPI is connected.
 */
bool
okno_key_claim_row(const OknoKeyRef *ref, SPIPlanPtr plan, Datum *values,
				   int expected)
{
	MemoryContext spicxt = CurrentMemoryContext;
	int			rc = 0;

	PG_TRY();
	{
		rc = SPI_execute_plan(plan, values, NULL, false, 0);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(spicxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE)
		{
			FlushErrorState();
			okno_error_concurrent_request(okno_key_owner(ref), ref->key);
		}
		FreeErrorData(edata);
		PG_RE_THROW();
	}
	PG_END_TRY();
	okno_check_spi(rc, expected, "key claim");
	if (SPI_processed > 1)
		elog(ERROR, "key claim inserted " UINT64_FORMAT " rows", SPI_processed);
	return SPI_processed == 1;
}

/*
 * Run plan with values, a statement on the store relid that Citus sends
 * to the shard of the key ref names and that tries its lock there,
 * pg_try_advisory_xact_lock of values[lockarg] (set here) in its target
 * list, over a subquery that locks no row FOR UPDATE (so that Citus runs
 * it in the transaction's block on that node, and the lock lasts: see
 * okno_execute_locking): whether it took the lock (key_lock.c).  Connects
 * to SPI itself.
 */
OknoShardLock
okno_key_try_lock_on_shard(const OknoKeyRef *ref, Oid relid, OknoPlan *plan, Datum *values,
						   int lockarg)
{
	bool		isnull;
	bool		taken;
	int			rc;

	values[lockarg] = Int64GetDatum(okno_key_lock_hash(ref));
	okno_spi_connect();
	rc = okno_execute_locking(relid, plan, values, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "key lock on its shard");
	if (SPI_processed != 1)
		elog(ERROR, "key lock on its shard returned " UINT64_FORMAT " rows", SPI_processed);
	taken = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	okno_spi_finish();
	return taken ? OKNO_SHARD_LOCK_TAKEN : OKNO_SHARD_LOCK_HELD;
}

/*
 * The (response, replayed) composite the _result functions return
 * (okno_create_booking_result, okno_idempotent_result): a replay told from
 * a new request, so an HTTP layer can answer "Idempotent-Replayed: true".
 */
Datum
okno_key_result(FunctionCallInfo fcinfo, Jsonb *response, bool replayed)
{
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "a _result function of okno must return a composite type");
	desc = BlessTupleDesc(desc);
	values[0] = JsonbPGetDatum(response);
	values[1] = BoolGetDatum(replayed);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}
