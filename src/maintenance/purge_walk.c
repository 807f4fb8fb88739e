/*-------------------------------------------------------------------------
 *
 * purge_walk.c
 *	  okno_purge's keyset walk: a table purged in bounded batches.
 *
 * Each step walks the next OKNO_PURGE_BATCH rows of a table in
 * primary-key order (a keyset cursor, so every row is visited once
 * whatever was deleted before it) and deletes the old ones among them with
 * one statement (purge.c), or, for a table of keys on a Citus cluster, a
 * few (purge_cluster.c).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/datum.h"

#include "base/base.h"
#include "maintenance/maintenance.h"

/* rows visited per statement */
#define OKNO_PURGE_BATCH 10000

/*
 * Walk w from key start (below every row) to the end of the table, with
 * its own arguments extra (nextra of them); the rows deleted.
 */
uint64
okno_purge_walk(const OknoPurgeWalk *w, const Datum *start, const Datum *extra, int nextra)
{
	Datum		args[2 * OKNO_PURGE_WALK_MAXKEYS + OKNO_PURGE_WALK_MAXARGS];
	char		nulls[2 * OKNO_PURGE_WALK_MAXKEYS + OKNO_PURGE_WALK_MAXARGS];
	int			n = w->nkeys;
	uint64		deleted = 0;
	bool		last = false;
	bool		isnull;
	int			rc;
	int			i;

	Assert(n <= OKNO_PURGE_WALK_MAXKEYS && nextra <= OKNO_PURGE_WALK_MAXARGS);
	memset(nulls, ' ', sizeof(nulls));
	memcpy(args, start, n * sizeof(Datum));
	memcpy(args + 2 * n, extra, nextra * sizeof(Datum));
	while (!last)
	{
		CHECK_FOR_INTERRUPTS();

		/* the boundary, copied out of the SPI result */
		args[n] = Int32GetDatum(OKNO_PURGE_BATCH - 1);
		rc = SPI_execute_plan(okno_plan(w->boundary), args, NULL, false, 1);
		okno_check_spi(rc, SPI_OK_SELECT, w->what);
		last = (SPI_processed == 0);
		for (i = 0; i < n; i++)
		{
			Form_pg_attribute att;

			nulls[n + i] = last ? 'n' : ' ';
			if (last)
			{
				args[n + i] = (Datum) 0;
				continue;
			}
			att = TupleDescAttr(SPI_tuptable->tupdesc, i);
			args[n + i] = datumCopy(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc, i + 1, &isnull),
									att->attbyval, att->attlen);
		}

		/* the batch, or the rest */
		if (w->cluster != NULL)
		{
			deleted += okno_purge_cluster_batch(w->cluster, args, nulls, w->what);
			memcpy(args, args + n, n * sizeof(Datum));
			continue;
		}
		rc = SPI_execute_plan(okno_plan(last ? w->rest : w->batch), args, nulls, false, 0);
		okno_check_spi(rc, w->counts ? SPI_OK_SELECT : SPI_OK_DELETE, w->what);
		if (w->counts)
			deleted += (uint64) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
															SPI_tuptable->tupdesc, 1, &isnull));
		else
			deleted += SPI_processed;
		memcpy(args, args + n, n * sizeof(Datum));
	}
	return deleted;
}
