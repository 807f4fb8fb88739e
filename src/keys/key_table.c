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
#include "executor/tuptable.h"
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

/*
 * The caller's privileges on okno_key, checked before a request's key is
 * locked (store false: SELECT of what the lookup reads) and before its
 * tombstone is read (store true: INSERT of what the store writes), so that
 * a role that may not look the key up, or not store it, learns nothing of
 * it: neither that a request holds it nor that it expired (42501).
 */
static void
check_privileges(bool store)
{
	const OknoDirectRel *r = key_table_checked(okno_direct_rel(key_table_relid(), &key_cols));

	okno_rt_check(store ? &r->write_rt : &r->read_rt);
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

	r = key_table_open(AccessShareLock, true);
	okno_rt_check(&r->read_rt);

	okno_push_statement_snapshot(snapshot);
	key[0] = text_datum(ref->operation);
	key[1] = text_datum(ref->scope);
	key[2] = text_datum(ref->key);
	slot = table_slot_create(r->rel, NULL);
	out->found = okno_direct_probe(r, key, GetActiveSnapshot(), slot);
	if (out->found)
	{
		bool		isnull;
		Datum		d;
		bytea	   *fp;
		MemoryContext oldcxt;

		d = slot_getattr(slot, r->attnum[COL_FINGERPRINT], &isnull);
		fp = isnull ? NULL : DatumGetByteaPP(d);
		if (fp == NULL || VARSIZE_ANY_EXHDR(fp) != OKNO_HASH_LEN)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("idempotency key \"%s\" of %s has a malformed fingerprint",
							ref->key, okno_key_owner(ref)),
					 errdetail("A fingerprint is the 32 bytes of a SHA-256 digest.")));
		memcpy(out->fingerprint, VARDATA_ANY(fp), OKNO_HASH_LEN);

		d = slot_getattr(slot, r->attnum[COL_RESPONSE], &isnull);
		if (isnull)
			elog(ERROR, "okno_key row of %s has a null response", okno_key_owner(ref));
		oldcxt = MemoryContextSwitchTo(resultcxt);
		out->response = DatumGetJsonbPCopy(d);
		MemoryContextSwitchTo(oldcxt);
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

/* operations' store of keys, for the contract (contract.c) */
const OknoKeyStore okno_operation_keys = {
	.check_privileges = check_privileges,
	.claimed = okno_claim_open,
	.lookup = lookup,
	.same_request = same_request
};

/*
 * Store the key ref names with its fingerprint and response, as an INSERT
 * statement would; what follows in the transaction sees the row.
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

	r = key_table_open(RowExclusiveLock, false);
	okno_rt_check(&r->write_rt);

	fp = palloc(VARHDRSZ + OKNO_HASH_LEN);
	SET_VARSIZE(fp, VARHDRSZ + OKNO_HASH_LEN);
	memcpy(VARDATA(fp), fingerprint, OKNO_HASH_LEN);

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
