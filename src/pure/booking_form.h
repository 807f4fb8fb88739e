/*-------------------------------------------------------------------------
 *
 * booking_form.h
 *		A booking request's form: the JSON text its fingerprint is the
 *		SHA-256 of, in fingerprint version 1 (okno's) or 0 (the course's).
 *
 * This module has no dependency on PostgreSQL headers; it only needs the
 * C99 standard headers, so that it can be unit-tested on its own.
 *
 * src/pure/booking_form.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_BOOKING_FORM_H
#define OKNO_BOOKING_FORM_H

#include <stddef.h>
#include <stdint.h>

#include "rfc3339.h"

/* the text of okno's form without its three variable parts */
#define OKNO_BOOKING_FORM_SKELETON \
	"{\"ends_at\":\"\",\"resource_id\":,\"starts_at\":\"\"}"

/* strlen("-2147483648") */
#define OKNO_INT32_DECIMAL_MAXLEN	11

/*
 * Upper bound on the length of okno's form (without the NUL); a buffer
 * for okno_booking_form_write() needs OKNO_BOOKING_FORM_MAXLEN + 1 bytes.
 */
#define OKNO_BOOKING_FORM_MAXLEN \
	(sizeof(OKNO_BOOKING_FORM_SKELETON) - 1 + \
	 2 * RFC3339_UTC_MAXLEN + OKNO_INT32_DECIMAL_MAXLEN)

/*
 * The same bound for the course's form (fingerprint version 0), whose
 * instants carry their offsets.
 */
#define OKNO_BOOKING_FORM_COURSE_MAXLEN \
	(sizeof(OKNO_BOOKING_FORM_SKELETON) - 1 + \
	 2 * RFC3339_OFFSET_MAXLEN + OKNO_INT32_DECIMAL_MAXLEN)

extern size_t okno_booking_form_write(char *buf, int32_t resource_id,
									  int64_t starts_unix_us,
									  int64_t ends_unix_us);
extern size_t okno_booking_form_write_course(char *buf, int32_t resource_id,
											 int64_t starts_unix_us, int starts_offset,
											 int64_t ends_unix_us, int ends_offset);

#endif							/* OKNO_BOOKING_FORM_H */
