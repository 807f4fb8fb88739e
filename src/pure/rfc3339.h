/*-------------------------------------------------------------------------
 *
 * rfc3339.h
 *		Strict RFC 3339 date-time parser and UTC formatter.
 *
 * This module has no dependency on PostgreSQL headers; it only needs the
 * C99 standard headers, so that it can be unit-tested on its own.
 *
 * Instants are represented as signed 64-bit counts of microseconds since
 * 1970-01-01T00:00:00Z (proleptic Gregorian calendar, no leap seconds).
 *
 * src/pure/rfc3339.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_RFC3339_H
#define OKNO_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/* Outcome of rfc3339_parse() */
typedef enum rfc3339_status
{
	RFC3339_OK = 0,
	RFC3339_SYNTAX,				/* does not match the grammar */
	RFC3339_NO_OFFSET,			/* well-formed up to the seconds/fraction, but
								 * no Z or offset follows */
	RFC3339_FRACTION_TOO_LONG,	/* more than 6 fractional digits */
	RFC3339_BAD_DATE,			/* month or day of month does not exist */
	RFC3339_BAD_TIME,			/* hour, minute or second out of range */
	RFC3339_LEAP_SECOND,		/* second 60 */
	RFC3339_BAD_OFFSET,			/* offset outside -23:59 .. +23:59 */
	RFC3339_OUT_OF_RANGE		/* UTC instant outside years 0001 .. 9999 */
} rfc3339_status;

/* 0001-01-01T00:00:00Z in microseconds since the Unix epoch */
#define RFC3339_MIN_UNIX_US		INT64_C(-62135596800000000)
/* 9999-12-31T23:59:59.999999Z in microseconds since the Unix epoch */
#define RFC3339_MAX_UNIX_US		INT64_C(253402300799999999)

/* strlen("YYYY-MM-DDTHH:MM:SS.ffffffZ"); buffers need one more for the NUL */
#define RFC3339_UTC_MAXLEN		27

/* strlen("YYYY-MM-DDTHH:MM:SS.ffffff+HH:MM") */
#define RFC3339_OFFSET_MAXLEN	32

extern rfc3339_status rfc3339_parse(const char *s, size_t len,
									int64_t *unix_us);
extern rfc3339_status rfc3339_parse_offset(const char *s, size_t len,
										   int64_t *unix_us, int *offset_minutes);
extern const char *rfc3339_status_detail(rfc3339_status st);
extern size_t rfc3339_format_utc(int64_t unix_us, char *buf);
extern size_t rfc3339_format_offset(int64_t unix_us, int offset_minutes, char *buf);

#endif							/* OKNO_RFC3339_H */
