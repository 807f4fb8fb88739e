/*-------------------------------------------------------------------------
 *
 * test_uuid7.c
 *		Unit tests for the RFC 9562 version 7 UUID generator.
 *
 * The expected bytes for known instants were computed independently with
 * Python (int.to_bytes and the uuid module, which confirms version 7 and the
 * RFC variant for the same 16 bytes).
 *
 * test/unit/test_uuid7.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "uuid7.h"
#include "unit.h"

/* 2026-12-01T07:00:00.123456Z */
#define KNOWN_US	INT64_C(1796108400123456)

/* the 60-bit timestamp value carried by a UUID, read back from its bytes */
static uint64_t
uuid_timestamp(const uint8_t u[16])
{
	uint64_t	v = 0;
	int			i;

	for (i = 0; i < 6; i++)
		v = (v << 8) | u[i];
	v = (v << 4) | (u[6] & 0x0F);
	v = (v << 8) | u[7];
	return v;
}

static bool
has_version_and_variant(const uint8_t u[16])
{
	return (u[6] & 0xF0) == 0x70 && (u[8] & 0xC0) == 0x80;
}

static void
test_known_instant(void)
{
	static const uint8_t rand[8] = {0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};
	/* Python: 01a23067-35fb-774b-bf01-020304050607, version 7, RFC variant */
	static const uint8_t expected[16] = {
		0x01, 0xA2, 0x30, 0x67, 0x35, 0xFB, 0x77, 0x4B,
		0xBF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07
	};
	uuid7_state state = {0};
	uint8_t		out[16];
	int			i;

	uuid7_generate(&state, KNOWN_US, rand, out);
	for (i = 0; i < 16; i++)
		CHECK_MSG(out[i] == expected[i], "byte %d is 0x%02X, expected 0x%02X",
				  i, out[i], expected[i]);
	CHECK(memcmp(out, expected, 16) == 0);
	/* ms = 1796108400123 = 0x1A2306735FB, sub = 456 * 4096 / 1000 = 1867 */
	CHECK(state.last == ((UINT64_C(0x1A2306735FB) << 12) | 1867));
	CHECK(uuid_timestamp(out) == state.last);
}

static void
test_version_variant_rand(void)
{
	static const uint8_t patterns[][8] = {
		{0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
		{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
		{0x40, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77},
		{0xBF, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE},
		{0x3F, 0xA5, 0x5A, 0xA5, 0x5A, 0xA5, 0x5A, 0xA5},
		{0xC0, 0x01, 0x80, 0x7F, 0xFE, 0x10, 0x20, 0x30},
	};
	static const uint8_t expected_byte8[] = {0x80, 0xBF, 0x80, 0xBF, 0xBF, 0x80};
	uuid7_state state = {0};
	size_t		p;

	for (p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++)
	{
		uint8_t		out[16];

		uuid7_generate(&state, KNOWN_US, patterns[p], out);
		CHECK_MSG((out[6] >> 4) == 7, "pattern %u: version nibble %d",
				  (unsigned) p, out[6] >> 4);
		CHECK_MSG((out[8] >> 6) == 2, "pattern %u: variant bits %d",
				  (unsigned) p, out[8] >> 6);
		CHECK_MSG(out[8] == expected_byte8[p], "pattern %u: byte 8 is 0x%02X",
				  (unsigned) p, out[8]);
		CHECK_MSG((out[8] & 0x3F) == (patterns[p][0] & 0x3F),
				  "pattern %u: rand[0] low bits lost", (unsigned) p);
		CHECK_MSG(memcmp(out + 9, patterns[p] + 1, 7) == 0,
				  "pattern %u: rand[1..7] not in bytes 9..15", (unsigned) p);
		/* the random bits never leak into the timestamp bytes */
		CHECK_MSG(memcmp(out, "\x01\xA2\x30\x67\x35\xFB", 6) == 0,
				  "pattern %u: timestamp bytes changed", (unsigned) p);
	}
}

static void
test_sub_millisecond(void)
{
	/* sub = (us % 1000) * 4096 / 1000, checked by hand */
	static const struct
	{
		int			us_in_ms;
		int			sub;
	}			cases[] = {
		{0, 0}, {1, 4}, {250, 1024}, {456, 1867}, {500, 2048}, {999, 4091},
	};
	static const uint8_t rand[8] = {0};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		uuid7_state state = {0};
		uint8_t		out[16];
		int64_t		t = INT64_C(1796108400123000) + cases[i].us_in_ms;

		uuid7_generate(&state, t, rand, out);
		CHECK_MSG(out[6] == (0x70 | (cases[i].sub >> 8)) &&
				  out[7] == (cases[i].sub & 0xFF),
				  "%d us: bytes 6..7 are %02X %02X", cases[i].us_in_ms,
				  out[6], out[7]);
		CHECK(memcmp(out, "\x01\xA2\x30\x67\x35\xFB", 6) == 0);
	}
}

static void
test_epoch_and_negative(void)
{
	static const uint8_t rand[8] = {0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0};
	uuid7_state state = {0};
	uint8_t		out[16];
	uint8_t		prev[16];
	int			i;
	bool		zero_ms = true;

	/* the zero state already "used" value 0, so the first UUID is 0 + 1 */
	uuid7_generate(&state, -5, rand, out);
	for (i = 0; i < 6; i++)
		zero_ms = zero_ms && out[i] == 0;
	CHECK(zero_ms);
	CHECK(out[6] == 0x70);
	CHECK(out[7] == 0x01);
	CHECK(state.last == 1);
	CHECK(has_version_and_variant(out));

	memcpy(prev, out, 16);
	uuid7_generate(&state, INT64_MIN, rand, out);
	CHECK(memcmp(prev, out, 16) < 0);
	CHECK(state.last == 2);

	/* 1 ms after the epoch */
	memcpy(prev, out, 16);
	uuid7_generate(&state, 1000, rand, out);
	CHECK(memcmp(out, "\x00\x00\x00\x00\x00\x01\x70\x00", 8) == 0);
	CHECK(memcmp(prev, out, 16) < 0);
}

static void
test_monotonic_same_time(void)
{
	static const uint8_t rand_hi[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
	static const uint8_t rand_lo[8] = {0};
	uuid7_state state = {0};
	uint8_t		prev[16];
	uint8_t		out[16];
	uint64_t	first;
	int			i;
	int			not_increasing = 0;
	int			bad_bits = 0;
	int			bad_value = 0;

	uuid7_generate(&state, KNOWN_US, rand_hi, prev);
	first = state.last;
	for (i = 1; i <= 10000; i++)
	{
		/* alternate high and low random bits: order must not depend on them */
		uuid7_generate(&state, KNOWN_US, (i % 2) ? rand_lo : rand_hi, out);
		if (memcmp(prev, out, 16) >= 0)
			not_increasing++;
		if (!has_version_and_variant(out))
			bad_bits++;
		if (uuid_timestamp(out) != first + (uint64_t) i)
			bad_value++;
		memcpy(prev, out, 16);
	}
	CHECK_MSG(not_increasing == 0, "%d of 10000 not increasing", not_increasing);
	CHECK_MSG(bad_bits == 0, "%d of 10000 with bad version/variant", bad_bits);
	CHECK_MSG(bad_value == 0, "%d of 10000 not counting up by one", bad_value);
	CHECK(state.last == first + 10000);
	/* 1867 + 10000 carries into the millisecond field: ms + 2, sub 3675 */
	CHECK(state.last == ((UINT64_C(0x1A2306735FB) + 2) << 12 | 3675));
	CHECK(memcmp(out, "\x01\xA2\x30\x67\x35\xFD\x7E\x5B", 8) == 0);
}

static void
test_clock_steps(void)
{
	static const uint8_t rand[8] = {0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA};
	uuid7_state state = {0};
	uint8_t		a[16];
	uint8_t		b[16];
	uint8_t		c[16];
	uint8_t		d[16];
	uint64_t	after_a;

	uuid7_generate(&state, KNOWN_US, rand, a);
	after_a = state.last;

	/* the clock steps back one hour: still strictly after a, by one */
	uuid7_generate(&state, KNOWN_US - INT64_C(3600000000), rand, b);
	CHECK(memcmp(a, b, 16) < 0);
	CHECK(state.last == after_a + 1);
	CHECK(uuid_timestamp(b) == after_a + 1);

	/* one microsecond back, still increasing */
	uuid7_generate(&state, KNOWN_US - 1, rand, c);
	CHECK(memcmp(b, c, 16) < 0);
	CHECK(state.last == after_a + 2);

	/* the clock moves well ahead: the real time is used again */
	uuid7_generate(&state, KNOWN_US + INT64_C(1000000), rand, d);
	CHECK(memcmp(c, d, 16) < 0);
	CHECK(state.last == ((UINT64_C(0x1A2306735FB) + 1000) << 12 | 1867));
	CHECK(memcmp(d, "\x01\xA2\x30\x67\x39\xE3\x77\x4B", 8) == 0);

	/* a slightly later time within the counter's lead keeps counting */
	uuid7_generate(&state, KNOWN_US + INT64_C(1000000), rand, a);
	CHECK(memcmp(d, a, 16) < 0);
	CHECK(state.last == ((UINT64_C(0x1A2306735FB) + 1000) << 12 | 1868));
}

static void
test_independent_states(void)
{
	static const uint8_t rand[8] = {0};
	uuid7_state s1 = {0};
	uuid7_state s2 = {0};
	uint8_t		a[16];
	uint8_t		b[16];
	int			i;

	for (i = 0; i < 5; i++)
		uuid7_generate(&s1, KNOWN_US, rand, a);
	uuid7_generate(&s2, KNOWN_US, rand, b);
	/* s2 starts from the clock, unaffected by s1's counter */
	CHECK(memcmp(b, "\x01\xA2\x30\x67\x35\xFB\x77\x4B", 8) == 0);
	CHECK(s1.last == s2.last + 4);
}

static void
test_increasing_over_time(void)
{
	static const uint8_t rand_hi[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
	static const uint8_t rand_lo[8] = {0};
	uuid7_state state = {0};
	uint8_t		prev[16];
	uint8_t		out[16];
	int64_t		t = INT64_C(1700000000000000);
	int			i;
	int			not_increasing = 0;

	uuid7_generate(&state, t, rand_hi, prev);
	for (i = 0; i < 100000; i++)
	{
		/* advance 0..999 us, sometimes step back a little */
		t += (i * 7919) % 1000;
		if (i % 97 == 0)
			t -= 5000;
		uuid7_generate(&state, t, (i % 2) ? rand_lo : rand_hi, out);
		if (memcmp(prev, out, 16) >= 0)
			not_increasing++;
		memcpy(prev, out, 16);
	}
	CHECK_MSG(not_increasing == 0, "%d of 100000 not increasing", not_increasing);
}

static void
test_far_future(void)
{
	static const uint8_t rand[8] = {0};
	uuid7_state state = {0};
	uint8_t		out[16];
	uint8_t		again[16];

	/* 9999-12-31T23:59:59.999999Z still fits 48 bits of ms (Python: e677d21fdbff) */
	uuid7_generate(&state, INT64_C(253402300799999999), rand, out);
	CHECK(memcmp(out, "\xE6\x77\xD2\x1F\xDB\xFF\x7F\xFB", 8) == 0);

	/* beyond 48 bits of milliseconds the value saturates instead of wrapping */
	uuid7_generate(&state, INT64_MAX, rand, out);
	CHECK(memcmp(out, "\xFF\xFF\xFF\xFF\xFF\xFF\x7F\xFF", 8) == 0);
	uuid7_generate(&state, INT64_MAX, rand, again);
	CHECK(memcmp(again, "\xFF\xFF\xFF\xFF\xFF\xFF\x7F\xFF", 8) == 0);
	CHECK(has_version_and_variant(again));
}

int
main(void)
{
	test_known_instant();
	test_version_variant_rand();
	test_sub_millisecond();
	test_epoch_and_negative();
	test_monotonic_same_time();
	test_clock_steps();
	test_independent_states();
	test_increasing_over_time();
	test_far_future();

	UNIT_DONE("test_uuid7");
}
