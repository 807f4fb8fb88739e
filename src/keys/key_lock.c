/*-------------------------------------------------------------------------
 *
 * key_lock.c
 *	  The lock a request holds on its key, and the setting okno.key_wait.
 *
 * A request takes a transaction-level advisory lock on its key before it
 * looks the key up, so that two requests with one key never both run:
 * the second waits until the first has ended, then replays its response
 * (or runs, if the first rolled back).  A booking's lock is the course's
 * own (booking/lock.c builds its tag); an operation's lock (okno 0.7.0) is
 * built here on the hash of the key's identity (tombstone.c), in an
 * advisory tag whose objsubid, 5, no SQL advisory-lock function uses
 * (they use 1 and 2; okno's other tags 3 and 4).  Two identities whose
 * hashes collide only wait for each other.
 *
 * okno.key_wait = off (the IETF draft's 409 Conflict for a request whose
 * first attempt is still running): a request whose key is locked by
 * another transaction gets request_in_progress (OKB12) at once instead of
 * waiting.  A lock this transaction holds already is always granted.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/guc.h"

#include "base/base.h"
#include "keys/keys.h"

/* GUC: wait for a key's lock (on, the default), or refuse at once */
static bool key_wait = true;

/*
 * Define okno.key_wait.
 */
void
okno_key_lock_init(void)
{
	DefineCustomBoolVariable("okno.key_wait",
							 "Waits for a request with the same idempotency key to end, then replays its response.",
							 "With this off, a request whose key another transaction holds gets "
							 "request_in_progress (OKB12) at once.",
							 &key_wait,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
}

/*
 * Whether requests wait for their key's lock (okno.key_wait).
 */
bool
okno_key_wait(void)
{
	return key_wait;
}

/*
 * Take the lock tag (ExclusiveLock, to the end of the transaction) for the
 * key ref names: waiting for it, or with okno.key_wait off raising
 * request_in_progress when another transaction holds it.
 */
void
okno_lock_key(const OknoKeyRef *ref, const LOCKTAG *tag)
{
	if (LockAcquire(tag, ExclusiveLock, false, !key_wait) == LOCKACQUIRE_NOT_AVAIL)
		okno_error_request_in_progress(okno_key_owner(ref), ref->key, false);
}

/*
 * The lock tag of an operation's key: the hash of its identity, objsubid 5.
 */
void
okno_operation_lock_tag(const OknoKeyRef *ref, LOCKTAG *tag)
{
	StringInfoData identity;
	uint64		hash;

	Assert(ref->operation != NULL);
	initStringInfo(&identity);
	okno_key_identity(ref, &identity);
	hash = DatumGetUInt64(hash_any_extended((const unsigned char *) identity.data,
											identity.len, 0));
	pfree(identity.data);
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (hash >> 32), (uint32) hash,
						 OKNO_LOCK_SUBID_OPERATION);
}
