/*-------------------------------------------------------------------------
 *
 * lock.c
 *	  The lock a create takes on its resource.
 *
 * It serialises creates on one resource, so that two inserts whose periods
 * overlap never wait on each other's exclusion check (which PostgreSQL can
 * end in a deadlock, 40P01): the second one waits here, then meets the
 * first one's committed row and gets slot_busy.  Its tag cannot collide
 * with any lock SQL can take: advisory locks taken by SQL functions have
 * objsubid 1 or 2; this one has classid OKNO_LOCK_CLASS, objid = the
 * resource id and objsubid 3.
 *
 * The tags of okno_wait are okno's too, with objsubid 4 (outbox/wake.c).
 * A booking's request lock, the course's own, is its key's
 * (keys/key_lock.c).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/lock.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"

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
