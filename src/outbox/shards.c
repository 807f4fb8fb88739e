/*-------------------------------------------------------------------------
 *
 * shards.c
 *	  outbox's shards where Citus distributes it by bucket (README, "Scaling
 *	  out with Citus"), for the statements that run shard by shard: the
 *	  drains, okno_wait's check, the bulk requeue, the purge.
 *
 * Which buckets a shard holds is derived from Citus's metadata
 * (pg_dist_shard's hash ranges, hashint4 of each bucket as Citus hashes an
 * integer distribution column) and kept until the binding is made again,
 * which happens when Citus changes outbox's shards (it invalidates the
 * table's cache entry).  Where Citus keeps outbox in one shard (schema
 * mode), that shard holds every bucket.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "pure/bucket.h"

static OknoPlan shard_buckets_plan = {
	.sql =
	"SELECT pg_catalog.array_agg(b.b ORDER BY b.b),"
	" pg_catalog.bool_or(pl.shardid IS NOT NULL) AS here"
	" FROM pg_catalog.generate_series(0, " CppAsString2(OKNO_OUTBOX_BUCKETS) " - 1) AS b (b)"
	" JOIN pg_catalog.pg_dist_shard AS s"
	"   ON s.logicalrelid OPERATOR(pg_catalog.=) $1"
	"  AND (s.shardminvalue IS NULL"
	"       OR pg_catalog.hashint4(b.b) OPERATOR(pg_catalog.>=) s.shardminvalue::pg_catalog.int4"
	"      AND pg_catalog.hashint4(b.b) OPERATOR(pg_catalog.<=) s.shardmaxvalue::pg_catalog.int4)"
	" LEFT JOIN pg_catalog.pg_dist_placement AS pl"
	"   ON pl.shardid OPERATOR(pg_catalog.=) s.shardid"
	"  AND pl.groupid OPERATOR(pg_catalog.=)"
	"      (SELECT g.groupid FROM pg_catalog.pg_dist_local_group AS g)"
	" GROUP BY s.shardid"
	" ORDER BY s.shardid",
	.nargs = 1,
	.argtypes = {REGCLASSOID}
};

static OknoOutboxShards shards;
static MemoryContext shards_cxt = NULL;

/*
 * outbox's shards and their buckets, found unless known for this binding.
 * The caller is connected to SPI.
 */
const OknoOutboxShards *
okno_outbox_shards(void)
{
	uint64		generation = okno_cache_generation();
	Datum		arg = ObjectIdGetDatum(okno_relid(OKNO_REL_OUTBOX));
	MemoryContext oldcxt;
	uint64		i;
	int			rc;

	if (shards_cxt != NULL && shards.generation == generation)
		return &shards;
	if (shards_cxt == NULL)
		shards_cxt = AllocSetContextCreate(TopMemoryContext, "okno outbox shards",
										   ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(shards_cxt);
	shards.nshards = 0;
	shards.nhere = 0;

	rc = SPI_execute_plan(okno_plan(&shard_buckets_plan), &arg, NULL, true, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "outbox shards");
	oldcxt = MemoryContextSwitchTo(shards_cxt);
	shards.shard = palloc0(sizeof(OknoOutboxShard) * Max(SPI_processed, 1));
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		OknoOutboxShard *s = &shards.shard[shards.nshards];

		if (isnull)
			continue;
		s->buckets = datumCopy(d, false, -1);
		s->here = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i],
											 SPI_tuptable->tupdesc, 2, &isnull));
		if (s->here)
			shards.nhere++;
		shards.nshards++;
	}
	MemoryContextSwitchTo(oldcxt);
	shards.generation = generation;
	return &shards;
}

/*
 * Run plan, a statement of one shard whose last argument (of nargs) is the
 * shard's buckets, on every shard with values and nulls for the others, in
 * the shards' order (the same on every node: two runs that lock rows wait
 * for each other, never deadlock); the rows it processed in all.  The
 * caller is connected to SPI.
 */
uint64
okno_outbox_shards_exec(OknoPlan *plan, const Datum *values, const char *nulls,
						int expected, const char *what)
{
	Datum		args[8];
	char		argnulls[8];
	int			last = plan->nargs - 1;
	uint64		n = 0;
	const OknoOutboxShards *sh;
	int			k;

	Assert(plan->nargs <= (int) lengthof(args));
	memcpy(args, values, last * sizeof(Datum));
	memcpy(argnulls, nulls, last);
	argnulls[last] = ' ';
	sh = okno_outbox_shards();
	for (k = 0; k < sh->nshards; k++)
	{
		int			rc;

		CHECK_FOR_INTERRUPTS();
		args[last] = sh->shard[k].buckets;
		rc = SPI_execute_plan(okno_plan(plan), args, argnulls, false, 0);
		okno_check_spi(rc, expected, what);
		n += SPI_processed;
	}
	return n;
}
