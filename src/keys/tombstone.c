/*-------------------------------------------------------------------------
 *
 * tombstone.c
 *	  A key's identity and its hash, the tombstone okno_purge leaves of an
 *	  expired key, and the setting okno.key_tombstone_age.
 *
 * When okno_purge removes a key's stored response (a booking's row of
 * idempotency, an operation's row of okno_key), it leaves a tombstone in
 * okno_key_tombstone: the SHA-256 of the key's identity and when it
 * expired, no response.  A retry with an expired key is then answered
 * key_expired (OKB11, HTTP 410 Gone) instead of being run a second time.
 * Tombstones are kept for okno.key_tombstone_age (90 days by default; 0
 * turns them off) and purged after it; then the key is new again.  An okno
 * installed before 0.7.0 has no okno_key_tombstone: there no key is
 * expired.
 *
 * The identity is one text, so that SQL (okno_purge, okno_verify) computes
 * the same hash with sha256(convert_to(..., 'UTF8')):
 *	   operation ":" key ":" scope		an operation's key
 *	   ":" key ":" actor				a booking's key
 * Operation names and keys hold no ":" (key_args.c), and an operation's name
 * is never empty, so each identity names one key: the scope, which may
 * hold anything, comes last, and a booking's identity alone starts with
 * ":".  The text is UTF-8 whatever the database's encoding.
 *
 * The tombstones are read as okno reads its own state, not as the caller
 * (as a foreign-key check reads the table it references): a create needs
 * no privilege on okno_key_tombstone, and learns nothing from it that the
 * key_expired error does not say.  Where Citus has the table
 * (okno_distribute_own_tables() makes it a reference table: a copy on
 * every node), its shell is empty: the tombstone is looked up by a
 * statement, which Citus runs on this node's copy, run as the table's
 * owner (as ri_triggers.c runs a foreign key's check as the referenced
 * table's owner; the statement is okno's own and reads okno's own table,
 * whose owner is the superuser that installed okno).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/base.h"
#include "keys/keys.h"

/* the lookup where Citus has okno_key_tombstone */
static OknoPlan tombstone_plan = {
	.sql = "SELECT true FROM %1$s.okno_key_tombstone WHERE key_hash OPERATOR(pg_catalog.=) $1",
	.nargs = 1,
	.argtypes = {BYTEAOID},
	.own = true
};

/* GUC: seconds a tombstone is kept (0: none is written, all are purged) */
static int	tombstone_age = 90 * 24 * 60 * 60;

/*
 * Define okno.key_tombstone_age.
 */
void
okno_tombstone_init(void)
{
	DefineCustomIntVariable("okno.key_tombstone_age",
							"How long okno_purge keeps the tombstone of an expired idempotency key.",
							"A retry with a key whose tombstone is kept gets key_expired (OKB11); "
							"0 turns tombstones off.",
							&tombstone_age,
							90 * 24 * 60 * 60, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_S,
							NULL, NULL, NULL);
}

/*
 * okno.key_tombstone_age, in seconds.
 */
int
okno_key_tombstone_age(void)
{
	return tombstone_age;
}

/*
 * Append the identity of the key ref names to out, in UTF-8.
 */
void
okno_key_identity(const OknoKeyRef *ref, StringInfo out)
{
	if (ref->operation == NULL)
	{
		appendStringInfo(out, ":%s:%d", ref->key, ref->actor);
		return;
	}
	appendStringInfo(out, "%s:%s:", ref->operation, ref->key);
	if (GetDatabaseEncoding() == PG_UTF8 || GetDatabaseEncoding() == PG_SQL_ASCII)
		appendStringInfoString(out, ref->scope);
	else
		appendStringInfoString(out, pg_server_to_any(ref->scope, strlen(ref->scope), PG_UTF8));
}

/*
 * The SHA-256 of the key's identity: what its tombstone keeps.
 */
void
okno_key_hash(const OknoKeyRef *ref, uint8 hash[OKNO_HASH_LEN])
{
	StringInfoData identity;

	initStringInfo(&identity);
	okno_key_identity(ref, &identity);
	okno_sha256(identity.data, identity.len, hash);
	pfree(identity.data);
}

/*
 * Whether okno_key_tombstone (relid) holds the hash key, by a statement
 * (Citus has the table), run as the table's owner: see above.
 */
static bool
tombstone_sql(Oid relid, Datum key)
{
	int			rc;
	bool		found;

	okno_spi_connect();
	rc = okno_execute_as_owner(relid, &tombstone_plan, &key, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "tombstone lookup");
	found = (SPI_processed > 0);
	okno_spi_finish();
	return found;
}

/*
 * Whether the key ref names has a tombstone, in the latest snapshot: a
 * purge that removed the key after the caller's snapshot was taken left
 * its tombstone in the same transaction, and a tombstone always means
 * that the key's request ran once.  (Where Citus has the table, in the
 * snapshot a statement takes: the latest under READ COMMITTED.)  False
 * where okno_key_tombstone does not exist (a database not yet updated to
 * okno 0.7.0).
 */
bool
okno_key_expired(const OknoKeyRef *ref)
{
	static const OknoDirectCols cols = {
		.ncols = 1, .nkeys = 1, .names = {"key_hash"}, .keytypes = {BYTEAOID}
	};
	Oid			relid = okno_relid_by_name(OKNO_TOMBSTONE_TABLE);
	Oid			indexid;
	OknoDirectRel *r;
	uint8		hash[OKNO_HASH_LEN];
	bytea	   *value;
	Datum		key;
	bool		found;

	if (!OidIsValid(relid))
		return false;

	okno_key_hash(ref, hash);
	value = palloc(VARHDRSZ + OKNO_HASH_LEN);
	SET_VARSIZE(value, VARHDRSZ + OKNO_HASH_LEN);
	memcpy(VARDATA(value), hash, OKNO_HASH_LEN);
	key = PointerGetDatum(value);

	if (okno_direct_rel(relid, &cols)->citus)
		found = tombstone_sql(relid, key);
	else
	{
		indexid = okno_relid_by_name(OKNO_TOMBSTONE_INDEX);
		if (!OidIsValid(indexid))
			elog(ERROR, "okno's index \"%s\" is missing", OKNO_TOMBSTONE_INDEX);
		r = okno_direct_open(relid, &cols, AccessShareLock);
		if (!okno_direct_open_index(r, indexid))
			elog(ERROR, "okno's index \"%s\" is not a btree on the key's hash", OKNO_TOMBSTONE_INDEX);
		found = okno_direct_probe(r, &key, GetLatestSnapshot(), NULL);
		okno_direct_close(r);
	}
	pfree(value);
	return found;
}

/*
 * Raise key_expired if the key ref names has a tombstone (see above).
 */
void
okno_check_expired(const OknoKeyRef *ref)
{
	if (okno_key_expired(ref))
		okno_error_key_expired(okno_key_owner(ref), ref->key);
}
