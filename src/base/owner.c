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
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "base/base.h"

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
	if (!guard->switched)
		return;
	AtEOXact_GUC(false, guard->save_nestlevel);
	SetUserIdAndSecContext(guard->save_userid, guard->save_sec_context);
	guard->switched = false;
}
