/*-------------------------------------------------------------------------
 *
 * uuid7.c
 *		RFC 9562 UUID version 7 generation, monotonic per generator state.
 *
 * The UUID carries a 48-bit Unix timestamp in milliseconds followed by 12
 * bits of sub-millisecond precision in the rand_a field (RFC 9562, section
 * 6.2, method 3: "replace leftmost random bits with increased clock
 * precision").  The remaining 62 bits of rand_b come from the caller.
 *
 * The 60-bit value (milliseconds << 12 | sub-millisecond fraction) is kept
 * in the caller-provided state and forced to increase strictly from one call
 * to the next, even when the clock stands still or steps back, so that the
 * UUIDs produced from one state compare (memcmp) strictly increasing.
 *
 * Layout of the 16 bytes (big-endian):
 *
 *		0..5	unix_ts_ms (48 bits)
 *		6		0x70 | top 4 bits of the 12-bit fraction (version 7)
 *		7		low 8 bits of the 12-bit fraction
 *		8		0x80 | (rand[0] & 0x3F) (variant 10xx)
 *		9..15	rand[1..7]
 *
 * src/pure/uuid7.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>

#include "uuid7.h"

/* largest value that fits the 48-bit millisecond field */
#define UUID7_MAX_MS		((UINT64_C(1) << 48) - 1)
/* largest 60-bit timestamp value */
#define UUID7_MAX_VALUE		((UINT64_C(1) << 60) - 1)

/*
 * uuid7_generate
 *		Produce the next version 7 UUID for state into out.
 *
 * unix_us is the current time in microseconds since the Unix epoch; negative
 * values are treated as 0, and times beyond the 48-bit millisecond range
 * (year 10889) are clamped to it.  rand supplies 62 random bits (the top two
 * bits of rand[0] are replaced by the variant).
 *
 * Should the 60-bit counter ever reach its maximum, further values repeat it
 * rather than wrapping around to zero; with real clocks this cannot happen
 * before the year 10889.
 */
void
uuid7_generate(uuid7_state *state, int64_t unix_us, const uint8_t rand[8],
			   uint8_t out[16])
{
	uint64_t	us;
	uint64_t	ms;
	uint64_t	sub;
	uint64_t	v;
	int			i;

	us = (unix_us < 0) ? 0 : (uint64_t) unix_us;
	ms = us / 1000;
	sub = ((us % 1000) * 4096) / 1000;	/* 0 .. 4095 */
	if (ms > UUID7_MAX_MS)
	{
		ms = UUID7_MAX_MS;
		sub = 4095;
	}
	v = (ms << 12) | sub;

	if (v <= state->last)
		v = (state->last < UUID7_MAX_VALUE) ? state->last + 1 : UUID7_MAX_VALUE;
	state->last = v;

	/* 48-bit milliseconds, big-endian */
	for (i = 0; i < 6; i++)
		out[i] = (uint8_t) (v >> (52 - 8 * i));
	out[6] = (uint8_t) (0x70 | ((v >> 8) & 0x0F));
	out[7] = (uint8_t) (v & 0xFF);
	out[8] = (uint8_t) (0x80 | (rand[0] & 0x3F));
	for (i = 1; i < 8; i++)
		out[8 + i] = rand[i];
}
