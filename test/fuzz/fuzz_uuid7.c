/*-------------------------------------------------------------------------
 *
 * fuzz_uuid7.c
 *		libFuzzer target: bytes -> a sequence of uuid7_generate() calls.
 *
 * The input is a sequence of 17-byte steps (a short last step is padded
 * with zeros), all on one generator state:
 *
 *		0		how the clock moves (low 2 bits):
 *				  0	forward by (value mod 2^24) microseconds (up to ~17 s)
 *				  1	backward by (value mod 2^24) microseconds
 *				  2	to value itself, any int64 (negative, far future, ...)
 *				  3	not at all (the same microsecond again)
 *		1..8	value, little-endian
 *		9..16	the 8 random bytes
 *
 * The clock starts at 2026-12-01T07:00:00Z.
 *
 * Properties, for every UUID produced:
 *
 *	- version 7 (high nibble of byte 6) and variant 10 (top bits of byte 8);
 *	- the 62 random bits are the caller's (rand[0] & 0x3F, rand[1..7]);
 *	- its 60-bit timestamp is what an independent model of the documented
 *	  rule gives: the clock's value (milliseconds << 12 | sub-millisecond
 *	  fraction * 4096 / 1000, negative clocks as 0, beyond the 48-bit range
 *	  clamped to its last value) if that exceeds the previous one, else the
 *	  previous one plus 1, saturating at 2^60 - 1; and the state holds it;
 *	- it compares (memcmp) strictly greater than the previous UUID, unless
 *	  the previous one already carried the saturated value 2^60 - 1, in
 *	  which case the timestamp stays saturated.
 *
 * test/fuzz/fuzz_uuid7.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "uuid7.h"

#define STEP_BYTES	17
#define MAX_MS		((UINT64_C(1) << 48) - 1)
#define MAX_VALUE	((UINT64_C(1) << 60) - 1)
#define START_US	INT64_C(1796108400000000)	/* 2026-12-01T07:00:00Z */

static uint64_t clock_value(int64_t unix_us);
static uint64_t uuid_value(const uint8_t u[16]);
static int64_t move_clock(int64_t now, uint8_t how, uint64_t value);

/* the 60-bit value the clock alone asks for */
static uint64_t
clock_value(int64_t unix_us)
{
	uint64_t	ms;
	uint64_t	us_in_ms;

	if (unix_us < 0)
		return 0;
	ms = (uint64_t) unix_us / 1000;
	us_in_ms = (uint64_t) unix_us % 1000;
	if (ms > MAX_MS)
		return MAX_VALUE;
	return ms * 4096 + us_in_ms * 4096 / 1000;
}

/* the 60-bit timestamp a UUID carries */
static uint64_t
uuid_value(const uint8_t u[16])
{
	uint64_t	ms = 0;
	int			i;

	for (i = 0; i < 6; i++)
		ms = ms * 256 + u[i];
	return ms * 4096 + (uint64_t) (u[6] & 0x0F) * 256 + u[7];
}

/* the next clock reading; saturates instead of overflowing */
static int64_t
move_clock(int64_t now, uint8_t how, uint64_t value)
{
	int64_t		delta = (int64_t) (value & 0xFFFFFF);

	switch (how & 3)
	{
		case 0:
			return now > INT64_MAX - delta ? INT64_MAX : now + delta;
		case 1:
			return now < INT64_MIN + delta ? INT64_MIN : now - delta;
		case 2:
			{
				int64_t		v;

				memcpy(&v, &value, sizeof(v));
				return v;
			}
		default:
			return now;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_reader r = {data, size, 0};
	uuid7_state state;
	int64_t		now = START_US;
	uint64_t	last = 0;		/* the model's state */
	uint8_t		prev[16];
	bool		have_prev = false;
	int			step = 0;

	memset(&state, 0, sizeof(state));

	while (r.pos < r.size)
	{
		uint8_t		how = fuzz_u8(&r);
		uint64_t	value = fuzz_u64(&r);
		uint8_t		rnd[8];
		uint8_t		out[16];
		uint64_t	want;
		uint64_t	got;
		int			i;

		for (i = 0; i < 8; i++)
			rnd[i] = fuzz_u8(&r);
		now = move_clock(now, how, value);

		want = clock_value(now);
		if (want <= last)
			want = last < MAX_VALUE ? last + 1 : MAX_VALUE;

		uuid7_generate(&state, now, rnd, out);
		got = uuid_value(out);

		if ((out[6] >> 4) != 7)
			FUZZ_FAIL("step %d: version nibble %d", step, out[6] >> 4);
		if ((out[8] & 0xC0) != 0x80)
			FUZZ_FAIL("step %d: variant bits 0x%02x", step, out[8] & 0xC0);
		if ((out[8] & 0x3F) != (rnd[0] & 0x3F) || memcmp(out + 9, rnd + 1, 7) != 0)
			FUZZ_FAIL("step %d: the random bits are not the caller's", step);
		if (got != want)
			FUZZ_FAIL("step %d (clock %lld): timestamp 0x%llx, the model says 0x%llx",
					  step, (long long) now, (unsigned long long) got,
					  (unsigned long long) want);
		if (state.last != want)
			FUZZ_FAIL("step %d: state 0x%llx, the model says 0x%llx", step,
					  (unsigned long long) state.last, (unsigned long long) want);
		if (have_prev)
		{
			if (last == MAX_VALUE)
			{
				if (got != MAX_VALUE)
					FUZZ_FAIL("step %d: left the saturated timestamp", step);
			}
			else if (memcmp(prev, out, 16) >= 0)
				FUZZ_FAIL("step %d (clock %lld): UUID not greater than the previous one",
						  step, (long long) now);
		}

		memcpy(prev, out, 16);
		have_prev = true;
		last = want;
		step++;
	}
	return 0;
}
