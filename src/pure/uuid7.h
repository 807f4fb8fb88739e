/*-------------------------------------------------------------------------
 *
 * uuid7.h
 *		RFC 9562 UUID version 7 generation, monotonic per generator state.
 *
 * This module has no dependency on PostgreSQL headers; it only needs the
 * C99 standard headers, so that it can be unit-tested on its own.
 *
 * src/pure/uuid7.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_UUID7_H
#define OKNO_UUID7_H

#include <stdint.h>

/*
 * Generator state: the last 60-bit (48-bit milliseconds, 12-bit
 * sub-millisecond fraction) timestamp value handed out.  A zero-initialised
 * state is the valid starting state.
 */
typedef struct uuid7_state
{
	uint64_t	last;
} uuid7_state;

extern void uuid7_generate(uuid7_state *state, int64_t unix_us,
						   const uint8_t rand[8], uint8_t out[16]);

#endif							/* OKNO_UUID7_H */
