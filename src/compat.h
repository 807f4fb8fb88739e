/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every difference between the PostgreSQL versions okno builds against
 *	  (15, 16, 17, 18), in one place.
 *
 * Each entry is spelled the newest way, and mapped here for the older
 * versions.  Nothing else in okno tests PG_VERSION_NUM.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_COMPAT_H
#define OKNO_COMPAT_H

#include "postgres.h"

#include "access/genam.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "executor/executor.h"
#include "nodes/bitmapset.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#endif
#if PG_VERSION_NUM >= 170000
#include "storage/procarray.h"
#else
#include "storage/sinvaladt.h"
#endif

/* 18 spells "does not return" as a prefix and dropped the suffix */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 18 renamed the prepared CHECK constraints of a result relation */
#if PG_VERSION_NUM >= 180000
#define OKNO_RRI_CHECK_EXPRS(rri) ((rri)->ri_CheckConstraintExprs)
#else
#define OKNO_RRI_CHECK_EXPRS(rri) ((rri)->ri_ConstraintExprs)
#endif

/*
 * 16 moved a range table entry's permissions to RTEPermissionInfo, checked
 * by ExecCheckPermissions; before, they were the entry's own, checked by
 * ExecCheckRTPerms.  Set them on rte (and, from 16, on a new entry of
 * *perminfos).
 */
static inline void
okno_set_rte_perms(RangeTblEntry *rte, List **perminfos, AclMode perms,
				   Bitmapset *selected, Bitmapset *inserted)
{
#if PG_VERSION_NUM >= 160000
	RTEPermissionInfo *perminfo = addRTEPermissionInfo(perminfos, rte);

	perminfo->requiredPerms = perms;
	perminfo->checkAsUser = InvalidOid;
	perminfo->selectedCols = selected;
	perminfo->insertedCols = inserted;
#else
	(void) perminfos;
	rte->requiredPerms = perms;
	rte->checkAsUser = InvalidOid;
	rte->selectedCols = selected;
	rte->insertedCols = inserted;
#endif
}

static inline bool
okno_check_perms(List *rtable, List *perminfos, bool raise)
{
#if PG_VERSION_NUM >= 160000
	return ExecCheckPermissions(rtable, perminfos, raise);
#else
	(void) perminfos;
	return ExecCheckRTPerms(rtable, raise);
#endif
}

/* 16 added the permissions, 18 the entries left after pruning (all here) */
static inline void
okno_init_range_table(EState *estate, List *rtable, List *perminfos)
{
#if PG_VERSION_NUM >= 180000
	ExecInitRangeTable(estate, rtable, perminfos,
					   bms_add_range(NULL, 1, list_length(rtable)));
#elif PG_VERSION_NUM >= 160000
	ExecInitRangeTable(estate, rtable, perminfos);
#else
	(void) perminfos;
	ExecInitRangeTable(estate, rtable);
#endif
}

/* 18 added an instrumentation argument */
static inline IndexScanDesc
okno_index_beginscan(Relation heap, Relation index, Snapshot snapshot, int nkeys)
{
#if PG_VERSION_NUM >= 180000
	return index_beginscan(heap, index, snapshot, NULL, nkeys, 0);
#else
	return index_beginscan(heap, index, snapshot, nkeys, 0);
#endif
}

/* this backend's local transaction id: 17 moved it into PGPROC's vxid */
static inline LocalTransactionId
okno_local_xid(void)
{
#if PG_VERSION_NUM >= 170000
	return MyProc->vxid.lxid;
#else
	return MyProc->lxid;
#endif
}

/*
 * The PGPROC of the backend running a virtual transaction (NULL if there is
 * none): 17 numbers backends by their PGPROC slot, before they had a
 * BackendId.
 */
static inline PGPROC *
okno_vxid_proc(VirtualTransactionId vxid)
{
#if PG_VERSION_NUM >= 170000
	return ProcNumberGetProc(vxid.procNumber);
#else
	return BackendIdGetProc(vxid.backendId);
#endif
}

/*
 * Backend i (1 to pgstat_fetch_stat_numbackends()) of this transaction's
 * copy of the backends' status: 17 renamed the function (16 looked the
 * argument up as a BackendId instead).
 */
static inline LocalPgBackendStatus *
okno_local_beentry(int i)
{
#if PG_VERSION_NUM >= 170000
	return pgstat_get_local_beentry_by_index(i);
#else
	return pgstat_fetch_stat_local_beentry(i);
#endif
}

/*
 * A role's privilege on a function or a schema: 16 replaced
 * pg_proc_aclcheck and pg_namespace_aclcheck by object_aclcheck
 */
static inline AclResult
okno_object_aclcheck(Oid classid, Oid objectid, Oid roleid, AclMode mode)
{
#if PG_VERSION_NUM >= 160000
	return object_aclcheck(classid, objectid, roleid, mode);
#else
	Assert(classid == ProcedureRelationId || classid == NamespaceRelationId);
	if (classid == NamespaceRelationId)
		return pg_namespace_aclcheck(objectid, roleid, mode);
	return pg_proc_aclcheck(objectid, roleid, mode);
#endif
}

/*
 * A lock of this backend's, at once or not at all, and its local entry: 18
 * added whether to log a lock not taken at once.
 */
static inline LockAcquireResult
okno_lock_acquire_local(const LOCKTAG *tag, LOCKMODE mode, bool session,
						LOCALLOCK **locallock)
{
#if PG_VERSION_NUM >= 180000
	return LockAcquireExtended(tag, mode, session, true, true, locallock, false);
#else
	return LockAcquireExtended(tag, mode, session, true, true, locallock);
#endif
}

#endif							/* OKNO_COMPAT_H */
