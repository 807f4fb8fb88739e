/*-------------------------------------------------------------------------
 *
 * lock.c
 *	  The transaction-scoped advisory locks okno takes.
 *
 * The request lock is exactly the one the course's Python service takes,
 *     pg_advisory_xact_lock(hashtextextended(actor::text || ':' || key, 0)),
 * built here directly on its lock tag (no SQL round trip), so that okno and
 * that service serialise against each other in one database.
 * hashtextextended() of a text with a deterministic collation is
 * hash_any_extended() of its bytes; a database's default collation is
 * always deterministic.
 *
 * The resource lock serialises creates on one resource, so that two
 * inserts whose periods overlap never wait on each other's exclusion check
 * (which PostgreSQL can end in a deadlock, 40P01): the second one waits
 * here, then meets the first one's committed row and gets slot_busy.  Its
 * tag cannot collide with any lock SQL can take: advisory locks taken by
 * SQL functions have objsubid 1 or 2; this one has classid OKNO_LOCK_CLASS,
 * objid = the resource id and objsubid 3.
 *
 * The tags of okno_wait are okno's too, with objsubid 4 (outbox/wake.c).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lock.h"

#include "base/base.h"
#include "booking/booking.h"
#include "keys/keys.h"
#include "outbox/outbox.h"

/*
 * Take the course's lock for the booking's (actor, key), already
 * validated: waiting for it, or with okno.key_wait off refusing at once
 * (keys/key_lock.c).
 */
void
okno_lock_request(const OknoKeyRef *ref)
{
	char		scope[12 + 1 + 80 + 1];
	int			len;
	uint64		hash;
	LOCKTAG		tag;

	len = snprintf(scope, sizeof(scope), "%d:%s", ref->actor, ref->key);
	Assert(len < (int) sizeof(scope));

	hash = DatumGetUInt64(hash_any_extended((const unsigned char *) scope, len, 0));

	/* the tag pg_advisory_xact_lock(bigint) builds */
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) (hash >> 32), (uint32) hash, 1);
	okno_lock_key(ref, &tag);
}

/*
 * Serialise creates on one resource until the end of the transaction.
 */
void
okno_lock_resource(int32 resource_id)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, OKNO_LOCK_CLASS, (uint32) resource_id,
						 OKNO_LOCK_SUBID_RESOURCE);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}
