/*-------------------------------------------------------------------------
 *
 * idempotent.c
 *	  Idempotency keys for any operation: okno_idempotent and
 *	  okno_idempotent_result (a handler runs the request), okno_key_claim
 *	  and okno_key_store (the caller's own SQL does).
 *
 *	okno_idempotent(operation, scope, key, request, handler)
 *	  1. the operation's name, the scope, the key       22023, 22004,
 *	     the request, the handler                       invalid_key, 42501
 *	  2. the request's fingerprint: SHA-256 of its RFC 8785 form
 *	  3. the caller may read okno_key (SELECT), then     42501
 *	     the lock of (operation, scope, key), waiting, or with
 *	     okno.key_wait off refusing at once               request_in_progress
 *	  4. a claim of this transaction's own, not stored    request_in_progress
 *	  5. the stored key: the same fingerprint replays its
 *	     response (the handler is not called); another    key_reused
 *	     (REPEATABLE READ: stored after our snapshot      40001)
 *	  6. the caller may store keys (INSERT), then         42501
 *	     the key's tombstone: it expired                  key_expired
 *	  7. claim the key (where Citus distributes okno_key, by inserting
 *	     its row: a request on another node that claimed it first and
 *	     committed is replayed, or key_reused, as in 5), call
 *	     handler(request) as the caller, store its response with the
 *	     key, return it
 *
 * okno_key_claim is steps 1 to 6 and the claim: it returns the stored
 * response to replay, or NULL (go on); okno_key_store stores the response
 * of a claim of this transaction.  A claim not stored when the
 * transaction commits is an error there (claim.c).
 *
 * Everything runs in the caller's transaction, as okno_create_booking
 * does: an error anywhere, the handler's included, aborts the transaction
 * (or its subtransaction), so nothing is stored and the key is free again.
 * A handler that wants a refusal replayed returns it as its response.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "base/base.h"
#include "keys/keys.h"

PG_FUNCTION_INFO_V1(okno_idempotent);
PG_FUNCTION_INFO_V1(okno_idempotent_result);
PG_FUNCTION_INFO_V1(okno_key_claim);
PG_FUNCTION_INFO_V1(okno_key_store);

/* the (operation, scope, key) of arguments 0, 1 and 2, checked */
static void
key_args(FunctionCallInfo fcinfo, OknoKeyRef *ref)
{
	ref->operation = okno_operation_arg(fcinfo, 0);
	ref->scope = okno_scope_arg(fcinfo, 1);
	ref->actor = 0;
	ref->key = okno_key_arg(fcinfo, 2);
}

/* jsonb argument argno, which must not be NULL */
static Jsonb *
jsonb_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	okno_require_arg(fcinfo, argno, what, ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Pass a JSON value; 'null'::jsonb is one.");
	return PG_GETARG_JSONB_P(argno);
}

/*
 * Steps 3 to 6, every key's contract (contract.c) over okno_key: lock the
 * key, and return its stored response to replay, or NULL when the request
 * is new.
 */
static Jsonb *
look_up(const OknoKeyRef *ref, const uint8 fingerprint[OKNO_HASH_LEN],
		MemoryContext cxt)
{
	okno_key_lock(&okno_operation_keys, ref);
	return okno_key_replay(&okno_operation_keys, ref, fingerprint, cxt);
}

/*
 * Claim the key ref names, new at step 6, for this transaction (handler:
 * okno_idempotent's, around its handler) and return NULL; or, where Citus
 * has okno_key and another request on another node claimed it meanwhile
 * and has committed, the response to replay (key_reused for another
 * request), as its lock would have made it on one node (key_table.c).
 */
static Jsonb *
claim(const OknoKeyRef *ref, const uint8 fingerprint[OKNO_HASH_LEN], bool handler,
	  MemoryContext cxt)
{
	Jsonb	   *response;

	if (okno_op_key_claim_row(ref, fingerprint))
	{
		okno_claim_add(ref, fingerprint, handler);
		return NULL;
	}
	response = okno_key_replay(&okno_operation_keys, ref, fingerprint, cxt);
	if (response == NULL)
		elog(ERROR, "idempotency key \"%s\" of %s was claimed by another request but is not stored",
			 ref->key, okno_key_owner(ref));
	return response;
}

/*
 * okno_idempotent and okno_idempotent_result: the response, and whether it
 * is a replay.
 */
static Jsonb *
idempotent(FunctionCallInfo fcinfo, const char *fname, bool *replayed)
{
	MemoryContext cxt = CurrentMemoryContext;
	OknoKeyRef	ref;
	Jsonb	   *request;
	Oid			handler;
	uint8		fingerprint[OKNO_HASH_LEN];
	Jsonb	   *response;

	PreventCommandIfReadOnly(fname);

	/* 1, 2: every argument, and the fingerprint, before any lock */
	key_args(fcinfo, &ref);
	request = jsonb_arg(fcinfo, 3, "request");
	okno_require_arg(fcinfo, 4, "handler", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Pass the function that runs a new request, such as 'my_handler(jsonb)'::regprocedure.");
	handler = PG_GETARG_OID(4);
	okno_handler_check(handler);
	okno_request_fingerprint(request, fingerprint);

	/* 3 to 6, and the claim */
	response = look_up(&ref, fingerprint, cxt);
	if (response == NULL)
		response = claim(&ref, fingerprint, true, cxt);
	if (response != NULL)
	{
		*replayed = true;
		return response;
	}

	/* 7 */
	response = okno_handler_call(handler, request);
	okno_op_key_insert(&ref, fingerprint, response);
	okno_claim_stored(&ref);
	*replayed = false;
	return response;
}

/*
 * okno_idempotent(operation text, scope text, key text, request jsonb,
 *				   handler regprocedure) RETURNS jsonb
 */
Datum
okno_idempotent(PG_FUNCTION_ARGS)
{
	bool		replayed;

	PG_RETURN_JSONB_P(idempotent(fcinfo, "okno_idempotent()", &replayed));
}

/*
 * okno_idempotent_result(operation, scope, key, request, handler,
 *						  OUT response jsonb, OUT replayed boolean)
 */
Datum
okno_idempotent_result(PG_FUNCTION_ARGS)
{
	bool		replayed;
	Jsonb	   *response = idempotent(fcinfo, "okno_idempotent_result()", &replayed);

	PG_RETURN_DATUM(okno_key_result(fcinfo, response, replayed));
}

/*
 * okno_key_claim(operation text, scope text, key text, request jsonb)
 *	 RETURNS jsonb
 *
 * The stored response to replay, or NULL: the key is this transaction's,
 * and okno_key_store must store its response before the commit.
 */
Datum
okno_key_claim(PG_FUNCTION_ARGS)
{
	OknoKeyRef	ref;
	Jsonb	   *request;
	uint8		fingerprint[OKNO_HASH_LEN];
	Jsonb	   *response;

	PreventCommandIfReadOnly("okno_key_claim()");
	key_args(fcinfo, &ref);
	request = jsonb_arg(fcinfo, 3, "request");
	okno_request_fingerprint(request, fingerprint);

	response = look_up(&ref, fingerprint, CurrentMemoryContext);
	if (response == NULL)
		response = claim(&ref, fingerprint, false, CurrentMemoryContext);
	if (response != NULL)
		PG_RETURN_JSONB_P(response);
	PG_RETURN_NULL();
}

/*
 * okno_key_store(operation text, scope text, key text, response jsonb)
 *	 RETURNS jsonb
 *
 * Store the response of a key this transaction claimed; returns it.
 */
Datum
okno_key_store(PG_FUNCTION_ARGS)
{
	OknoKeyRef	ref;
	Jsonb	   *response;
	const uint8 *fingerprint;
	bool		handler = false;

	PreventCommandIfReadOnly("okno_key_store()");
	key_args(fcinfo, &ref);
	response = jsonb_arg(fcinfo, 3, "response");

	fingerprint = okno_claim_fingerprint(&ref, &handler);
	if (fingerprint == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idempotency key \"%s\" of %s is not claimed by this transaction",
						ref.key, okno_key_owner(&ref)),
				 errdetail("okno_key_store() stores the response of a key that okno_key_claim() returned NULL for, in the same transaction, once."),
				 errhint("Call okno_key_claim() first, and store only when it returns NULL.")));
	if (handler)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idempotency key \"%s\" of %s is held by okno_idempotent()",
						ref.key, okno_key_owner(&ref)),
				 errdetail("okno_idempotent() stores the response its handler returns with the key; the handler does not store it itself."),
				 errhint("Return the response from the handler.")));
	okno_op_key_insert(&ref, fingerprint, response);
	okno_claim_stored(&ref);
	PG_RETURN_JSONB_P(response);
}

/*
 * The group's settings and callbacks: okno.key_wait, okno.key_tombstone_age,
 * the claims' transaction callbacks, the kept handler's invalidation.
 */
void
okno_keys_init(void)
{
	okno_key_lock_init();
	okno_tombstone_init();
	okno_keys_claim_init();
	okno_handler_init();
}
