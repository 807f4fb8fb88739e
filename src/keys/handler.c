/*-------------------------------------------------------------------------
 *
 * handler.c
 *	  The handler okno_idempotent runs for a new request: a function of the
 *	  caller's, handler(request jsonb) RETURNS jsonb.
 *
 * The handler is called through fmgr, as the caller, in the caller's
 * transaction, exactly as a direct call of it in the same statement would
 * run: a SECURITY DEFINER handler runs as its owner, a SET clause applies,
 * its error aborts the caller's transaction (or subtransaction).  Calling
 * a function by OID skips the checks a call in SQL makes, so okno makes
 * them: the caller needs USAGE on the handler's schema and EXECUTE on the
 * handler (42501 otherwise: a direct call by its name could not even find
 * it without the first), and the handler must be a plain function (not a
 * procedure, aggregate or window function) of one jsonb argument
 * returning one jsonb value (22023 otherwise).
 *
 * A superuser calling okno never runs another role's code as a superuser:
 * when the caller is a superuser and the handler belongs to a role that is
 * not, the handler runs as its owner in a security-restricted operation,
 * as owner.c runs a superuser's call on the application's tables.
 *
 * The handler's FmgrInfo is kept for the backend (SQL and PL/pgSQL keep
 * their own caches in it or by OID), and dropped when any function is
 * changed (a syscache invalidation of pg_proc).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "base/base.h"
#include "keys/keys.h"

/* the last handler called, kept for the backend */
static Oid	cached_handler = InvalidOid;
static Oid	cached_owner = InvalidOid;
static Oid	cached_namespace = InvalidOid;
static FmgrInfo cached_flinfo;
static MemoryContext handler_cxt = NULL;

/* handlers running now: a handler may call okno_idempotent again */
static int	calls_running = 0;

static void
handler_inval_callback(Datum arg pg_attribute_unused(),
					   int cacheid pg_attribute_unused(),
					   uint32 hashvalue pg_attribute_unused())
{
	cached_handler = InvalidOid;
}

/*
 * Register the invalidation that drops the kept handler.
 */
void
okno_handler_init(void)
{
	CacheRegisterSyscacheCallback(PROCOID, handler_inval_callback, (Datum) 0);
}

static char *
handler_name(Oid handler)
{
	return format_procedure(handler);
}

/*
 * The caller's privileges on the handler: USAGE on its schema nsp, as
 * finding it by name needs, and EXECUTE on it (42501).
 */
static void
check_privileges(Oid handler, Oid nsp)
{
	AclResult	acl;

	acl = okno_object_aclcheck(NamespaceRelationId, nsp, GetUserId(), ACL_USAGE);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_SCHEMA, get_namespace_name(nsp));
	acl = okno_object_aclcheck(ProcedureRelationId, handler, GetUserId(), ACL_EXECUTE);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_FUNCTION, get_func_name(handler));
}

/*
 * Refuse a handler that is not handler(jsonb) RETURNS jsonb, a plain
 * function the caller may execute; return its owner and schema.
 */
static Oid
check_handler(Oid handler, Oid *nsp)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	Oid			owner;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(handler));
	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("handler function with OID %u does not exist", handler)));
	proc = (Form_pg_proc) GETSTRUCT(tup);
	if (proc->prokind != PROKIND_FUNCTION || proc->proretset ||
		proc->pronargs != 1 || proc->proargtypes.values[0] != JSONBOID ||
		proc->prorettype != JSONBOID)
	{
		ReleaseSysCache(tup);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("function %s cannot be an idempotency handler", handler_name(handler)),
				 errdetail("A handler is a function of one jsonb argument (the request) that returns jsonb (the response), not a set."),
				 errhint("Pass a function such as my_handler(jsonb), declared RETURNS jsonb.")));
	}
	owner = proc->proowner;
	*nsp = proc->pronamespace;
	ReleaseSysCache(tup);

	check_privileges(handler, *nsp);
	return owner;
}

/*
 * Check the handler before anything else of a request is done: its kind
 * and signature (22023), the caller's USAGE on its schema and EXECUTE on
 * it (42501).
 */
void
okno_handler_check(Oid handler)
{
	Oid			nsp;

	if (handler == cached_handler)
		check_privileges(handler, cached_namespace);
	else
		(void) check_handler(handler, &nsp);
}

/*
 * Call the handler with the request, as the caller (a superuser: as the
 * handler's owner, above); its response, never NULL, in the current memory
 * context.
 */
Jsonb *
okno_handler_call(Oid handler, Jsonb *request)
{
	LOCAL_FCINFO(fcinfo, 1);
	FmgrInfo   *flinfo;
	Oid			owner;
	Oid			nsp;
	OknoGuard	guard;
	Datum		result;

	if (calls_running == 0)
	{
		/* keep the FmgrInfo (SQL functions cache their plans in it) */
		if (handler != cached_handler)
		{
			owner = check_handler(handler, &nsp);
			if (handler_cxt == NULL)
				handler_cxt = AllocSetContextCreate(TopMemoryContext, "okno handler",
													ALLOCSET_SMALL_SIZES);
			else
				MemoryContextReset(handler_cxt);
			fmgr_info_cxt(handler, &cached_flinfo, handler_cxt);
			cached_owner = owner;
			cached_namespace = nsp;
			cached_handler = handler;
		}
		flinfo = &cached_flinfo;
		owner = cached_owner;
	}
	else
	{
		/* a handler's own okno_idempotent: never reuse the running one's */
		owner = check_handler(handler, &nsp);
		flinfo = palloc0(sizeof(FmgrInfo));
		fmgr_info(handler, flinfo);
	}

	calls_running++;
	PG_TRY();
	{
		/* a superuser runs another role's handler as that role (owner.c) */
		okno_guard_begin_owner(&guard, owner);
		InitFunctionCallInfoData(*fcinfo, flinfo, 1, InvalidOid, NULL, NULL);
		fcinfo->args[0].value = JsonbPGetDatum(request);
		fcinfo->args[0].isnull = false;
		result = FunctionCallInvoke(fcinfo);
		okno_guard_end(&guard);
	}
	PG_FINALLY();
	{
		calls_running--;
	}
	PG_END_TRY();

	if (fcinfo->isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("idempotency handler %s returned NULL", handler_name(handler)),
				 errdetail("The handler's response is stored with the key and replayed to every retry."),
				 errhint("Return a jsonb value; a response of no content is 'null'::jsonb.")));
	return DatumGetJsonbPCopy(result);
}
