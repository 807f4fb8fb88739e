/*-------------------------------------------------------------------------
 *
 * rfc3339.c
 *		Strict RFC 3339 date-time parser and UTC formatter.
 *
 * The parser accepts exactly the RFC 3339 "date-time" production with a
 * 4-digit year, at most 6 fractional digits and a mandatory offset:
 *
 *		YYYY-MM-DD ("T" / "t") hh:mm:ss [ "." 1*6DIGIT ]
 *			( "Z" / "z" / ("+" / "-") hh ":" mm )
 *
 * Nothing else is tolerated: no surrounding or embedded whitespace, no space
 * in place of the "T", no non-ASCII digits, no leap seconds.  The input is a
 * counted byte string that need not be NUL-terminated.
 *
 * Syntax is checked first, left to right, so that the first syntactic
 * problem decides the status (RFC3339_SYNTAX, RFC3339_NO_OFFSET or
 * RFC3339_FRACTION_TOO_LONG).  Only a syntactically complete string is then
 * checked for a valid date, time of day, offset and finally for the UTC
 * instant lying within years 0001 to 9999.
 *
 * Calendar arithmetic uses the proleptic Gregorian calendar and Howard
 * Hinnant's days-from-civil / civil-from-days algorithms, which are exact
 * for every year including 0 and negative years, with int64 arithmetic.
 *
 * The formatter writes the UTC form "YYYY-MM-DDTHH:MM:SSZ", adding a
 * 6-digit fraction only when the sub-second part is non-zero; its variant
 * rfc3339_format_offset writes the wall-clock time at a given offset, "Z"
 * for zero, as the course's service stored fingerprints (pydantic 2).
 *
 * src/rfc3339.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rfc3339.h"

#define USECS_PER_SEC	INT64_C(1000000)
#define SECS_PER_DAY	INT64_C(86400)
#define USECS_PER_DAY	(SECS_PER_DAY * USECS_PER_SEC)

#define RFC3339_MAX_FRACTION_DIGITS 6

static bool read_digits(const char *s, size_t len, size_t *pos,
						size_t ndigits, int *value);
static bool read_char(const char *s, size_t len, size_t *pos, char c);
static bool is_leap_year(int year);
static int	days_in_month(int year, int month);
static int64_t days_from_civil(int64_t y, int m, int d);
static void civil_from_days(int64_t z, int *year, int *month, int *day);
static char *put_digits(char *p, uint32_t value, int ndigits);

/*
 * Read exactly ndigits ASCII digits at s[*pos]; on success advance *pos and
 * store their decimal value.  *pos must not exceed len.
 */
static bool
read_digits(const char *s, size_t len, size_t *pos, size_t ndigits, int *value)
{
	int			v = 0;
	size_t		i;

	if (len - *pos < ndigits)
		return false;
	for (i = 0; i < ndigits; i++)
	{
		unsigned char c = (unsigned char) s[*pos + i];

		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*pos += ndigits;
	*value = v;
	return true;
}

/*
 * Consume the character c at s[*pos], if it is there.
 */
static bool
read_char(const char *s, size_t len, size_t *pos, char c)
{
	if (*pos >= len || s[*pos] != c)
		return false;
	(*pos)++;
	return true;
}

static bool
is_leap_year(int year)
{
	return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

/*
 * Number of days in the given month (1..12) of the given year.
 */
static int
days_in_month(int year, int month)
{
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (month == 2 && is_leap_year(year))
		return 29;
	return mdays[month - 1];
}

/*
 * Days since 1970-01-01 of the proleptic Gregorian date y-m-d.
 *
 * Hinnant's algorithm: shift the year to start in March so that the leap
 * day is the last day of the year, then count whole 400-year eras (146097
 * days each) with floor division.
 */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe;
	int64_t		doy;
	int64_t		doe;

	if (m <= 2)
		y -= 1;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;		/* [0, 399] */
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;	/* [0, 365] */
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;	/* [0, 146096] */
	return era * 146097 + doe - 719468;
}

/*
 * Inverse of days_from_civil(): the proleptic Gregorian date of the day z
 * days after 1970-01-01 (z may be negative).
 */
static void
civil_from_days(int64_t z, int *year, int *month, int *day)
{
	int64_t		era;
	int64_t		doe;
	int64_t		yoe;
	int64_t		doy;
	int64_t		mp;
	int64_t		y;
	int			m;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;		/* [0, 146096] */
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;	/* [0, 399] */
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);	/* [0, 365] */
	mp = (5 * doy + 2) / 153;	/* [0, 11], March-based */
	*day = (int) (doy - (153 * mp + 2) / 5 + 1);
	m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*month = m;
	*year = (int) (y + (m <= 2 ? 1 : 0));
}

/*
 * rfc3339_parse
 *		Parse s[0..len) as a strict RFC 3339 date-time.
 *
 * On RFC3339_OK, *unix_us receives the UTC instant in microseconds since the
 * Unix epoch; otherwise *unix_us is left untouched.
 */
rfc3339_status
rfc3339_parse(const char *s, size_t len, int64_t *unix_us)
{
	int			offset_minutes;

	return rfc3339_parse_offset(s, len, unix_us, &offset_minutes);
}

/*
 * rfc3339_parse_offset
 *		rfc3339_parse, also giving the offset the instant was written with,
 *		in minutes east of UTC ("Z" and "-00:00" are 0).
 */
rfc3339_status
rfc3339_parse_offset(const char *s, size_t len, int64_t *unix_us,
					 int *offset_minutes)
{
	size_t		pos = 0;
	int			year,
				month,
				day,
				hour,
				minute,
				second;
	int			fraction = 0;
	int			off_sign = 0;
	int			off_hour = 0;
	int			off_minute = 0;
	int64_t		secs;
	int64_t		result;

	/* date-fullyear "-" date-month "-" date-mday */
	if (!read_digits(s, len, &pos, 4, &year) ||
		!read_char(s, len, &pos, '-') ||
		!read_digits(s, len, &pos, 2, &month) ||
		!read_char(s, len, &pos, '-') ||
		!read_digits(s, len, &pos, 2, &day))
		return RFC3339_SYNTAX;

	/* "T" / "t" */
	if (!read_char(s, len, &pos, 'T') && !read_char(s, len, &pos, 't'))
		return RFC3339_SYNTAX;

	/* time-hour ":" time-minute ":" time-second */
	if (!read_digits(s, len, &pos, 2, &hour) ||
		!read_char(s, len, &pos, ':') ||
		!read_digits(s, len, &pos, 2, &minute) ||
		!read_char(s, len, &pos, ':') ||
		!read_digits(s, len, &pos, 2, &second))
		return RFC3339_SYNTAX;

	/* [ time-secfrac ] */
	if (read_char(s, len, &pos, '.'))
	{
		size_t		ndigits = 0;	/* cannot overflow: bounded by len */

		while (pos < len && s[pos] >= '0' && s[pos] <= '9')
		{
			if (ndigits < RFC3339_MAX_FRACTION_DIGITS)
				fraction = fraction * 10 + (s[pos] - '0');
			ndigits++;
			pos++;
		}
		if (ndigits == 0)
			return RFC3339_SYNTAX;
		if (ndigits > RFC3339_MAX_FRACTION_DIGITS)
			return RFC3339_FRACTION_TOO_LONG;
		for (; ndigits < RFC3339_MAX_FRACTION_DIGITS; ndigits++)
			fraction *= 10;
	}

	/* time-offset */
	if (pos == len)
		return RFC3339_NO_OFFSET;
	if (s[pos] == 'Z' || s[pos] == 'z')
		pos++;
	else if (s[pos] == '+' || s[pos] == '-')
	{
		off_sign = (s[pos] == '-') ? -1 : 1;
		pos++;
		if (!read_digits(s, len, &pos, 2, &off_hour) ||
			!read_char(s, len, &pos, ':') ||
			!read_digits(s, len, &pos, 2, &off_minute))
			return RFC3339_SYNTAX;
	}
	else
		return RFC3339_SYNTAX;

	/* nothing may follow */
	if (pos != len)
		return RFC3339_SYNTAX;

	/* The string is well-formed; now check the values. */
	if (month < 1 || month > 12 ||
		day < 1 || day > days_in_month(year, month))
		return RFC3339_BAD_DATE;
	if (hour > 23 || minute > 59)
		return RFC3339_BAD_TIME;
	if (second == 60)
		return RFC3339_LEAP_SECOND;
	if (second > 59)
		return RFC3339_BAD_TIME;
	if (off_hour > 23 || off_minute > 59)
		return RFC3339_BAD_OFFSET;

	/* local time minus offset gives UTC */
	secs = days_from_civil(year, month, day) * SECS_PER_DAY +
		hour * INT64_C(3600) + minute * INT64_C(60) + second;
	secs -= off_sign * (off_hour * INT64_C(3600) + off_minute * INT64_C(60));
	result = secs * USECS_PER_SEC + fraction;

	if (result < RFC3339_MIN_UNIX_US || result > RFC3339_MAX_UNIX_US)
		return RFC3339_OUT_OF_RANGE;

	*unix_us = result;
	*offset_minutes = off_sign * (off_hour * 60 + off_minute);
	return RFC3339_OK;
}

/*
 * rfc3339_status_detail
 *		Short English phrase explaining a parse status, suitable for
 *		embedding after a colon in an error message.
 */
const char *
rfc3339_status_detail(rfc3339_status st)
{
	switch (st)
	{
		case RFC3339_OK:
			return "ok";
		case RFC3339_SYNTAX:
			return "expected YYYY-MM-DDTHH:MM:SS[.ffffff] followed by Z or an offset +HH:MM or -HH:MM";
		case RFC3339_NO_OFFSET:
			return "the offset (Z, +HH:MM or -HH:MM) is missing";
		case RFC3339_FRACTION_TOO_LONG:
			return "more than 6 fractional digits";
		case RFC3339_BAD_DATE:
			return "no such date";
		case RFC3339_BAD_TIME:
			return "no such time of day";
		case RFC3339_LEAP_SECOND:
			return "leap seconds are not accepted";
		case RFC3339_BAD_OFFSET:
			return "the offset is outside -23:59 to +23:59";
		case RFC3339_OUT_OF_RANGE:
			return "the instant in UTC is outside years 0001 to 9999";
	}
	return "unrecognized date-time error";
}

/*
 * Write value as exactly ndigits decimal digits (zero-padded) at p and
 * return the position after them.
 */
static char *
put_digits(char *p, uint32_t value, int ndigits)
{
	int			i;

	for (i = ndigits - 1; i >= 0; i--)
	{
		p[i] = (char) ('0' + value % 10);
		value /= 10;
	}
	return p + ndigits;
}

/*
 * rfc3339_format_utc
 *		Write unix_us as "YYYY-MM-DDTHH:MM:SS[.ffffff]Z" into buf.
 *
 * buf must have room for RFC3339_UTC_MAXLEN + 1 bytes.  The result is
 * NUL-terminated; its length without the NUL is returned.  The fraction is
 * written, always with 6 digits, only when it is non-zero.
 *
 * The caller is expected to pass a value between RFC3339_MIN_UNIX_US and
 * RFC3339_MAX_UNIX_US.  As a safety net against overrunning buf, values
 * outside that range are clamped to it.
 */
/*
 * Write the wall-clock time of local_us (microseconds since 1970-01-01T00:00
 * of the same clock) as YYYY-MM-DDTHH:MM:SS, then ".ffffff" only if the
 * sub-second part is not zero; return the position after it.  The year is
 * clamped to 0000..9999.
 */
static char *
put_wall_clock(char *p, int64_t local_us)
{
	int64_t		days;
	int64_t		usec_of_day;
	int64_t		sec_of_day;
	uint32_t	usec;
	int			year,
				month,
				day;

	if (local_us < RFC3339_MIN_UNIX_US - USECS_PER_DAY * 366)
		local_us = RFC3339_MIN_UNIX_US - USECS_PER_DAY * 366;
	else if (local_us > RFC3339_MAX_UNIX_US)
		local_us = RFC3339_MAX_UNIX_US;

	/* floor division, so that instants before 1970 work */
	days = local_us / USECS_PER_DAY;
	usec_of_day = local_us % USECS_PER_DAY;
	if (usec_of_day < 0)
	{
		usec_of_day += USECS_PER_DAY;
		days--;
	}
	sec_of_day = usec_of_day / USECS_PER_SEC;
	usec = (uint32_t) (usec_of_day % USECS_PER_SEC);

	civil_from_days(days, &year, &month, &day);

	p = put_digits(p, (uint32_t) year, 4);
	*p++ = '-';
	p = put_digits(p, (uint32_t) month, 2);
	*p++ = '-';
	p = put_digits(p, (uint32_t) day, 2);
	*p++ = 'T';
	p = put_digits(p, (uint32_t) (sec_of_day / 3600), 2);
	*p++ = ':';
	p = put_digits(p, (uint32_t) (sec_of_day / 60 % 60), 2);
	*p++ = ':';
	p = put_digits(p, (uint32_t) (sec_of_day % 60), 2);
	if (usec != 0)
	{
		*p++ = '.';
		p = put_digits(p, usec, 6);
	}
	return p;
}

/*
 * rfc3339_format_utc
 *		Write unix_us as YYYY-MM-DDTHH:MM:SS[.ffffff]Z into buf (at least
 *		RFC3339_UTC_MAXLEN + 1 bytes) and return the length written.
 */
size_t
rfc3339_format_utc(int64_t unix_us, char *buf)
{
	char	   *p;

	if (unix_us < RFC3339_MIN_UNIX_US)
		unix_us = RFC3339_MIN_UNIX_US;
	else if (unix_us > RFC3339_MAX_UNIX_US)
		unix_us = RFC3339_MAX_UNIX_US;

	p = put_wall_clock(buf, unix_us);
	*p++ = 'Z';
	*p = '\0';

	return (size_t) (p - buf);
}

/*
 * rfc3339_format_offset
 *		Write unix_us as the wall-clock time at offset_minutes east of UTC,
 *		YYYY-MM-DDTHH:MM:SS[.ffffff], then "Z" for a zero offset or
 *		"+HH:MM" / "-HH:MM", into buf (at least RFC3339_OFFSET_MAXLEN + 1
 *		bytes); return the length written.  This is how Python's datetime,
 *		as pydantic 2 serialises it, writes an aware instant.  The offset is
 *		clamped to -23:59..+23:59.
 */
size_t
rfc3339_format_offset(int64_t unix_us, int offset_minutes, char *buf)
{
	char	   *p;
	int			a;

	if (offset_minutes < -(23 * 60 + 59))
		offset_minutes = -(23 * 60 + 59);
	else if (offset_minutes > 23 * 60 + 59)
		offset_minutes = 23 * 60 + 59;
	if (unix_us < RFC3339_MIN_UNIX_US)
		unix_us = RFC3339_MIN_UNIX_US;
	else if (unix_us > RFC3339_MAX_UNIX_US)
		unix_us = RFC3339_MAX_UNIX_US;

	p = put_wall_clock(buf, unix_us + offset_minutes * 60 * USECS_PER_SEC);
	if (offset_minutes == 0)
		*p++ = 'Z';
	else
	{
		*p++ = offset_minutes < 0 ? '-' : '+';
		a = offset_minutes < 0 ? -offset_minutes : offset_minutes;
		p = put_digits(p, (uint32_t) (a / 60), 2);
		*p++ = ':';
		p = put_digits(p, (uint32_t) (a % 60), 2);
	}
	*p = '\0';

	return (size_t) (p - buf);
}
