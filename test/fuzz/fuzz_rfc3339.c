/*-------------------------------------------------------------------------
 *
 * fuzz_rfc3339.c
 *		libFuzzer target: any bytes -> rfc3339_parse().
 *
 * The input is the date-time text itself, exactly as many bytes as the
 * fuzzer gives (libFuzzer hands over a heap copy of exactly that size, so
 * AddressSanitizer catches a read past the end; the text is not
 * NUL-terminated, as in the extension, where it comes from a jsonb string).
 *
 * Properties checked on every input:
 *
 *	- rfc3339_parse() returns the same status as an independent reference
 *	  (below) that follows the grammar and the order of checks documented
 *	  in rfc3339.c, and on success the same instant, computed with a naive
 *	  year-counting calendar rather than the days-from-civil algorithm;
 *	- a failed parse leaves the output untouched;
 *	- a successful parse gives an instant within years 0001..9999 UTC, which
 *	  rfc3339_format_utc() writes in okno's canonical UTC form
 *	  YYYY-MM-DDTHH:MM:SS[.ffffff]Z (fraction only when non-zero, then six
 *	  digits) into a buffer of exactly RFC3339_UTC_MAXLEN + 1 bytes, and
 *	  whose text parses back to the same instant;
 *	- rfc3339_parse_offset() agrees with rfc3339_parse(), and the instant
 *	  written back at its offset (the course's form, rfc3339_format_offset)
 *	  fits RFC3339_OFFSET_MAXLEN and parses back to the same instant and
 *	  offset.
 *
 * test/fuzz/fuzz_rfc3339.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "rfc3339.h"

/* a value that no successful parse produces */
#define SENTINEL	INT64_C(0x5A5A5A5A5A5A5A5A)

static bool ref_leap(int64_t y);
static int64_t ref_days(int64_t y, int m, int d);
static int	ref_number(const uint8_t *s, size_t from, size_t n);
static rfc3339_status ref_parse(const uint8_t *s, size_t n, int64_t *out);

static bool
ref_leap(int64_t y)
{
	if (y % 400 == 0)
		return true;
	if (y % 100 == 0)
		return false;
	return y % 4 == 0;
}

/*
 * Days from 0000-01-01 to y-m-d (0 <= y <= 9999): whole years first (year 0
 * is a leap year of the proleptic Gregorian calendar), then whole months.
 */
static int64_t
ref_days(int64_t y, int m, int d)
{
	static const int before_month[12] = {
		0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334
	};
	int64_t		days = 0;

	if (y > 0)
		days = 366 + (y - 1) * 365 + (y - 1) / 4 - (y - 1) / 100 + (y - 1) / 400;
	days += before_month[m - 1];
	if (m > 2 && ref_leap(y))
		days++;
	return days + d - 1;
}

/* the decimal value of the n ASCII digits s[from..from+n) */
static int
ref_number(const uint8_t *s, size_t from, size_t n)
{
	int			v = 0;
	size_t		i;

	for (i = 0; i < n; i++)
		v = v * 10 + (s[from + i] - '0');
	return v;
}

/*
 * The reference parser.  Syntax first, left to right: the first problem
 * decides (SYNTAX, NO_OFFSET when the text ends where the offset should
 * begin, FRACTION_TOO_LONG for a 7th fractional digit); then the date, the
 * hour and minute, a leap second, the second, the offset, and the range.
 */
static rfc3339_status
ref_parse(const uint8_t *s, size_t n, int64_t *out)
{
	static const char shape[] = "9999-99-99T99:99:99";
	size_t		i;
	size_t		p;
	size_t		k = 0;
	int64_t		fraction = 0;
	int			off_sign = 0;
	int			off_h = 0;
	int			off_m = 0;
	int			year,
				month,
				day,
				hour,
				minute,
				second;
	int			dim;
	int64_t		us;

	for (i = 0; i < sizeof(shape) - 1; i++)
	{
		if (i >= n)
			return RFC3339_SYNTAX;
		if (shape[i] == '9')
		{
			if (!fuzz_is_digit((char) s[i]))
				return RFC3339_SYNTAX;
		}
		else if (shape[i] == 'T')
		{
			if (s[i] != 'T' && s[i] != 't')
				return RFC3339_SYNTAX;
		}
		else if (s[i] != (uint8_t) shape[i])
			return RFC3339_SYNTAX;
	}
	p = sizeof(shape) - 1;
	if (p < n && s[p] == '.')
	{
		p++;
		while (p + k < n && fuzz_is_digit((char) s[p + k]))
			k++;
		if (k == 0)
			return RFC3339_SYNTAX;
		if (k > 6)
			return RFC3339_FRACTION_TOO_LONG;
		fraction = ref_number(s, p, k);
		for (i = k; i < 6; i++)
			fraction *= 10;
		p += k;
	}
	if (p == n)
		return RFC3339_NO_OFFSET;
	if (s[p] == 'Z' || s[p] == 'z')
	{
		if (p + 1 != n)
			return RFC3339_SYNTAX;
	}
	else if (s[p] == '+' || s[p] == '-')
	{
		if (n - p != 6 ||
			!fuzz_is_digit((char) s[p + 1]) || !fuzz_is_digit((char) s[p + 2]) ||
			s[p + 3] != ':' ||
			!fuzz_is_digit((char) s[p + 4]) || !fuzz_is_digit((char) s[p + 5]))
			return RFC3339_SYNTAX;
		off_sign = s[p] == '+' ? 1 : -1;
		off_h = ref_number(s, p + 1, 2);
		off_m = ref_number(s, p + 4, 2);
	}
	else
		return RFC3339_SYNTAX;

	year = ref_number(s, 0, 4);
	month = ref_number(s, 5, 2);
	day = ref_number(s, 8, 2);
	hour = ref_number(s, 11, 2);
	minute = ref_number(s, 14, 2);
	second = ref_number(s, 17, 2);

	if (month < 1 || month > 12)
		return RFC3339_BAD_DATE;
	if (month == 2)
		dim = ref_leap(year) ? 29 : 28;
	else if (month == 4 || month == 6 || month == 9 || month == 11)
		dim = 30;
	else
		dim = 31;
	if (day < 1 || day > dim)
		return RFC3339_BAD_DATE;
	if (hour > 23 || minute > 59)
		return RFC3339_BAD_TIME;
	if (second == 60)
		return RFC3339_LEAP_SECOND;
	if (second > 59)
		return RFC3339_BAD_TIME;
	if (off_h > 23 || off_m > 59)
		return RFC3339_BAD_OFFSET;

	us = (ref_days(year, month, day) - ref_days(1970, 1, 1)) * INT64_C(86400);
	us += hour * 3600 + minute * 60 + second;
	us -= off_sign * (off_h * 3600 + off_m * 60);
	us = us * INT64_C(1000000) + fraction;
	if (us < RFC3339_MIN_UNIX_US || us > RFC3339_MAX_UNIX_US)
		return RFC3339_OUT_OF_RANGE;
	*out = us;
	return RFC3339_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t		got = SENTINEL;
	int64_t		want = SENTINEL;
	rfc3339_status st;
	rfc3339_status ref;
	const char *detail;
	int			shown = size > 64 ? 64 : (int) size;

	st = rfc3339_parse((const char *) data, size, &got);
	ref = ref_parse(data, size, &want);

	detail = rfc3339_status_detail(st);
	if (detail == NULL || strncmp(detail, "unrecognized", 12) == 0)
		FUZZ_FAIL("status %d has no detail", (int) st);

	if (st != ref)
		FUZZ_FAIL("\"%.*s\": status %d, the reference says %d",
				  shown, (const char *) data, (int) st, (int) ref);
	if (st != RFC3339_OK)
	{
		if (got != SENTINEL)
			FUZZ_FAIL("\"%.*s\": failed with status %d but wrote %lld",
					  shown, (const char *) data, (int) st, (long long) got);
		return 0;
	}
	if (got != want)
		FUZZ_FAIL("\"%.*s\": instant %lld, the reference says %lld",
				  shown, (const char *) data, (long long) got, (long long) want);
	if (got < RFC3339_MIN_UNIX_US || got > RFC3339_MAX_UNIX_US)
		FUZZ_FAIL("\"%.*s\": instant %lld outside years 0001..9999",
				  shown, (const char *) data, (long long) got);

	fuzz_format_and_check(got);

	{
		int64_t		again = SENTINEL;
		int			offset = 0;
		int			offset_again = 0;
		char		buf[RFC3339_OFFSET_MAXLEN + 1];
		size_t		n;

		if (rfc3339_parse_offset((const char *) data, size, &again, &offset) != RFC3339_OK ||
			again != got)
			FUZZ_FAIL("\"%.*s\": rfc3339_parse_offset disagrees", shown, (const char *) data);
		if (offset < -(23 * 60 + 59) || offset > 23 * 60 + 59)
			FUZZ_FAIL("\"%.*s\": offset %d", shown, (const char *) data, offset);
		n = rfc3339_format_offset(got, offset, buf);
		if (n > RFC3339_OFFSET_MAXLEN || n != strlen(buf))
			FUZZ_FAIL("\"%.*s\": course form of length %zu", shown, (const char *) data, n);
		again = SENTINEL;
		/* a local year of 0000 is written as such and still parses */
		if (rfc3339_parse_offset(buf, n, &again, &offset_again) != RFC3339_OK ||
			again != got || offset_again != offset)
			FUZZ_FAIL("\"%.*s\": course form \"%s\" does not parse back",
					  shown, (const char *) data, buf);
	}
	return 0;
}
