/*-------------------------------------------------------------------------
 *
 * bucket.h
 *		The outbox bucket of an order key: where Citus distributes outbox,
 *		the integer column it is distributed by, a function of the event's
 *		order key alone, so that every event of one key lies in one shard.
 *
 * This module has no dependency on PostgreSQL headers; it only needs the
 * C99 standard headers, so that it can be unit-tested on its own.
 *
 * src/pure/bucket.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_BUCKET_H
#define OKNO_BUCKET_H

#include <stddef.h>
#include <stdint.h>

/* buckets are 0 .. OKNO_OUTBOX_BUCKETS - 1 */
#define OKNO_OUTBOX_BUCKETS 1024

extern uint32_t okno_key_hash32(const char *key, size_t len);
extern int	okno_bucket_of(const char *key, size_t len);

#endif							/* OKNO_BUCKET_H */
