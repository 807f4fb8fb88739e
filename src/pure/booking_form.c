/*-------------------------------------------------------------------------
 *
 * booking_form.c
 *		A booking request's form: the JSON text its fingerprint is the
 *		SHA-256 of, and which the SQL function okno_canonical returns.
 *
 * okno's form (fingerprint version 1) is a JSON object with its keys in
 * byte order, no insignificant whitespace, the resource as a plain decimal
 * integer and both instants in the UTC form written by
 * rfc3339_format_utc():
 *
 *		{"ends_at":"...Z","resource_id":N,"starts_at":"...Z"}
 *
 * Equal requests therefore always produce byte-identical text.
 *
 * okno_booking_form_write_course writes the course's form (fingerprint
 * version 0), the same but with each instant at the offset it was sent in,
 * as the course's Python service computed its fingerprints.
 *
 * (An operation's request, okno_idempotent's, has RFC 8785's form
 * instead: jcs.c.)
 *
 * src/pure/booking_form.c
 *
 *-------------------------------------------------------------------------
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "booking_form.h"
#include "rfc3339.h"

static char *put_literal(char *p, const char *s);
static char *put_int32(char *p, int32_t value);

/*
 * Copy the NUL-terminated string s to p (without the NUL) and return the
 * position after it.
 */
static char *
put_literal(char *p, const char *s)
{
	size_t		n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/*
 * Write value in decimal (with a leading '-' if negative) at p and return
 * the position after it.  Handles INT32_MIN.
 */
static char *
put_int32(char *p, int32_t value)
{
	char		digits[OKNO_INT32_DECIMAL_MAXLEN];
	int			n = 0;
	uint32_t	u;

	if (value < 0)
	{
		*p++ = '-';
		u = (uint32_t) (-(int64_t) value);
	}
	else
		u = (uint32_t) value;

	do
	{
		digits[n++] = (char) ('0' + u % 10);
		u /= 10;
	} while (u != 0);

	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/*
 * okno_booking_form_write
 *		Write okno's form (fingerprint version 1) of (resource_id, starts,
 *		ends) into buf.
 *
 * buf must have room for OKNO_BOOKING_FORM_MAXLEN + 1 bytes.  The text is
 * NUL-terminated; its length without the NUL is returned.  The instants are
 * expected to lie between RFC3339_MIN_UNIX_US and RFC3339_MAX_UNIX_US.
 */
size_t
okno_booking_form_write(char *buf, int32_t resource_id, int64_t starts_unix_us,
						int64_t ends_unix_us)
{
	char	   *p = buf;

	p = put_literal(p, "{\"ends_at\":\"");
	p += rfc3339_format_utc(ends_unix_us, p);
	p = put_literal(p, "\",\"resource_id\":");
	p = put_int32(p, resource_id);
	p = put_literal(p, ",\"starts_at\":\"");
	p += rfc3339_format_utc(starts_unix_us, p);
	p = put_literal(p, "\"}");
	*p = '\0';

	return (size_t) (p - buf);
}

/*
 * okno_booking_form_write_course
 *		Write the course's form (fingerprint version 0) into buf:
 *		json.dumps(BookingIn.model_dump(mode="json"), sort_keys=True,
 *		separators=(",", ":")) under pydantic 2, which writes each instant at
 *		the offset the client sent ("Z" for a zero one) and its fraction as
 *		six digits only when it is not zero.  buf must have room for
 *		OKNO_BOOKING_FORM_COURSE_MAXLEN + 1 bytes.  Returns the length.
 */
size_t
okno_booking_form_write_course(char *buf, int32_t resource_id,
							   int64_t starts_unix_us, int starts_offset,
							   int64_t ends_unix_us, int ends_offset)
{
	char	   *p = buf;

	p = put_literal(p, "{\"ends_at\":\"");
	p += rfc3339_format_offset(ends_unix_us, ends_offset, p);
	p = put_literal(p, "\",\"resource_id\":");
	p = put_int32(p, resource_id);
	p = put_literal(p, ",\"starts_at\":\"");
	p += rfc3339_format_offset(starts_unix_us, starts_offset, p);
	p = put_literal(p, "\"}");
	*p = '\0';

	return (size_t) (p - buf);
}
