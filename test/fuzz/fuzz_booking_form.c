/*-------------------------------------------------------------------------
 *
 * fuzz_booking_form.c
 *		libFuzzer target: bytes -> okno_booking_form_write().
 *
 * Input layout (little-endian, missing bytes read as zero):
 *
 *		0..3	resource id, any int32 (the writer does not restrict it;
 *				the extension only passes 1..2147483647)
 *		4..11	starts_at, a raw int64
 *		12..19	ends_at, a raw int64
 *		20		mode bits:
 *				  0x01	use the raw int64 values as they are, so that they
 *						may lie outside years 0001..9999: the formatter then
 *						clamps them to that range (its documented safety net)
 *				  0x02	round both instants down to a whole second (so that
 *						the fraction-less form is reached often)
 *
 * Without 0x01 each raw value is mapped into the valid range,
 * RFC3339_MIN_UNIX_US + raw mod (RFC3339_MAX_UNIX_US - RFC3339_MIN_UNIX_US + 1).
 *
 * Properties: the output, written into a heap buffer of exactly
 * OKNO_BOOKING_FORM_MAXLEN + 1 bytes, is NUL-terminated, as long as the
 * returned length, and has exactly the shape
 *
 *		{"ends_at":"<UTC>","resource_id":<N>,"starts_at":"<UTC>"}
 *
 * where N is the id in plain decimal and each <UTC> is the canonical UTC
 * form of its (clamped) instant and parses back to it with rfc3339_parse().
 *
 * test/fuzz/fuzz_booking_form.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "booking_form.h"
#include "fuzz.h"
#include "rfc3339.h"

#define MODE_RAW		0x01
#define MODE_WHOLE_SEC	0x02

static int64_t pick_instant(uint64_t raw, uint8_t mode);
static int64_t clamp_instant(int64_t v);
static const char *expect_literal(const char *p, const char *lit,
								  const char *text);
static const char *expect_instant(const char *p, int64_t unix_us,
								  const char *text);

/* the instant the writer is given, from the raw bytes and the mode */
static int64_t
pick_instant(uint64_t raw, uint8_t mode)
{
	int64_t		v;

	if (mode & MODE_RAW)
		memcpy(&v, &raw, sizeof(v));
	else
	{
		uint64_t	span = (uint64_t) (RFC3339_MAX_UNIX_US - RFC3339_MIN_UNIX_US) + 1;

		v = RFC3339_MIN_UNIX_US + (int64_t) (raw % span);
	}
	if (mode & MODE_WHOLE_SEC)
	{
		int64_t		sub = v % 1000000;

		/* round toward minus infinity, without overflowing at INT64_MIN */
		if (sub < 0)
			v = (v - sub >= INT64_MIN + 1000000) ? v - sub - 1000000 : INT64_MIN;
		else
			v -= sub;
	}
	return v;
}

/* the instant the text must carry: the writer clamps to years 0001..9999 */
static int64_t
clamp_instant(int64_t v)
{
	if (v < RFC3339_MIN_UNIX_US)
		return RFC3339_MIN_UNIX_US;
	if (v > RFC3339_MAX_UNIX_US)
		return RFC3339_MAX_UNIX_US;
	return v;
}

static const char *
expect_literal(const char *p, const char *lit, const char *text)
{
	size_t		n = strlen(lit);

	if (strncmp(p, lit, n) != 0)
		FUZZ_FAIL("booking form %s: expected %s at offset %td",
				  text, lit, p - text);
	return p + n;
}

/* the UTC form up to the closing quote, which is checked and skipped */
static const char *
expect_instant(const char *p, int64_t unix_us, const char *text)
{
	const char *q = strchr(p, '"');
	char		copy[RFC3339_UTC_MAXLEN + 1];
	size_t		len;

	if (q == NULL)
		FUZZ_FAIL("booking form %s: unterminated instant at offset %td",
				  text, p - text);
	len = (size_t) (q - p);
	if (len > RFC3339_UTC_MAXLEN)
		FUZZ_FAIL("booking form %s: instant of %zu bytes at offset %td",
				  text, len, p - text);
	memcpy(copy, p, len);
	copy[len] = '\0';
	fuzz_check_utc_form(copy, len, unix_us);
	return q + 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_reader r = {data, size, 0};
	int32_t		resource_id;
	uint32_t	rid_bits = fuzz_u32(&r);
	uint64_t	starts_raw = fuzz_u64(&r);
	uint64_t	ends_raw = fuzz_u64(&r);
	uint8_t		mode = fuzz_u8(&r);
	int64_t		starts;
	int64_t		ends;
	char	   *buf;
	char		id_text[OKNO_INT32_DECIMAL_MAXLEN + 1];
	size_t		len;
	const char *p;

	memcpy(&resource_id, &rid_bits, sizeof(resource_id));
	starts = pick_instant(starts_raw, mode);
	ends = pick_instant(ends_raw, mode);

	buf = malloc(OKNO_BOOKING_FORM_MAXLEN + 1);
	if (buf == NULL)
		abort();
	len = okno_booking_form_write(buf, resource_id, starts, ends);

	if (len > OKNO_BOOKING_FORM_MAXLEN)
		FUZZ_FAIL("okno_booking_form_write returned %zu > %zu",
				  len, (size_t) OKNO_BOOKING_FORM_MAXLEN);
	if (buf[len] != '\0' || strlen(buf) != len)
		FUZZ_FAIL("booking form is not NUL-terminated at its length %zu", len);

	snprintf(id_text, sizeof(id_text), "%" PRId32, resource_id);

	p = expect_literal(buf, "{\"ends_at\":\"", buf);
	p = expect_instant(p, clamp_instant(ends), buf);
	p = expect_literal(p, ",\"resource_id\":", buf);
	p = expect_literal(p, id_text, buf);
	p = expect_literal(p, ",\"starts_at\":\"", buf);
	p = expect_instant(p, clamp_instant(starts), buf);
	p = expect_literal(p, "}", buf);
	if (*p != '\0')
		FUZZ_FAIL("booking form %s: trailing bytes at offset %td", buf, p - buf);

	free(buf);
	return 0;
}
