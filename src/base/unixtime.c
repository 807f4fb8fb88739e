/*-------------------------------------------------------------------------
 *
 * unixtime.c
 *	  Instants as Unix microseconds, the form the pure helpers (rfc3339.c)
 *	  and the stored fingerprints use, to and from PostgreSQL's timestamptz.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "datatype/timestamp.h"
#include "utils/timestamp.h"

#include "base/base.h"

/* Microseconds between the Unix epoch and PostgreSQL's (2000-01-01). */
#define UNIX_TO_PG_EPOCH_US \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

TimestampTz
okno_unix_us_to_timestamptz(int64 unix_us)
{
	return (TimestampTz) (unix_us - UNIX_TO_PG_EPOCH_US);
}

int64
okno_timestamptz_to_unix_us(TimestampTz ts)
{
	return (int64) ts + UNIX_TO_PG_EPOCH_US;
}

int64
okno_now_unix_us(void)
{
	return (int64) GetCurrentTimestamp() + UNIX_TO_PG_EPOCH_US;
}
