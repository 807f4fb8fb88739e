/*-------------------------------------------------------------------------
 *
 * test_bucket.c
 *		Unit tests for the outbox bucket of an order key.
 *
 * The hash is FNV-1a's published values put through MurmurHash3's
 * finalizer, written out again here; buckets are in range, the same for
 * the same bytes, and spread evenly over the keys a service writes
 * (decimal booking ids, and longer texts).
 *
 * test/unit/test_bucket.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bucket.h"
#include "unit.h"

static uint32_t
fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* every bucket's share of n keys made by fmt from 0 .. n - 1 stays near n / buckets */
static void
check_spread(const char *fmt, int n)
{
	static int	counts[OKNO_OUTBOX_BUCKETS];
	char		key[64];
	int			i;
	int			min = n;
	int			max = 0;
	double		chi2 = 0;
	double		expected = (double) n / OKNO_OUTBOX_BUCKETS;

	memset(counts, 0, sizeof(counts));
	for (i = 0; i < n; i++)
	{
		int			len = snprintf(key, sizeof(key), fmt, i);

		counts[okno_bucket_of(key, (size_t) len)]++;
	}
	for (i = 0; i < OKNO_OUTBOX_BUCKETS; i++)
	{
		if (counts[i] < min)
			min = counts[i];
		if (counts[i] > max)
			max = counts[i];
		chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
	}
	/* 1023 degrees of freedom: mean 1023, sd 45; 1250 is 5 sd */
	CHECK_MSG(chi2 < 1250, "%s: chi-square %.0f over %d buckets", fmt, chi2, OKNO_OUTBOX_BUCKETS);
	/* (with 100 keys a bucket, Poisson's sd is 10) */
	if (expected >= 100)
		CHECK_MSG(min > expected / 2 && max < 2 * expected,
				  "%s: buckets hold %d to %d keys, %.0f expected", fmt, min, max, expected);
}

int
main(void)
{
	int			i;
	int			b;

	/* FNV-1a 32 (published values), then the finalizer */
	CHECK(okno_key_hash32("", 0) == fmix32(0x811c9dc5u));
	CHECK(okno_key_hash32("a", 1) == fmix32(0xe40c292cu));
	CHECK(okno_key_hash32("foobar", 6) == fmix32(0xbf9cf968u));

	/* the bytes given, not a terminating NUL */
	CHECK(okno_key_hash32("ab", 1) == okno_key_hash32("a", 1));
	CHECK(okno_key_hash32("a\0b", 3) != okno_key_hash32("a", 1));

	/* in range, and the same for the same bytes */
	for (i = 0; i < 100000; i++)
	{
		char		key[16];
		int			len = snprintf(key, sizeof(key), "%d", i);

		b = okno_bucket_of(key, (size_t) len);
		if (b < 0 || b >= OKNO_OUTBOX_BUCKETS || b != okno_bucket_of(key, (size_t) len))
			break;
	}
	CHECK_MSG(i == 100000, "key %d: bucket %d", i, b);

	/* pinned: the SQL function's vectors (test/sql/emit.sql) say the same */
	CHECK_I64_EQ(okno_bucket_of("7", 1), 93);
	CHECK_I64_EQ(okno_bucket_of("", 0), 11);
	CHECK_I64_EQ(okno_bucket_of("foobar", 6), 732);

	check_spread("%d", 1024 * 100);
	check_spread("%d", 1024 * 10);
	check_spread("order-%08d-of-a-tenant", 1024 * 100);

	UNIT_DONE("test_bucket");
}
