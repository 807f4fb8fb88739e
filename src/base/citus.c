/*-------------------------------------------------------------------------
 *
 * citus.c
 *	  Whether a table is one that Citus distributes: its metadata read as
 *	  the binding reads the catalogs.
 *
 * On a Citus cluster the application's tables may be distributed, made
 * reference tables or added to Citus's metadata otherwise; on every node
 * that has the metadata (the coordinator, and each worker it was synced
 * to) such a table is then a shell: its rows are in the shards, tables of
 * other names on the workers, and a statement on it is planned by Citus
 * and sent there.  okno must never read or write a shell itself: its
 * direct access (direct.c) takes the statements' path for any table Citus
 * knows, and the binding lets a distributed bookings have the primary key
 * a distributed table can have.
 *
 * Citus's metadata is the table pg_catalog.pg_dist_partition (one row per
 * table Citus knows: logicalrelid, partmethod 'h' for a hash-distributed
 * table, 'n' for a reference table, a single-shard table or a local table
 * in the metadata, ...).  It is read here with a catalog scan, without
 * Citus's functions, so that okno needs neither Citus's library nor its
 * version; where Citus is not installed the table does not exist and no
 * table is Citus's.  Citus invalidates a table's relcache entry whenever
 * its row changes, which is when okno's caches derive this again
 * (schema.c's binding, direct.c's map).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "nodes/primnodes.h"
#include "nodes/readfuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "base/base.h"

#define CITUS_PARTITION_CATALOG	"pg_dist_partition"
#define CITUS_PARTITION_INDEX	"pg_dist_partition_logical_relid_index"
#define CITUS_SCHEMA_CATALOG	"pg_dist_schema"
#define CITUS_SCHEMA_INDEX		"pg_dist_schema_pkey"

/* the column name of a catalog's tuple descriptor, which Citus must have */
static AttrNumber
attnum_of(TupleDesc desc, const char *name)
{
	int			i;

	for (i = 0; i < desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			return i + 1;
	elog(ERROR, "a catalog of Citus has no column %s", name);
	return InvalidAttrNumber;
}

/*
 * Find the row of Citus's catalog (in pg_catalog, with an index on the
 * column keycol) whose keycol is key, and call read on it with arg; false
 * if there is none, or the catalog does not exist (Citus is not installed,
 * or is older than the catalog).
 */
static bool
citus_catalog_row(const char *catalog_name, const char *index_name, const char *keycol,
				  Oid key, void (*read) (HeapTuple tup, TupleDesc desc, void *arg), void *arg)
{
	Oid			catalog = get_relname_relid(catalog_name, PG_CATALOG_NAMESPACE);
	Oid			index;
	AttrNumber	key_att;
	Relation	rel;
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found;

	if (!OidIsValid(catalog))
		return false;
	key_att = get_attnum(catalog, keycol);
	if (key_att == InvalidAttrNumber)
		elog(ERROR, "Citus's %s has no column %s", catalog_name, keycol);
	index = get_relname_relid(index_name, PG_CATALOG_NAMESPACE);

	rel = table_open(catalog, AccessShareLock);
	ScanKeyInit(&skey, key_att, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(key));
	scan = systable_beginscan(rel, index, OidIsValid(index), NULL, 1, &skey);
	tup = systable_getnext(scan);
	found = HeapTupleIsValid(tup);
	if (found && read != NULL)
		read(tup, RelationGetDescr(rel), arg);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/* what citus_partition reads of a row of pg_dist_partition */
typedef struct CitusPartition
{
	char		method;
	AttrNumber	distcol;
	bool		reference;
} CitusPartition;

static void
read_partition(HeapTuple tup, TupleDesc desc, void *arg)
{
	CitusPartition *p = (CitusPartition *) arg;
	AttrNumber	method_att = attnum_of(desc, "partmethod");
	AttrNumber	key_att = attnum_of(desc, "partkey");
	AttrNumber	repmodel_att = attnum_of(desc, "repmodel");
	bool		isnull;
	Datum		d = heap_getattr(tup, method_att, desc, &isnull);

	p->method = isnull ? '?' : DatumGetChar(d);
	/* the partition key is a Var's node string: its varattno */
	d = heap_getattr(tup, key_att, desc, &isnull);
	if (p->method == 'h' && !isnull)
	{
		Node	   *node = stringToNode(TextDatumGetCString(d));

		if (IsA(node, Var))
			p->distcol = ((Var *) node)->varattno;
	}
	d = heap_getattr(tup, repmodel_att, desc, &isnull);
	p->reference = !isnull && DatumGetChar(d) == 't';
}

/*
 * Citus's partition method of the table relid ('h': distributed by hash,
 * 'n': a reference table, a single-shard or a local table Citus knows,
 * ...), or '\0' if Citus does not know it (or is not installed); and, if
 * distcol is not NULL, the column a hash-distributed table is distributed
 * by (InvalidAttrNumber otherwise); and, if reference is not NULL, whether
 * the table is a reference table (replication model 't': a copy on every
 * node).
 */
static char
citus_partition(Oid relid, AttrNumber *distcol, bool *reference)
{
	CitusPartition p = {'\0', InvalidAttrNumber, false};

	(void) citus_catalog_row(CITUS_PARTITION_CATALOG, CITUS_PARTITION_INDEX, "logicalrelid",
							 relid, read_partition, &p);
	if (distcol != NULL)
		*distcol = p.distcol;
	if (reference != NULL)
		*reference = p.reference;
	return p.method;
}

/*
 * Whether the schema nsp is one of Citus's distributed schemas (schema
 * mode: README), whose tables Citus makes the schema's only when a
 * top-level CREATE TABLE creates them.
 */
bool
okno_citus_distributed_schema(Oid nsp)
{
	return citus_catalog_row(CITUS_SCHEMA_CATALOG, CITUS_SCHEMA_INDEX, "schemaid", nsp,
							 NULL, NULL);
}

/*
 * Whether Citus knows the table relid: a shell okno must not read or write
 * itself.
 */
bool
okno_citus_table(Oid relid)
{
	return citus_partition(relid, NULL, NULL) != '\0';
}

/*
 * Whether Citus keeps the table relid as a reference table: a copy on
 * every node, written on all of them in one distributed transaction.
 */
bool
okno_citus_reference(Oid relid)
{
	bool		reference;

	(void) citus_partition(relid, NULL, &reference);
	return reference;
}

/*
 * How Citus lays outbox (relid; citus: Citus knows it) out, for the
 * binding: *buckets, distributed by its integer column bucket (README,
 * "Scaling out with Citus"); *one_shard, kept in one shard on one node
 * (a table of a distributed schema, README "Schema mode", a single-shard
 * or a Citus local table; not a reference table, a copy on every node),
 * where Citus plans every statement on it onto that node as it is, and
 * okno drains it with the bucket drain's statements without the bucket
 * restriction (drain_buckets.c).  Both false where Citus does not know
 * outbox, or lays it out otherwise.
 */
void
okno_outbox_layout(Oid relid, bool citus, bool *buckets, bool *one_shard)
{
	AttrNumber	distcol;
	AttrNumber	bucket;
	bool		reference;
	char		method;

	*buckets = *one_shard = false;
	if (!citus || !OidIsValid(relid))
		return;
	method = citus_partition(relid, &distcol, &reference);
	bucket = get_attnum(relid, OKNO_OUTBOX_BUCKET_COLUMN);
	*buckets = method == 'h' && bucket != InvalidAttrNumber && distcol == bucket &&
		get_atttype(relid, bucket) == INT4OID;
	*one_shard = method == 'n' && !reference;
}

/*
 * The name of the constraint an integrity error (class 23) names: its
 * constraint_name field, or, where Citus raised it again from a shard on
 * another node (it passes on only the SQLSTATE and the texts), the last
 * name the message quotes ("... violates exclusion constraint
 * \"bookings_no_overlap_102008\"").  The name of a shard's constraint is
 * the table's with "_" and the shard's id appended, which is cut off when
 * citus is true (one of the tables written is Citus's: on a node that holds
 * the shard the error is the server's own, with the shard's name in
 * constraint_name), so that okno recognizes its constraints on any node.
 * "" if the error names none.
 */
const char *
okno_error_constraint(const ErrorData *edata, bool citus)
{
	const char *msg = edata->message;
	const char *close;
	const char *open;
	char	   *name;
	char	   *p;

	if (!citus)
		return edata->constraint_name != NULL ? edata->constraint_name : "";
	if (edata->constraint_name != NULL)
		name = pstrdup(edata->constraint_name);
	else
	{
		if (msg == NULL || (close = strrchr(msg, '"')) == NULL)
			return "";
		for (open = close - 1; open >= msg && *open != '"'; open--)
			;
		if (open < msg || close - open - 1 <= 0)
			return "";
		name = pnstrdup(open + 1, close - open - 1);
	}

	/* "_" and digits at the end: the shard's id */
	p = name + strlen(name);
	while (p > name && isdigit((unsigned char) p[-1]))
		p--;
	if (p > name + 1 && *p != '\0' && p[-1] == '_')
		p[-1] = '\0';
	return name;
}

/*
 * Refuse what okno does not run yet where Citus has its tables (what: the
 * call, "okno_verify()"), with one error, before Citus refuses a statement
 * of it with an error about the statement's form.
 */
void
okno_refuse_on_citus(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not supported where Citus distributes okno's tables", what),
			 errdetail("okno runs bookings, operations' keys, okno_emit, the default subscriber's delivery, its verbs and counts, named subscribers in row mode, okno_verify and okno_purge on a Citus cluster; not yet this."),
			 errhint("See README, \"Scaling out with Citus\".")));
}

/*
 * Whether Citus has any of the five tables b binds.
 */
bool
okno_binding_citus(const OknoBinding *b)
{
	int			t;

	for (t = 0; t < OKNO_NUM_TABLES; t++)
		if (b->citus[t])
			return true;
	return false;
}

/*
 * Refuse fname where Citus distributes outbox over shards, but not by
 * bucket (by id, by hand): okno's delivery statements need a shard's
 * events to be named by their buckets.  (An outbox in one shard is
 * delivered as on one server.)
 */
void
okno_require_outbox_buckets(const OknoBinding *b, const char *fname)
{
	if (b->citus[OKNO_REL_OUTBOX] && !b->outbox_buckets && !b->outbox_one_shard)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs outbox distributed by bucket", fname),
				 errdetail("Citus distributes outbox otherwise; okno delivers events where it is distributed by its column bucket, a function of each event's order key."),
				 errhint("Undistribute it (SELECT undistribute_table('outbox')), then lay the tables out with SELECT * FROM okno_distribute_tables().")));
}
