/*-------------------------------------------------------------------------
 *
 * key_table.c
 *	  okno's table of operations' keys, okno_key: a key's lookup, and the
 *	  store of its fingerprint and response.
 *
 *	  okno_key (operation, scope, request_key) primary key, fingerprint
 *	  bytea (the SHA-256 of the request's RFC 8785 form), response jsonb,
 *	  created_at timestamptz (when the key was first used: the transaction's
 *	  start, as now()).
 *
 * The table is okno's own, so both are done directly (base/direct.c: a
 * probe of okno_key_pkey, an insert of a row), with the locks, privilege
 * check and snapshot that a SELECT and an INSERT would have.  The caller
 * needs SELECT on the columns it reads and INSERT on those it writes, as
 * those statements would (the role that installed okno has them, with the
 * grant option).  okno's table has no triggers, rules or row-level
 * security (nobody but a superuser could add them); a table that has any
 * is refused rather than written around them.
 *
 * Where Citus distributes okno_key (okno_distribute_own_tables(): each
 * node's okno_key is then a shell, its rows in the shards), both are
 * statements instead, which Citus plans and sends to the key's shard; and
 * since okno's lock of a key is each node's own, the key's row is the
 * arbiter between nodes (contract.c): a new request claims its key by
 * inserting the row first, with the response JSON null, and its store
 * writes the response into it (an UPDATE: there the caller also needs
 * UPDATE of response).  The claimed row is never seen with null by anyone
 * else: a transaction that commits has stored its claims (claim.c).
 *
 * Neither needs the application's five tables: an operation's keys work in
 * a database that has none of them.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/base.h"
#include "keys/keys.h"

/*
 * okno_key's columns: the key, what the lookup reads and the store
 * writes (every column but created_at, which the INSERT would leave to its
 * default, now(): written here as the transaction's start)
 */
typedef enum KeyColumn
{
	COL_OPERATION,
	COL_SCOPE,
	COL_KEY,
	COL_FINGERPRINT,
	COL_RESPONSE,
	COL_CREATED_AT,
	NUM_COLS
} KeyColumn;

static const OknoDirectCols key_cols = {
	.ncols = NUM_COLS,
	.nkeys = 3,
	.nchecked = COL_CREATED_AT,
	.names = {"operation", "scope", "request_key", "fingerprint", "response", "created_at"},
	.keytypes = {TEXTOID, TEXTOID, TEXTOID}
};

/* the statements of the lookup, the claim and the store where Citus has okno_key */
#define KEY_ARGTYPES TEXTOID, TEXTOID, TEXTOID
#define WHERE_KEY \
	" WHERE operation OPERATOR(pg_catalog.=) $1 AND scope OPERATOR(pg_catalog.=) $2" \
	" AND request_key OPERATOR(pg_catalog.=) $3"

static OknoPlan lookup_plan = {
	.sql = "SELECT fingerprint, response FROM %1$s.okno_key" WHERE_KEY,
	.nargs = 3,
	.argtypes = {KEY_ARGTYPES},
	.own = true
};

static OknoPlan claim_plan = {
	.sql =
	"INSERT INTO %1$s.okno_key (operation, scope, request_key, fingerprint, response)"
	" VALUES ($1, $2, $3, $4, 'null'::pg_catalog.jsonb)"
	" ON CONFLICT (operation, scope, request_key) DO NOTHING",
	.nargs = 4,
	.argtypes = {KEY_ARGTYPES, BYTEAOID},
	.own = true
};

static OknoPlan store_plan = {
	.sql = "UPDATE %1$s.okno_key SET response = $4" WHERE_KEY,
	.nargs = 4,
	.argtypes = {KEY_ARGTYPES, JSONBOID},
	.own = true
};

/*
 * okno_key's OID; an error where the table does not exist (a database not
 * yet updated to okno 0.7.0).
 */
static Oid
key_table_relid(void)
{
	Oid			relid = okno_relid_by_name(OKNO_KEY_TABLE);

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("okno's table \"%s\" does not exist", OKNO_KEY_TABLE),
				 errhint("Update okno to its current version with ALTER EXTENSION okno UPDATE.")));
	return relid;
}

/*
 * okno_key's entry of the relation map; an error where a column is
 * missing.
 */
static OknoDirectRel *
key_table_checked(OknoDirectRel *r)
{
	int			i;

	if (!r->all_columns)
	{
		for (i = 0; i < NUM_COLS; i++)
			if (r->attnum[i] == InvalidAttrNumber)
				elog(ERROR, "okno's table \"%s\" has no column \"%s\"",
					 OKNO_KEY_TABLE, key_cols.names[i]);
	}
	return r;
}

/* okno_key's entry of the relation map (its columns, whether Citus has it) */
static const OknoDirectRel *
key_table(void)
{
	return key_table_checked(okno_direct_rel(key_table_relid(), &key_cols));
}

/*
 * The caller's privileges on okno_key, checked before a request's key is
 * locked (store false: SELECT of what the lookup reads) and before its
 * tombstone is read (store true: INSERT of what the store writes, and
 * where Citus has okno_key UPDATE of the response), so that a role that
 * may not look the key up, or not store it, learns nothing of it: neither
 * that a request holds it nor that it expired (42501).
 */
static bool
check_privileges(bool store, bool raise)
{
	const OknoDirectRel *r = key_table();
	const OknoRangeTable *rt = store ? &r->write_rt : &r->read_rt;

	if (!okno_rt_check(rt, raise))
		return false;
	/* the table's privilege, or the column's */
	if (store && r->citus &&
		pg_class_aclcheck(r->relid, GetUserId(), ACL_UPDATE) != ACLCHECK_OK &&
		pg_attribute_aclcheck(r->relid, r->attnum[COL_RESPONSE], GetUserId(),
							  ACL_UPDATE) != ACLCHECK_OK)
	{
		if (raise)
			aclcheck_error_col(ACLCHECK_NO_PRIV, OBJECT_TABLE, OKNO_KEY_TABLE,
							   key_cols.names[COL_RESPONSE]);
		return false;
	}
	return true;
}

/*
 * Open okno_key with lockmode (and its key's index, for a lookup); refuse
 * a table that a superuser gave triggers, rules or row security.
 */
static OknoDirectRel *
key_table_open(LOCKMODE lockmode, bool lookup)
{
	OknoDirectRel *r;
	Relation	rel;

	r = key_table_checked(okno_direct_open(key_table_relid(), &key_cols, lockmode));
	rel = r->rel;
	if (rel->rd_rel->relkind != RELKIND_RELATION ||
		rel->trigdesc != NULL || rel->rd_rules != NULL ||
		rel->rd_rel->relrowsecurity)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("okno's table \"%s.%s\" has triggers, rules or row-level security",
						okno_schema_name(), RelationGetRelationName(rel)),
				 errdetail("okno writes its own tables directly and does not run code of other roles on them."),
				 errhint("Drop the triggers, rules or policies of okno's table.")));
	if (lookup)
	{
		Oid			indexid = okno_relid_by_name(OKNO_KEY_INDEX);

		if (!OidIsValid(indexid))
			elog(ERROR, "okno's index \"%s\" is missing", OKNO_KEY_INDEX);
		if (!okno_direct_open_index(r, indexid))
			elog(ERROR, "okno's index \"%s\" is not a btree on the key", OKNO_KEY_INDEX);
	}
	return r;
}

static Datum
text_datum(const char *s)
{
	return PointerGetDatum(cstring_to_text(s));
}

/* the key's three texts, the statements' first three parameters */
static void
key_values(const OknoKeyRef *ref, Datum *values)
{
	values[0] = text_datum(ref->operation);
	values[1] = text_datum(ref->scope);
	values[2] = text_datum(ref->key);
}

/*
 * The stored key's fingerprint and response (isnull: as read), checked,
 * into out; the response copied into resultcxt.
 */
static void
stored_key(const OknoKeyRef *ref, Datum fingerprint, bool fp_isnull,
		   Datum response, bool response_isnull, MemoryContext resultcxt,
		   OknoStoredKey *out)
{
	bytea	   *fp = fp_isnull ? NULL : DatumGetByteaPP(fingerprint);
	MemoryContext oldcxt;

	if (fp == NULL || VARSIZE_ANY_EXHDR(fp) != OKNO_HASH_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idempotency key \"%s\" of %s has a malformed fingerprint",
						ref->key, okno_key_owner(ref)),
				 errdetail("A fingerprint is the 32 bytes of a SHA-256 digest.")));
	memcpy(out->fingerprint, VARDATA_ANY(fp), OKNO_HASH_LEN);
	if (response_isnull)
		elog(ERROR, "okno_key row of %s has a null response", okno_key_owner(ref));
	oldcxt = MemoryContextSwitchTo(resultcxt);
	out->response = DatumGetJsonbPCopy(response);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * The lookup where Citus has okno_key: its statement, in snapshot (see
 * lookup).
 */
static void
lookup_sql(const OknoKeyRef *ref, Snapshot snapshot, MemoryContext resultcxt,
		   OknoStoredKey *out)
{
	Datum		values[3];
	int			rc;

	okno_spi_connect();
	key_values(ref, values);
	if (snapshot == InvalidSnapshot)
		rc = SPI_execute_plan(okno_plan(&lookup_plan), values, NULL, false, 1);
	else
		rc = SPI_execute_snapshot(okno_plan(&lookup_plan), values, NULL,
								  snapshot, InvalidSnapshot, true, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "okno_key lookup");
	out->found = (SPI_processed > 0);
	if (out->found)
	{
		HeapTuple	tuple = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		fp_isnull;
		bool		response_isnull;
		Datum		fp = SPI_getbinval(tuple, desc, 1, &fp_isnull);
		Datum		response = SPI_getbinval(tuple, desc, 2, &response_isnull);

		stored_key(ref, fp, fp_isnull, response, response_isnull, resultcxt, out);
	}
	okno_spi_finish();
}

/*
 * Look up the key ref names (an operation's) in snapshot, or with
 * InvalidSnapshot in the snapshot a statement would take now (a new one
 * under READ COMMITTED); the response is copied into resultcxt.
 */
static void
lookup(const OknoKeyRef *ref, const void *request pg_attribute_unused(),
	   Snapshot snapshot, MemoryContext resultcxt, OknoStoredKey *out)
{
	OknoDirectRel *r;
	Datum		key[3];
	TupleTableSlot *slot;

	Assert(ref->operation != NULL);

	if (key_table()->citus)
	{
		lookup_sql(ref, snapshot, resultcxt, out);
		return;
	}

	r = key_table_open(AccessShareLock, true);
	(void) okno_rt_check(&r->read_rt, true);

	okno_push_statement_snapshot(snapshot);
	key_values(ref, key);
	slot = table_slot_create(r->rel, NULL);
	out->found = okno_direct_probe(r, key, GetActiveSnapshot(), slot);
	if (out->found)
	{
		bool		fp_isnull;
		bool		response_isnull;
		Datum		fp = slot_getattr(slot, r->attnum[COL_FINGERPRINT], &fp_isnull);
		Datum		response = slot_getattr(slot, r->attnum[COL_RESPONSE], &response_isnull);

		stored_key(ref, fp, fp_isnull, response, response_isnull, resultcxt, out);
	}
	ExecDropSingleTupleTableSlot(slot);
	PopActiveSnapshot();
	okno_direct_close(r);
}

/* whether stored is the key of the request whose fingerprint is request */
static bool
same_request(const OknoKeyRef *ref pg_attribute_unused(), const OknoStoredKey *stored,
			 const void *request)
{
	return memcmp(stored->fingerprint, request, OKNO_HASH_LEN) == 0;
}

/*
 * the key's lock tried on its shard's node where Citus has okno_key ($4);
 * the subquery, routed by the key, locks no row (an operation is never
 * NULL; $1 and $2 unused), see okno_key_try_lock_on_shard
 */
static OknoPlan try_lock_plan = {
	.sql =
	"SELECT pg_catalog.pg_try_advisory_xact_lock($4), pg_catalog.count(*)"
	" FROM (SELECT FROM %1$s.okno_key"
	"  WHERE request_key OPERATOR(pg_catalog.=) $3 AND operation IS NULL"
	"  AND $1::pg_catalog.text IS NOT NULL AND $2::pg_catalog.text IS NOT NULL"
	"  FOR UPDATE) AS x",
	.nargs = 4,
	.argtypes = {KEY_ARGTYPES, INT8OID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN,
	.own = true
};

static OknoShardLock
try_lock_on_shard(const OknoKeyRef *ref)
{
	Datum		values[4];

	if (!key_table()->citus)
		return OKNO_SHARD_LOCK_NONE;
	key_values(ref, values);
	return okno_key_try_lock_on_shard(ref, okno_relid_by_name(OKNO_KEY_TABLE), &try_lock_plan,
									  values, 3);
}

/* operations' store of keys, for the contract (contract.c) */
const OknoKeyStore okno_operation_keys = {
	.check_privileges = check_privileges,
	.try_lock_on_shard = try_lock_on_shard,
	.claimed = okno_claim_open,
	.lookup = lookup,
	.same_request = same_request
};

/* the fingerprint's bytes as a bytea */
static bytea *
fingerprint_bytea(const uint8 fingerprint[OKNO_HASH_LEN])
{
	bytea	   *fp = palloc(VARHDRSZ + OKNO_HASH_LEN);

	SET_VARSIZE(fp, VARHDRSZ + OKNO_HASH_LEN);
	memcpy(VARDATA(fp), fingerprint, OKNO_HASH_LEN);
	return fp;
}

/*
 * Claim the key ref names, which the contract found new, for the request
 * whose fingerprint is given: where Citus has okno_key, by inserting its
 * row (see above); false when another request's row holds it, after
 * waiting for that request's transaction to commit (look the key up
 * again).  True at once elsewhere: there the key's lock is the arbiter.
 */
bool
okno_op_key_claim_row(const OknoKeyRef *ref, const uint8 fingerprint[OKNO_HASH_LEN])
{
	Datum		values[4];
	bool		claimed;

	if (!key_table()->citus)
		return true;
	okno_spi_connect();
	key_values(ref, values);
	values[3] = PointerGetDatum(fingerprint_bytea(fingerprint));
	claimed = okno_key_claim_row(ref, okno_plan(&claim_plan), values, SPI_OK_INSERT);
	okno_spi_finish();
	return claimed;
}

/*
 * The store where Citus has okno_key: the response written into the row
 * this transaction's claim inserted.
 */
static void
store_sql(const OknoKeyRef *ref, Jsonb *response)
{
	Datum		values[4];
	int			rc;

	okno_spi_connect();
	key_values(ref, values);
	values[3] = JsonbPGetDatum(response);
	rc = SPI_execute_plan(okno_plan(&store_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_UPDATE, "okno_key store");
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the row of idempotency key \"%s\" of %s is missing from okno's table \"%s\"",
						ref->key, okno_key_owner(ref), OKNO_KEY_TABLE),
				 errdetail("Where Citus distributes okno_key, a key's row is inserted when the key is claimed and its response written when it is stored; the row was gone."),
				 errhint("Do not delete okno_key's rows in a transaction that claims keys.")));
	okno_spi_finish();
}

/*
 * Store the key ref names with its fingerprint and response, as an INSERT
 * statement would (where Citus has okno_key: into the row its claim
 * inserted); what follows in the transaction sees the row.
 */
void
okno_op_key_insert(const OknoKeyRef *ref, const uint8 fingerprint[OKNO_HASH_LEN],
				   Jsonb *response)
{
	OknoDirectRel *r;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	bytea	   *fp;

	if (key_table()->citus)
	{
		store_sql(ref, response);
		return;
	}

	r = key_table_open(RowExclusiveLock, false);
	(void) okno_rt_check(&r->write_rt, true);

	fp = fingerprint_bytea(fingerprint);

	okno_push_statement_snapshot(InvalidSnapshot);
	estate = okno_direct_begin(&r->write_rt);
	rri = okno_direct_result_rel(estate, 1, NULL);
	slot = okno_direct_row(estate, rri);
#define SET_COL(col, value) \
	do { \
		slot->tts_values[r->attnum[col] - 1] = (value); \
		slot->tts_isnull[r->attnum[col] - 1] = false; \
	} while (0)
	SET_COL(COL_OPERATION, text_datum(ref->operation));
	SET_COL(COL_SCOPE, text_datum(ref->scope));
	SET_COL(COL_KEY, text_datum(ref->key));
	SET_COL(COL_FINGERPRINT, PointerGetDatum(fp));
	SET_COL(COL_RESPONSE, JsonbPGetDatum(response));
	SET_COL(COL_CREATED_AT, TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()));
#undef SET_COL
	okno_direct_insert(estate, rri, slot);
	okno_direct_end(estate);
	PopActiveSnapshot();
	okno_direct_close(r);

	/* what follows in this statement sees the new row */
	CommandCounterIncrement();
}
