/*-------------------------------------------------------------------------
 *
 * key_lock.c
 *	  The lock a request holds on its key, and the setting okno.key_wait.
 *
 * A request takes a transaction-level advisory lock on its key before it
 * looks the key up, so that two requests with one key never both run:
 * the second waits until the first has ended, then replays its response
 * (or runs, if the first rolled back).
 *
 * A booking's lock is exactly the one the course's Python service takes,
 *     pg_advisory_xact_lock(hashtextextended(actor::text || ':' || key, 0)),
 * built here directly on its lock tag (no SQL round trip), so that okno and
 * that service serialise against each other in one database.
 * hashtextextended() of a text with a deterministic collation is
 * hash_any_extended() of its bytes; a database's default collation is
 * always deterministic.  An operation's lock is built on the hash of the
 * key's identity (tombstone.c), in an advisory tag whose objsubid, 5, no
 * SQL advisory-lock function uses (they use 1 and 2; okno's other tags 3,
 * 4 and 6).  Two identities whose hashes collide only wait for each other.
 *
 * okno.key_wait = off (the IETF draft's 409 Conflict for a request whose
 * first attempt is still running): a request whose key is locked by
 * another transaction gets request_in_progress (OKB12) at once instead of
 * waiting.  A lock this transaction holds already is always granted.
 *
 * The lock is each node's own.  Where Citus distributes a store of keys,
 * the key's row is the arbiter between nodes (contract.c); and a request
 * with okno.key_wait off also tries a lock on the node of its key's shard
 * (the same hash, as pg_try_advisory_xact_lock(bigint) takes it there, in
 * a statement Citus sends to that shard: the store's try_lock_on_shard),
 * so that two such requests on two nodes refuse each other as on one.
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
 * The hash the lock of the key ref names (already validated) is taken on:
 * a booking's, the course's hashtextextended(actor || ':' || key, 0); an
 * operation's, the same of its identity.
 */
int64
okno_key_lock_hash(const OknoKeyRef *ref)
{
	char		scope[12 + 1 + 80 + 1];
	StringInfoData identity;
	uint64		hash;
	int			len;

	if (ref->operation == NULL)
	{
		len = snprintf(scope, sizeof(scope), "%d:%s", ref->actor, ref->key);
		Assert(len < (int) sizeof(scope));
		return DatumGetInt64(hash_any_extended((const unsigned char *) scope, len, 0));
	}
	initStringInfo(&identity);
	okno_key_identity(ref, &identity);
	hash = DatumGetUInt64(hash_any_extended((const unsigned char *) identity.data,
											identity.len, 0));
	pfree(identity.data);
	return (int64) hash;
}

/*
 * The lock tag of the key ref names: a booking's, the tag
 * pg_advisory_xact_lock(bigint) builds for the course's hash; an
 * operation's, the hash of its identity with objsubid 5.
 */
static void
key_lock_tag(const OknoKeyRef *ref, LOCKTAG *tag)
{
	uint64		hash = (uint64) okno_key_lock_hash(ref);

	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (hash >> 32), (uint32) hash,
						 ref->operation == NULL ? 1 : OKNO_LOCK_SUBID_OPERATION);
}

/*
 * Take the lock of the key ref names (ExclusiveLock, to the end of the
 * transaction): waiting for it, or with okno.key_wait off raising
 * request_in_progress when another transaction holds it.
 */
void
okno_lock_key(const OknoKeyRef *ref)
{
	LOCKTAG		tag;

	key_lock_tag(ref, &tag);
	if (LockAcquire(&tag, ExclusiveLock, false, !key_wait) == LOCKACQUIRE_NOT_AVAIL)
		okno_error_request_in_progress(okno_key_owner(ref), ref->key, false);
}
