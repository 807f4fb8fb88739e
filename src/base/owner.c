/*-------------------------------------------------------------------------
 *
 * owner.c
 *	  A superuser's call runs as the owner of okno's tables.
 *
 * The application's tables belong to the application, and their owner may
 * put code of its own on them: triggers, column defaults, checks, index
 * expressions, a column of its own type.  Whoever writes a row runs that
 * code, so a superuser who called okno would run it as a superuser, and the
 * owner could make itself one.  So, as PostgreSQL's VACUUM, ANALYZE and
 * REINDEX do since CVE-2022-1552, a call made by a superuser runs okno's
 * statements as the tables' owner, in a security-restricted operation (no
 * SET ROLE, no temporary objects, no session state left behind), and
 * whatever settings the owner's code changes are rolled back when okno
 * returns.  The call then has the owner's privileges, which are all a
 * superuser needs of the owner's tables; okno's own tables must be granted
 * to the owner too (the role that installed okno has them).
 *
 * Callers that are not superusers run okno as themselves, as any statement
 * of theirs on the tables would run; nothing is switched.  Nor is anything
 * where the tables belong to superusers.
 *
 * Two cases are refused instead, with an error that says why:
 *   - tables of more than one role that is not a superuser: there is no one
 *     owner to run as;
 *   - a deferrable trigger, other than a foreign key's, on a table okno
 *     writes (bookings, idempotency, outbox): it may fire at commit, when
 *     okno has long returned, as whoever commits.
 *
 * Every call of okno's that reads or writes the tables brackets its work
 * with okno_guard_begin and okno_guard_end.  They nest: inside a switched
 * call the current user is no longer a superuser, and nothing is switched
 * again.  An error between the two needs no clean-up: the (sub)transaction's
 * abort restores the user and its settings.
 *
 * What the owner's code does in a switched call is otherwise the
 * transaction's, and ends with it (its writes, a NOTIFY, SET CONSTRAINTS,
 * transaction-level advisory locks), but for two things a
 * security-restricted operation does not forbid, which outlive the
 * transaction in the superuser's session: a session-level advisory lock,
 * and the values currval() and lastval() return.  The first would keep a
 * lock of the owner's choosing for as long as a pooled superuser session
 * lives, so a switched call that ends holding a session-level advisory lock
 * it did not hold when it switched is refused, and the lock released (a
 * rollback would not release it); one whose error ends it early has the
 * lock released by its (sub)transaction's abort, with a WARNING.  The
 * second tells the superuser's session a number and takes nothing from it
 * (docs/PRIVILEGES.md).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_authid.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "base/base.h"

/*
 * The advisory locks SQL takes (pg_advisory_lock and its kin: objsubid 1
 * for one bigint key, 2 for two integers) that this backend held as the
 * switched call began, with the modes held; okno's own tags (base.h) are
 * not among them.  One switched call at a time (they do not nest), kept in
 * the transaction's memory from its begin to its end or abort.
 */
typedef struct HeldLock
{
	LOCKTAG		tag;
	LOCKMASK	modes;
} HeldLock;

static bool switched_active = false;
static Oid	switched_owner = InvalidOid;
static SubTransactionId switched_subid = InvalidSubTransactionId;
static HeldLock *held_before = NULL;
static int	nheld_before = 0;

static bool
sql_advisory_lock(const LOCKTAG *tag)
{
	return tag->locktag_type == LOCKTAG_ADVISORY &&
		(tag->locktag_field4 == 1 || tag->locktag_field4 == 2);
}

/* the SQL advisory locks this backend holds now, in cxt; their number */
static int
held_locks(MemoryContext cxt, HeldLock **out)
{
	LockData   *data = GetLockStatusData();
	HeldLock   *held = MemoryContextAlloc(cxt, sizeof(HeldLock) * Max(data->nelements, 1));
	int			n = 0;
	int			i;

	for (i = 0; i < data->nelements; i++)
	{
		LockInstanceData *in = &data->locks[i];

		if (in->pid != MyProcPid || !sql_advisory_lock(&in->locktag) || in->holdMask == 0)
			continue;
		held[n].tag = in->locktag;
		held[n].modes = in->holdMask;
		n++;
	}
	*out = held;
	return n;
}

/* whether mode of the lock tag was held when the call switched */
static bool
was_held(const LOCKTAG *tag, LOCKMODE mode)
{
	int			i;

	for (i = 0; i < nheld_before; i++)
		if (memcmp(&held_before[i].tag, tag, sizeof(LOCKTAG)) == 0)
			return (held_before[i].modes & LOCKBIT_ON(mode)) != 0;
	return false;
}

/*
 * How many times this backend holds the lock (tag, mode), which it holds,
 * at session level: its local entry's count for the session, read by
 * taking the lock once more (at once: it is ours) and releasing that.
 */
static int64
session_holds(const LOCKTAG *tag, LOCKMODE mode)
{
	LOCALLOCK  *locallock = NULL;
	int64		n = 0;
	int			i;

	(void) okno_lock_acquire_local(tag, mode, true, &locallock);
	for (i = 0; locallock != NULL && i < locallock->numLockOwners; i++)
		if (locallock->lockOwners[i].owner == NULL)
			n = locallock->lockOwners[i].nLocks - 1;
	if (!LockRelease(tag, mode, true))
		elog(ERROR, "okno could not release its own hold of an advisory lock");
	return n;
}

/*
 * Release the session-level SQL advisory locks taken since the switched
 * call began (each as often as it was taken); their number.
 */
static int
release_new_session_locks(void)
{
	HeldLock   *now;
	int			n = held_locks(CurrentMemoryContext, &now);
	int			released = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		LOCKMODE	mode;

		for (mode = 1; mode <= MaxLockMode; mode++)
		{
			int64		holds;

			if ((now[i].modes & LOCKBIT_ON(mode)) == 0 || was_held(&now[i].tag, mode))
				continue;
			holds = session_holds(&now[i].tag, mode);
			if (holds > 0)
				released++;
			while (holds-- > 0)
				(void) LockRelease(&now[i].tag, mode, true);
		}
	}
	pfree(now);
	return released;
}

static void
forget_switched_call(void)
{
	if (held_before != NULL)
		pfree(held_before);
	held_before = NULL;
	nheld_before = 0;
	switched_active = false;
}

/* a switched call that an error ended: its session-level locks go */
static void
release_after_error(void)
{
	int			released;

	if (!switched_active)
		return;
	released = release_new_session_locks();
	if (released > 0)
		ereport(WARNING,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg_plural("okno released %d session-level advisory lock that code of role %s took in a superuser's call",
							   "okno released %d session-level advisory locks that code of role %s took in a superuser's call",
							   released, released, GetUserNameFromId(switched_owner, true)),
				 errdetail("The call failed; a session-level lock would have outlived it in the superuser's session.")));
	forget_switched_call();
}

static void
guard_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			release_after_error();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			/* (a switched call always ends before; its memory goes now) */
			held_before = NULL;
			forget_switched_call();
			break;
		default:
			break;
	}
}

static void
guard_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid pg_attribute_unused(),
					   void *arg pg_attribute_unused())
{
	/* the subtransaction the call switched in, or one that holds it */
	if (event == SUBXACT_EVENT_ABORT_SUB && switched_active && mySubid <= switched_subid)
		release_after_error();
}

/*
 * Register the callbacks that release what an owner's code left when a
 * switched call fails.
 */
void
okno_guard_init(void)
{
	RegisterXactCallback(guard_xact_callback, NULL);
	RegisterSubXactCallback(guard_subxact_callback, NULL);
}

/*
 * The role to run a superuser's call as: InvalidOid when every table
 * belongs to a superuser; refused when more than one role that is not a
 * superuser owns them.
 */
static Oid
tables_owner(const OknoBinding *b)
{
	Oid			owner = InvalidOid;
	int			t;

	for (t = 0; t < OKNO_NUM_TABLES; t++)
	{
		if (b->owner[t] == owner || superuser_arg(b->owner[t]))
			continue;
		if (OidIsValid(owner))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("okno does not run a superuser's call on tables of roles %s and %s",
							GetUserNameFromId(owner, false),
							GetUserNameFromId(b->owner[t], false)),
					 errdetail("A superuser's call runs as the owner of okno's tables, and they have two owners that are not superusers."),
					 errhint("Call okno as a role that is not a superuser (SET ROLE %s), or give the tables one owner.",
							 GetUserNameFromId(owner, false))));
		owner = b->owner[t];
	}
	return owner;
}

/*
 * Become role owner for the rest of a superuser's call, in a
 * security-restricted operation with a GUC nest level of its own; nothing
 * when the caller is not a superuser or owner is one.
 */
void
okno_guard_begin_owner(OknoGuard *guard, Oid owner)
{
	guard->switched = false;
	if (!superuser() || !OidIsValid(owner) || superuser_arg(owner))
		return;

	/* the SQL advisory locks held now, to tell those the owner's code takes */
	nheld_before = held_locks(TopTransactionContext, &held_before);
	switched_owner = owner;
	switched_subid = GetCurrentSubTransactionId();
	switched_active = true;

	GetUserIdAndSecContext(&guard->save_userid, &guard->save_sec_context);
	SetUserIdAndSecContext(owner, guard->save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	guard->save_nestlevel = NewGUCNestLevel();
	guard->switched = true;
}

/*
 * Begin one of okno's calls: when the caller is a superuser and okno's
 * tables belong to a role that is not, become that role (above).
 */
void
okno_guard_begin(OknoGuard *guard)
{
	const OknoBinding *b;
	Oid			owner;

	guard->switched = false;
	if (!superuser())
		return;

	b = okno_binding();
	owner = tables_owner(b);
	if (!OidIsValid(owner))
		return;
	if (b->deferred[0] != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("okno does not write tables of role %s for a superuser while trigger %s is deferrable",
						GetUserNameFromId(owner, false), b->deferred),
				 errdetail("A deferrable trigger may fire at commit, after okno has returned, and it would run as the superuser."),
				 errhint("Call okno as a role that is not a superuser (SET ROLE %s), or make the trigger NOT DEFERRABLE.",
						 GetUserNameFromId(owner, false))));
	okno_guard_begin_owner(guard, owner);
}

/*
 * End the call begun with okno_guard_begin: the settings the owner's code
 * changed are rolled back, and the caller is itself again.
 */
void
okno_guard_end(OknoGuard *guard)
{
	int			released;
	Oid			owner = switched_owner;

	if (!guard->switched)
		return;
	AtEOXact_GUC(false, guard->save_nestlevel);
	SetUserIdAndSecContext(guard->save_userid, guard->save_sec_context);
	guard->switched = false;

	released = release_new_session_locks();
	forget_switched_call();
	if (released > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("code of role %s took a session-level advisory lock in a superuser's call of okno",
						GetUserNameFromId(owner, true)),
				 errdetail("okno runs the tables' owner's code (triggers, defaults, checks) as that role for a superuser; a session-level lock would outlive the call in the superuser's session, so okno released it."),
				 errhint("Take a transaction-level lock in that code (pg_advisory_xact_lock), or call okno as role %s.",
						 GetUserNameFromId(owner, true))));
}

/* the owner of the table relid */
static Oid
rel_owner(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Oid			owner = rel->rd_rel->relowner;

	table_close(rel, NoLock);
	return owner;
}

/* whether role may log in (rolcanlogin) */
static bool
role_can_login(Oid role)
{
	HeapTuple	tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(role));
	bool		can;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for role %u", role);
	can = ((Form_pg_authid) GETSTRUCT(tup))->rolcanlogin;
	ReleaseSysCache(tup);
	return can;
}

/*
 * Run plan (with values, at most count rows), a statement that locks rows
 * of the table relid (FOR UPDATE, of none: it opens Citus's transaction
 * block), as the current user if it may lock them (UPDATE on the table or
 * on one of its columns, as PostgreSQL asks), else as the table's owner
 * (below).  The caller is connected to SPI; SPI's result code.
 */
int
okno_execute_locking(Oid relid, OknoPlan *plan, Datum *values, long count)
{
	Oid			owner;

	if (pg_class_aclcheck(relid, GetUserId(), ACL_UPDATE) == ACLCHECK_OK ||
		pg_attribute_aclcheck_all(relid, GetUserId(), ACL_UPDATE, ACLMASK_ANY) == ACLCHECK_OK)
		return SPI_execute_plan(okno_plan(plan), values, NULL, false, count);

	/*
	 * Citus sends the statement to the node of the shard as the owner, over
	 * a connection of the owner's: refused alike wherever the shard is
	 * (placed here, it would run without one) when the owner cannot log in
	 */
	owner = rel_owner(relid);
	if (!role_can_login(owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("okno cannot lock table %s on its shard's node for role %s",
						get_rel_name(relid), GetUserNameFromId(GetUserId(), false)),
				 errdetail("The lock needs UPDATE on the table, which role %s lacks; okno would take it as the table's owner, %s, which cannot log in, and Citus connects to the shard's node as that role.",
						   GetUserNameFromId(GetUserId(), false), GetUserNameFromId(owner, false)),
				 errhint("Grant UPDATE on a column of %s to %s, or ALTER ROLE %s LOGIN.",
						 get_rel_name(relid), GetUserNameFromId(GetUserId(), false),
						 GetUserNameFromId(owner, false))));
	return okno_execute_as_owner(relid, plan, values, count);
}

/*
 * Run plan (with values, at most count rows) as the owner of the table
 * relid, as a foreign key's check runs (ri_triggers.c): a fixed statement
 * that the caller needs no right on the table for and that names no
 * function but PostgreSQL's; no row security of the table applies.  The
 * caller is connected to SPI; SPI's result code, the rows in SPI_tuptable.
 * An error restores the user as the (sub)transaction's abort does.
 */
int
okno_execute_as_owner(Oid relid, OknoPlan *plan, Datum *values, long count)
{
	Oid			save_userid;
	int			save_sec_context;
	Oid			owner = rel_owner(relid);
	int			rc;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_NOFORCE_RLS);
	rc = SPI_execute_plan(okno_plan(plan), values, NULL, false, count);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return rc;
}
