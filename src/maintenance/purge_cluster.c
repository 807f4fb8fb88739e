/*-------------------------------------------------------------------------
 *
 * purge_cluster.c
 *	  okno_purge's keys on a Citus cluster: a key forgotten in two purges.
 *
 * purge.c walks each table of keys in keyset batches, as on one server;
 * where Citus has the table (or the tombstones), each batch is this
 * file's: the statements below, one table each.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "keys/keys.h"
#include "maintenance/maintenance.h"

/*
 * 0.8.0, on a Citus cluster: a key is forgotten in two purges (README,
 * "Scaling out with Citus"; docs/citus/KEYS.md, "Purge on a cluster").  A
 * key's row and its tombstone lie on different nodes, which Citus commits
 * one after the other with no snapshot across them, so one transaction
 * that deleted the key and wrote its tombstone would let a retry that
 * reads both between the two commits find neither, and run again.  So a
 * purge writes a pending tombstone (expired_at 'infinity') of each expired
 * key and keeps the key (a retry meanwhile replays it); a later purge
 * settles the pending tombstones of the expired keys (sets their
 * expired_at) and deletes those keys, once they are committed on every
 * node (okno_purge_cluster_may_settle).  Each statement names one table
 * (Citus plans a distributed table, a reference table and a node's own
 * apart) and no hash in a DELETE's condition (Citus refuses a STABLE
 * function there, and a key's hash converts its text to UTF-8): the
 * expired keys of a range are read with their hashes, and deleted by their
 * columns.
 *
 * The range of a batch is the walk's ($1 .. the last key, then the
 * boundary, NULL for the last batch), then the cutoff.
 */
#define OKNO_SQL_KEY_RANGE \
	" WHERE (i.actor_id, i.request_key) OPERATOR(pg_catalog.>) ($1, $2)" \
	" AND ($3::pg_catalog.int4 IS NULL" \
	"  OR (i.actor_id, i.request_key) OPERATOR(pg_catalog.<=) ($3, $4))" \
	" AND i.created_at OPERATOR(pg_catalog.<) $5"

static OknoPlan cluster_key_expired_plan = {
	.sql =
	"SELECT i.actor_id, i.request_key::pg_catalog.text, "
	OKNO_SQL_BOOKING_KEY_HASH("i.actor_id", "i.request_key")
	" FROM %1$s.idempotency AS i" OKNO_SQL_KEY_RANGE,
	.nargs = 5,
	.argtypes = {INT4OID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID}
};

static OknoPlan cluster_key_forget_plan = {
	.sql = "DELETE FROM %1$s.idempotency AS i" OKNO_SQL_KEY_RANGE,
	.nargs = 5,
	.argtypes = {INT4OID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID}
};

static OknoPlan cluster_key_remove_plan = {
	.sql =
	"DELETE FROM %1$s.idempotency AS i" OKNO_SQL_KEY_RANGE
	" AND (i.actor_id, i.request_key) IN (SELECT u.a, u.k"
	"  FROM ROWS FROM (pg_catalog.unnest($6::pg_catalog.int4[]),"
	"                  pg_catalog.unnest($7::pg_catalog.text[])) AS u (a, k))",
	.nargs = 7,
	.argtypes = {INT4OID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID, INT4ARRAYOID, TEXTARRAYOID}
};

#define OKNO_SQL_OP_KEY_RANGE \
	" WHERE (k.operation, k.scope, k.request_key) OPERATOR(pg_catalog.>) ($1, $2, $3)" \
	" AND ($4::pg_catalog.text IS NULL" \
	"  OR (k.operation, k.scope, k.request_key) OPERATOR(pg_catalog.<=) ($4, $5, $6))" \
	" AND k.created_at OPERATOR(pg_catalog.<) $7"

static OknoPlan cluster_op_key_expired_plan = {
	.sql =
	"SELECT k.operation, k.scope, k.request_key, "
	OKNO_SQL_OPERATION_KEY_HASH("k.operation", "k.scope", "k.request_key")
	" FROM %1$s.okno_key AS k" OKNO_SQL_OP_KEY_RANGE,
	.nargs = 7,
	.argtypes = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
	.own = true
};

static OknoPlan cluster_op_key_forget_plan = {
	.sql = "DELETE FROM %1$s.okno_key AS k" OKNO_SQL_OP_KEY_RANGE,
	.nargs = 7,
	.argtypes = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
	.own = true
};

static OknoPlan cluster_op_key_remove_plan = {
	.sql =
	"DELETE FROM %1$s.okno_key AS k" OKNO_SQL_OP_KEY_RANGE
	" AND (k.operation, k.scope, k.request_key) IN (SELECT u.o, u.s, u.k"
	"  FROM ROWS FROM (pg_catalog.unnest($8::pg_catalog.text[]),"
	"                  pg_catalog.unnest($9::pg_catalog.text[]),"
	"                  pg_catalog.unnest($10::pg_catalog.text[])) AS u (o, s, k))",
	.nargs = 10,
	.argtypes = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID,
	TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID},
	.own = true
};

/* settle the pending tombstones among the hashes $1: the keys to delete */
static OknoPlan tombstone_settle_plan = {
	.sql =
	"UPDATE %1$s.okno_key_tombstone AS t SET expired_at = pg_catalog.now()"
	" WHERE t.key_hash OPERATOR(pg_catalog.=) ANY ($1)"
	" AND t.expired_at OPERATOR(pg_catalog.=) 'infinity'::pg_catalog.timestamptz"
	" RETURNING t.key_hash",
	.nargs = 1,
	.argtypes = {BYTEAARRAYOID},
	.own = true
};

/* a pending tombstone of each hash of $1 but those of $2 (settled) */
static OknoPlan tombstone_pending_plan = {
	.sql =
	"INSERT INTO %1$s.okno_key_tombstone AS t (key_hash, expired_at)"
	" SELECT h.h, 'infinity'::pg_catalog.timestamptz FROM pg_catalog.unnest($1) AS h (h)"
	"  WHERE h.h OPERATOR(pg_catalog.<>) ALL ($2)"
	" ON CONFLICT (key_hash) DO UPDATE SET expired_at = EXCLUDED.expired_at",
	.nargs = 2,
	.argtypes = {BYTEAARRAYOID, BYTEAARRAYOID},
	.own = true
};

/*
 * Whether any node holds a prepared transaction of Citus's in this
 * database: one being committed right now, or one in doubt (a node failed
 * between a commit's COMMIT PREPAREDs, and Citus's recovery has not
 * finished it).  A pending tombstone of a reference table that this node
 * sees committed may be such a transaction's, not committed on another
 * node yet, so the purge then settles none (a later one does).  A node
 * that does not answer counts as one.
 */
static OknoPlan in_doubt_plan = {
	.sql =
	"SELECT FROM pg_catalog.run_command_on_all_nodes("
	"$okno$SELECT pg_catalog.count(*) FROM pg_catalog.pg_prepared_xacts"
	" WHERE pg_catalog.starts_with(gid, 'citus_')"
	" AND database OPERATOR(pg_catalog.=) pg_catalog.current_database()$okno$) AS r"
	" WHERE NOT r.success OR r.result OPERATOR(pg_catalog.<>) '0' LIMIT 1",
	.nargs = 0,
	.own = true
};

/*
 * whether a named subscriber exists (refused on a cluster that does not
 * have them laid out: outbox/fan_out.c)
 */
static OknoPlan any_subscriber_plan = {
	.sql = "SELECT FROM %1$s.okno_subscriber LIMIT 1",
	.nargs = 0,
	.own = true
};

/*
 * The (local) transaction in which a purge on a cluster wrote pending
 * tombstones last: a later purge in it must not settle them (they are not
 * committed on every node before the keys go), and settles none.
 */
static LocalTransactionId marked_in = InvalidLocalTransactionId;

/* note that this transaction wrote pending tombstones */
void
okno_purge_cluster_note_marked(void)
{
	marked_in = okno_local_xid();
}

/* qsort/bsearch order of hashes (bytea) */
static int
hash_cmp(const void *a, const void *b)
{
	bytea	   *x = *(bytea *const *) a;
	bytea	   *y = *(bytea *const *) b;
	int			lx = VARSIZE_ANY_EXHDR(x);
	int			ly = VARSIZE_ANY_EXHDR(y);
	int			c = memcmp(VARDATA_ANY(x), VARDATA_ANY(y), Min(lx, ly));

	return c != 0 ? c : (lx > ly) - (lx < ly);
}

/*
 * A table of keys on a Citus cluster: each statement takes a batch's
 * range and the cutoff; remove then the columns of the keys to delete, an
 * array of each.
 */
struct OknoClusterKeys
{
	int			nkeys;			/* columns of the primary key, at most 3 */
	OknoPlan   *expired;		/* the range's expired keys, then their hash */
	OknoPlan   *forget;			/* delete them (no tombstone is kept) */
	OknoPlan   *remove;			/* delete those given */
};

const OknoClusterKeys okno_cluster_booking_keys = {
	2, &cluster_key_expired_plan, &cluster_key_forget_plan, &cluster_key_remove_plan
};
const OknoClusterKeys okno_cluster_operation_keys = {
	3, &cluster_op_key_expired_plan, &cluster_op_key_forget_plan, &cluster_op_key_remove_plan
};

/*
 * An array of column col of the nrows rows of t; with chosen (sorted), of
 * those whose hash (column hashcol) is one of them.
 */
static Datum
column_array(SPITupleTable *t, uint64 nrows, int col, int hashcol,
			 bytea **chosen, uint64 nchosen)
{
	Oid			type = TupleDescAttr(t->tupdesc, col - 1)->atttypid;
	ArrayBuildState *a = initArrayResult(type, CurrentMemoryContext, false);
	uint64		i;
	bool		isnull;

	for (i = 0; i < nrows; i++)
	{
		if (chosen != NULL)
		{
			bytea	   *h = DatumGetByteaPP(SPI_getbinval(t->vals[i], t->tupdesc, hashcol, &isnull));

			if (bsearch(&h, chosen, nchosen, sizeof(bytea *), hash_cmp) == NULL)
				continue;
		}
		accumArrayResult(a, SPI_getbinval(t->vals[i], t->tupdesc, col, &isnull),
						 false, type, CurrentMemoryContext);
	}
	return makeArrayResult(a, CurrentMemoryContext);
}

/*
 * Settle the pending tombstones among hashes: those settled, copied and
 * sorted, in *settled (*nsettled of them), and as an array.
 */
static Datum
settle(Datum hashes, bytea ***settled, uint64 *nsettled, const char *what)
{
	ArrayBuildState *a = initArrayResult(BYTEAOID, CurrentMemoryContext, false);
	SPITupleTable *t;
	uint64		i;
	bool		isnull;
	int			rc;

	rc = SPI_execute_plan(okno_plan(&tombstone_settle_plan), &hashes, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_UPDATE_RETURNING, what);
	t = SPI_tuptable;
	*nsettled = SPI_processed;
	*settled = palloc(sizeof(bytea *) * Max(*nsettled, 1));
	for (i = 0; i < *nsettled; i++)
	{
		(*settled)[i] = DatumGetByteaPCopy(SPI_getbinval(t->vals[i], t->tupdesc, 1, &isnull));
		accumArrayResult(a, PointerGetDatum((*settled)[i]), false, BYTEAOID, CurrentMemoryContext);
	}
	SPI_freetuptable(t);
	qsort(*settled, *nsettled, sizeof(bytea *), hash_cmp);
	return makeArrayResult(a, CurrentMemoryContext);
}

/*
 * A batch of a table of keys on a Citus cluster (args: the batch's range,
 * the cutoff, whether tombstones are kept and whether to settle pending
 * ones): settle the pending tombstones of its expired keys and delete
 * those keys, then leave a pending tombstone of each other expired key;
 * or, when no tombstone is kept, delete its expired keys.  The keys
 * deleted.  The caller is connected to SPI.
 */
uint64
okno_purge_cluster_batch(const OknoClusterKeys *keys, Datum *args, char *nulls,
						 const char *what)
{
	int			n = keys->nkeys;
	int			cut = 2 * n;	/* the cutoff's argument; then keep's, settle's */
	Datum		remove_args[3 * OKNO_PURGE_WALK_MAXKEYS + 1];
	char		remove_nulls[3 * OKNO_PURGE_WALK_MAXKEYS + 1];
	Datum		hashes[2];
	bytea	  **settled = NULL;
	uint64		nsettled = 0;
	uint64		nexpired;
	uint64		deleted = 0;
	SPITupleTable *expired;
	MemoryContext batch_cxt;
	MemoryContext oldcxt;
	int			rc;
	int			k;

	if (!DatumGetBool(args[cut + 1]))
	{
		rc = SPI_execute_plan(okno_plan(keys->forget), args, nulls, false, 0);
		okno_check_spi(rc, SPI_OK_DELETE, what);
		return SPI_processed;
	}

	/* the expired keys of the range, and their hashes */
	rc = SPI_execute_plan(okno_plan(keys->expired), args, nulls, false, 0);
	okno_check_spi(rc, SPI_OK_SELECT, what);
	if (SPI_processed == 0)
		return 0;
	expired = SPI_tuptable;
	nexpired = SPI_processed;
	batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "okno purge batch",
									  ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(batch_cxt);
	hashes[0] = column_array(expired, nexpired, n + 1, n + 1, NULL, 0);

	/* settle their pending tombstones, and delete those keys */
	hashes[1] = PointerGetDatum(construct_empty_array(BYTEAOID));
	if (DatumGetBool(args[cut + 2]))
		hashes[1] = settle(hashes[0], &settled, &nsettled, what);
	if (nsettled > 0)
	{
		memcpy(remove_args, args, (cut + 1) * sizeof(Datum));
		memcpy(remove_nulls, nulls, cut + 1);
		for (k = 0; k < n; k++)
		{
			remove_args[cut + 1 + k] = column_array(expired, nexpired, k + 1, n + 1,
													settled, nsettled);
			remove_nulls[cut + 1 + k] = ' ';
		}
		rc = SPI_execute_plan(okno_plan(keys->remove), remove_args, remove_nulls, false, 0);
		okno_check_spi(rc, SPI_OK_DELETE, what);
		deleted = SPI_processed;
	}

	/* a pending tombstone of each other one: a later purge deletes it */
	if (nsettled < nexpired)
	{
		rc = SPI_execute_plan(okno_plan(&tombstone_pending_plan), hashes, NULL, false, 0);
		okno_check_spi(rc, SPI_OK_INSERT, what);
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(batch_cxt);
	SPI_freetuptable(expired);
	return deleted;
}

/*
 * Where Citus has any of the tables a purge writes: refuse what okno does
 * not purge on a cluster yet, with one error, and check the layout a purge
 * there needs: okno's tombstones and purge horizon a copy on every node
 * (okno_distribute_own_tables()), so that a purged key's tombstone and the
 * horizon okno_verify reads are found from every node, unless the keys
 * are in one shard with the rest of a distributed schema's tables, with
 * okno's own tables each node's own (README, "Schema mode").  The caller
 * is connected to SPI.
 */
void
okno_purge_cluster_check(bool app_tables, bool tombstones)
{
	const OknoBinding *b = app_tables ? okno_binding() : NULL;
	Oid			op_keys = okno_relid_by_name(OKNO_KEY_TABLE);
	Oid			own[2];
	bool		row_mode;
	int			rc;
	int			i;

	if (!tombstones)
		okno_refuse_on_citus("okno_purge() of okno before 0.7");
	own[0] = okno_relid_by_name(OKNO_TOMBSTONE_TABLE);
	own[1] = okno_relid_by_name("okno_purge_horizon");
	row_mode = okno_citus_table(op_keys) ||
		(b != NULL && okno_binding_citus(b) && !b->outbox_one_shard);
	for (i = 0; row_mode && i < (int) lengthof(own); i++)
		if (!okno_citus_reference(own[i]))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("okno_purge() needs okno's own tables laid out on the Citus cluster"),
					 errdetail("okno's table %s is not a reference table: a purged key's tombstone and the purge's horizon must be found from every node.",
							   get_rel_name(own[i])),
					 errhint("Call SELECT * FROM okno_distribute_own_tables() on the coordinator as a superuser, then okno_purge() again.")));

	if (b != NULL && b->citus[OKNO_REL_OUTBOX] &&
		!(b->outbox_buckets && okno_named_on_citus()))
	{
		rc = SPI_execute_plan(okno_plan(&any_subscriber_plan), NULL, NULL, true, 1);
		okno_check_spi(rc, SPI_OK_SELECT, "subscribers");
		if (SPI_processed > 0)
			okno_refuse_on_citus("okno_purge() with a subscriber");
	}
}

/*
 * Whether a purge on a cluster may settle pending tombstones (see above):
 * not those this transaction wrote, nor while a node may not have
 * committed them yet (stones_citus: the tombstones are Citus's, written on
 * every node).  The caller is connected to SPI.
 */
bool
okno_purge_cluster_may_settle(bool stones_citus)
{
	int			rc;

	if (marked_in == okno_local_xid())
		return false;
	if (!stones_citus)
		return true;
	rc = SPI_execute_plan(okno_plan(&in_doubt_plan), NULL, NULL, true, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "prepared transactions");
	if (SPI_processed == 0)
		return true;
	ereport(NOTICE,
			(errmsg("okno_purge() deletes no expired key this time"),
			 errdetail("A node of the Citus cluster holds a prepared transaction of this database: a commit that may not have reached every node's okno_key_tombstone yet."),
			 errhint("Call okno_purge() again later; Citus finishes a commit left in doubt by itself (recover_prepared_transactions()).")));
	return false;
}

