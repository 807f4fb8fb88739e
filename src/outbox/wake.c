/*-------------------------------------------------------------------------
 *
 * wake.c
 *	  The wake-up a commit sends: the relays waiting in okno_wait
 *	  (delivery/wait.c) learn that an event was written or made due again.
 *
 * No shared memory of okno's own (a trusted extension cannot ask for it)
 * and no NOTIFY (PostgreSQL serialises the commits of notifying
 * transactions).  The waiters are found through the lock manager instead:
 * each holds a session advisory lock on okno's waiters' tag, in share mode,
 * for as long as it waits.
 *
 * - A transaction that wrote an event, or made one due again, looks the
 *	 tag's holders up once it has committed (GetLockConflicts, the lock
 *	 manager's own lookup: one shared partition lock and a hash probe, with
 *	 nothing found when nobody waits) and sets their latches.  It does so
 *	 after its commit is visible, so the woken waiter's next drain sees the
 *	 event; a transaction that rolls back wakes nobody.  Writers take no lock
 *	 and wait for nothing, so commits are not serialised.
 *
 * - A transaction prepared for two-phase commit has no commit of its own in
 *	 this backend: COMMIT PREPARED may run anywhere, even in a session that
 *	 never loaded okno.  So a prepared transaction that wrote an event
 *	 keeps a transaction-level advisory lock on a second tag (the prepared
 *	 transaction inherits it, and COMMIT or ROLLBACK PREPARED releases it);
 *	 the waiters poll while any such lock exists.
 *
 * The tags are advisory locks of okno's database with a fourth key field
 * that the SQL advisory lock functions never use (base.h): in pg_locks,
 * locktype 'advisory', classid 1869311599 ("okno"), objid 0 (waiters) or 1
 * (prepared transactions with events), objsubid 4.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/proc.h"

#include "base/base.h"
#include "outbox/outbox.h"

/* this transaction wrote an event or made one due: wake waiters at commit */
static bool wake_at_commit = false;

/*
 * The tag of okno_wait's waiters (which = OKNO_WAIT_TAG_WAITERS) or of the
 * prepared transactions with events (OKNO_WAIT_TAG_PREPARED).
 */
void
okno_wait_tag(LOCKTAG *tag, uint32 which)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, OKNO_LOCK_CLASS, which,
						 OKNO_LOCK_SUBID_WAIT);
}

/*
 * Set the latch of every backend that holds the waiters' tag.
 */
static void
wake_waiters(void)
{
	LOCKTAG		tag;
	VirtualTransactionId *holders;
	int			n;
	int			i;

	okno_wait_tag(&tag, OKNO_WAIT_TAG_WAITERS);
	holders = GetLockConflicts(&tag, ExclusiveLock, &n);
	for (i = 0; i < n; i++)
	{
		PGPROC	   *proc = okno_vxid_proc(holders[i]);

		/* it may have stopped waiting since: a spurious wake is harmless */
		if (proc != NULL)
			SetLatch(&proc->procLatch);
	}
	pfree(holders);
}

static void
wake_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
			if (wake_at_commit)
			{
				wake_at_commit = false;
				wake_waiters();
			}
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (wake_at_commit)
			{
				LOCKTAG		tag;

				/* the prepared transaction keeps it until it ends */
				okno_wait_tag(&tag, OKNO_WAIT_TAG_PREPARED);
				(void) LockAcquire(&tag, ShareLock, false, false);
			}
			break;
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			wake_at_commit = false;
			break;
		default:
			break;
	}
}

/*
 * Register what this file needs to know of transactions.
 */
void
okno_wake_init(void)
{
	RegisterXactCallback(wake_xact_callback, NULL);
}

/*
 * This transaction wrote an event or made one due again: when it commits,
 * wake the relays that wait in okno_wait.  (One that rolls back, or rolls
 * back the subtransaction that wrote, wakes them for nothing at commit at
 * worst.)
 */
void
okno_wake_at_commit(void)
{
	wake_at_commit = true;
}
