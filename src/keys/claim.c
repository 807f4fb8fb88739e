/*-------------------------------------------------------------------------
 *
 * claim.c
 *	  The keys this transaction has claimed, and the check at its commit
 *	  that each one's response was stored.
 *
 * okno_key_claim (and okno_idempotent, around its handler) claims a key
 * that has no stored response: the caller goes on with the work, and
 * okno_key_store stores the response in the same transaction.  A claim
 * without a store would commit the work without its key, so a retry would
 * run it again: half a retry.  So a transaction that commits (or prepares)
 * with a claim not stored fails at its pre-commit, and rolls back.
 *
 * The claims live in the transaction's memory and follow its
 * subtransactions: a claim made in a subtransaction that rolls back is
 * gone (the key's lock, taken there, is released with it), and a store
 * made in one that rolls back is undone (its row is gone too).  A claim
 * made or stored in a subtransaction that commits belongs to its parent
 * from then on.
 *
 * A transaction claims a handful of keys at most, so they are a list.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "base/base.h"
#include "keys/keys.h"

typedef struct Claim
{
	char	   *operation;
	char	   *scope;
	char	   *key;
	uint8		fingerprint[OKNO_HASH_LEN];
	bool		handler;		/* okno_idempotent's, around its handler */
	SubTransactionId claimed_in;
	SubTransactionId stored_in; /* InvalidSubTransactionId: not stored */
} Claim;

/* this transaction's claims, in TopTransactionContext (NIL between them) */
static List *claims = NIL;

static bool
same_key(const Claim *c, const OknoKeyRef *ref)
{
	return strcmp(c->operation, ref->operation) == 0 &&
		strcmp(c->scope, ref->scope) == 0 &&
		strcmp(c->key, ref->key) == 0;
}

static Claim *
find_claim(const OknoKeyRef *ref)
{
	ListCell   *lc;

	foreach(lc, claims)
	{
		Claim	   *c = (Claim *) lfirst(lc);

		if (same_key(c, ref))
			return c;
	}
	return NULL;
}

/*
 * Whether this transaction has claimed the key ref names and not stored
 * its response.
 */
bool
okno_claim_open(const OknoKeyRef *ref)
{
	Claim	   *c = find_claim(ref);

	return c != NULL && c->stored_in == InvalidSubTransactionId;
}

/*
 * Claim the key ref names, whose request has this fingerprint: for
 * okno_idempotent, which stores the response its handler returns
 * (handler), or for okno_key_claim's caller, who stores it with
 * okno_key_store.
 */
void
okno_claim_add(const OknoKeyRef *ref, const uint8 fingerprint[OKNO_HASH_LEN],
			   bool handler)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	Claim	   *c = find_claim(ref);

	if (c == NULL)
	{
		c = palloc(sizeof(Claim));
		c->operation = pstrdup(ref->operation);
		c->scope = pstrdup(ref->scope);
		c->key = pstrdup(ref->key);
		claims = lappend(claims, c);
	}
	memcpy(c->fingerprint, fingerprint, OKNO_HASH_LEN);
	c->handler = handler;
	c->claimed_in = GetCurrentSubTransactionId();
	c->stored_in = InvalidSubTransactionId;
	MemoryContextSwitchTo(oldcxt);
}

/*
 * The fingerprint of the open claim of the key ref names, or NULL when
 * this transaction holds none; *handler says whether okno_idempotent holds
 * it for its handler.
 */
const uint8 *
okno_claim_fingerprint(const OknoKeyRef *ref, bool *handler)
{
	Claim	   *c = find_claim(ref);

	if (c == NULL || c->stored_in != InvalidSubTransactionId)
		return NULL;
	*handler = c->handler;
	return c->fingerprint;
}

/*
 * The claim of the key ref names has its response stored.
 */
void
okno_claim_stored(const OknoKeyRef *ref)
{
	Claim	   *c = find_claim(ref);

	if (c == NULL)
		elog(ERROR, "idempotency key \"%s\" is not claimed", ref->key);
	c->stored_in = GetCurrentSubTransactionId();
}

/* a commit or prepare with a claim not stored fails */
static void
check_stored(void)
{
	ListCell   *lc;

	foreach(lc, claims)
	{
		Claim	   *c = (Claim *) lfirst(lc);

		if (c->stored_in == InvalidSubTransactionId)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("idempotency key \"%s\" of operation \"%s\" in scope \"%s\" was claimed but its response was not stored",
							c->key, c->operation, c->scope),
					 errdetail("A transaction that claims a key with okno_key_claim() must store the response with okno_key_store() before it commits; it is rolled back, so the request's work is not committed without its key."),
					 errhint("Call okno_key_store() with the response, or roll back.")));
	}
}

static void
claim_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			check_stored();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the list was in TopTransactionContext */
			claims = NIL;
			break;
	}
}

static void
claim_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg pg_attribute_unused())
{
	ListCell   *lc;

	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			foreach(lc, claims)
			{
				Claim	   *c = (Claim *) lfirst(lc);

				if (c->claimed_in == mySubid)
					claims = foreach_delete_current(claims, lc);
				else if (c->stored_in == mySubid)
					c->stored_in = InvalidSubTransactionId;
			}
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			foreach(lc, claims)
			{
				Claim	   *c = (Claim *) lfirst(lc);

				if (c->claimed_in == mySubid)
					c->claimed_in = parentSubid;
				if (c->stored_in == mySubid)
					c->stored_in = parentSubid;
			}
			break;
		default:
			break;
	}
}

/*
 * Register the callbacks that keep the claims and check them at commit.
 */
void
okno_keys_claim_init(void)
{
	RegisterXactCallback(claim_xact_callback, NULL);
	RegisterSubXactCallback(claim_subxact_callback, NULL);
}
