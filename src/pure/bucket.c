/*-------------------------------------------------------------------------
 *
 * bucket.c
 *		The outbox bucket of an order key (bucket.h).
 *
 * A bucket is stored with the event and kept for good: it must be the same
 * on every node, on every architecture and in every release, or one key's
 * events would be split over buckets after a restore elsewhere and their
 * order lost.  So it is not PostgreSQL's hash_any (whose values differ
 * between little- and big-endian machines) but the key's bytes hashed with
 * 32-bit FNV-1a, then mixed with MurmurHash3's finalizer (FNV-1a alone
 * spreads its low bits poorly over short keys such as "17" and "18"), and
 * taken modulo OKNO_OUTBOX_BUCKETS.  The bytes are the key's in the
 * database's encoding, as stored.
 *
 * src/pure/bucket.c
 *
 *-------------------------------------------------------------------------
 */
#include "bucket.h"

#define FNV1A_OFFSET	2166136261u
#define FNV1A_PRIME		16777619u

/*
 * FNV-1a of the len bytes at key, mixed.
 */
uint32_t
okno_key_hash32(const char *key, size_t len)
{
	uint32_t	h = FNV1A_OFFSET;
	size_t		i;

	for (i = 0; i < len; i++)
	{
		h ^= (unsigned char) key[i];
		h *= FNV1A_PRIME;
	}
	/* MurmurHash3's fmix32 */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/*
 * The bucket of the order key of len bytes at key: 0 .. OKNO_OUTBOX_BUCKETS - 1.
 */
int
okno_bucket_of(const char *key, size_t len)
{
	return (int) (okno_key_hash32(key, len) % OKNO_OUTBOX_BUCKETS);
}
