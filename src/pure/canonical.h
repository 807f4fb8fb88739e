/*-------------------------------------------------------------------------
 *
 * canonical.h
 *		Canonical JSON text of a booking request.
 *
 * This module has no dependency on PostgreSQL headers; it only needs the
 * C99 standard headers, so that it can be unit-tested on its own.
 *
 * src/canonical.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_CANONICAL_H
#define OKNO_CANONICAL_H

#include <stddef.h>
#include <stdint.h>

#include "rfc3339.h"

/* the text of the canonical form without its three variable parts */
#define OKNO_CANONICAL_SKELETON \
	"{\"ends_at\":\"\",\"resource_id\":,\"starts_at\":\"\"}"

/* strlen("-2147483648") */
#define OKNO_INT32_DECIMAL_MAXLEN	11

/*
 * Upper bound on the length of the canonical text (without the NUL); a
 * buffer for okno_canonical_write() needs OKNO_CANONICAL_MAXLEN + 1 bytes.
 */
#define OKNO_CANONICAL_MAXLEN \
	(sizeof(OKNO_CANONICAL_SKELETON) - 1 + \
	 2 * RFC3339_UTC_MAXLEN + OKNO_INT32_DECIMAL_MAXLEN)

/*
 * The same bound for the course's form (fingerprint version 0), whose
 * instants carry their offsets.
 */
#define OKNO_CANONICAL_COURSE_MAXLEN \
	(sizeof(OKNO_CANONICAL_SKELETON) - 1 + \
	 2 * RFC3339_OFFSET_MAXLEN + OKNO_INT32_DECIMAL_MAXLEN)

extern size_t okno_canonical_write(char *buf, int32_t resource_id,
								   int64_t starts_unix_us,
								   int64_t ends_unix_us);
extern size_t okno_canonical_write_course(char *buf, int32_t resource_id,
										  int64_t starts_unix_us, int starts_offset,
										  int64_t ends_unix_us, int ends_offset);

#endif							/* OKNO_CANONICAL_H */
