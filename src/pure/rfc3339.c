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
 * src/pure/rfc3339.c
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

/*
 * A date-time's fields as written, before their values are checked.  The
 * fraction is in microseconds (0 when there is none); the offset is its
 * sign (-1 or +1; 0 for "Z"), hours and minutes.
 */
typedef struct rfc3339_fields
{
	int			year;
	int			month;
	int			day;
	int			hour;
	int			minute;
	int			second;
	int			fraction;
	int			off_sign;
	int			off_hour;
	int			off_minute;
} rfc3339_fields;

static bool read_digits(const char *s, size_t len, size_t *pos,
						size_t ndigits, int *value);
static bool read_char(const char *s, size_t len, size_t *pos, char c);
static bool is_leap_year(int year);
static int	days_in_month(int year, int month);
static int64_t days_from_civil(int64_t y, int m, int d);
static void civil_from_days(int64_t z, int *year, int *month, int *day);
static bool scan_date_time(const char *s, size_t len, size_t *pos,
						   rfc3339_fields *f);
static rfc3339_status scan_fraction(const char *s, size_t len, size_t *pos,
									rfc3339_fields *f);
static rfc3339_status scan_offset(const char *s, size_t len, size_t *pos,
								  rfc3339_fields *f);
static rfc3339_status check_fields(const rfc3339_fields *f);
static int64_t utc_microseconds(const rfc3339_fields *f);
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
 * The syntax up to the seconds, date-fullyear "-" date-month "-" date-mday
 * ("T" / "t") time-hour ":" time-minute ":" time-second, read at s[*pos];
 * false if it is not there (RFC3339_SYNTAX).
 */
static bool
scan_date_time(const char *s, size_t len, size_t *pos, rfc3339_fields *f)
{
	/* date-fullyear "-" date-month "-" date-mday */
	if (!read_digits(s, len, pos, 4, &f->year) ||
		!read_char(s, len, pos, '-') ||
		!read_digits(s, len, pos, 2, &f->month) ||
		!read_char(s, len, pos, '-') ||
		!read_digits(s, len, pos, 2, &f->day))
		return false;

	/* "T" / "t" */
	if (!read_char(s, len, pos, 'T') && !read_char(s, len, pos, 't'))
		return false;

	/* time-hour ":" time-minute ":" time-second */
	if (!read_digits(s, len, pos, 2, &f->hour) ||
		!read_char(s, len, pos, ':') ||
		!read_digits(s, len, pos, 2, &f->minute) ||
		!read_char(s, len, pos, ':') ||
		!read_digits(s, len, pos, 2, &f->second))
		return false;
	return true;
}

/*
 * The optional [ time-secfrac ] at s[*pos], into f->fraction as
 * microseconds (left as it is when there is none).  Every digit is read, so that too many of them are
 * RFC3339_FRACTION_TOO_LONG rather than a syntax error further on.
 */
static rfc3339_status
scan_fraction(const char *s, size_t len, size_t *pos, rfc3339_fields *f)
{
	size_t		p = *pos;
	size_t		ndigits = 0;	/* cannot overflow: bounded by len */
	int			fraction = 0;

	if (!read_char(s, len, &p, '.'))
		return RFC3339_OK;
	while (p < len && s[p] >= '0' && s[p] <= '9')
	{
		if (ndigits < RFC3339_MAX_FRACTION_DIGITS)
			fraction = fraction * 10 + (s[p] - '0');
		ndigits++;
		p++;
	}
	if (ndigits == 0)
		return RFC3339_SYNTAX;
	if (ndigits > RFC3339_MAX_FRACTION_DIGITS)
		return RFC3339_FRACTION_TOO_LONG;
	for (; ndigits < RFC3339_MAX_FRACTION_DIGITS; ndigits++)
		fraction *= 10;
	*pos = p;
	f->fraction = fraction;
	return RFC3339_OK;
}

/*
 * The mandatory time-offset at s[*pos], "Z" / "z" / ("+" / "-") hh ":" mm;
 * nothing at all is RFC3339_NO_OFFSET.
 */
static rfc3339_status
scan_offset(const char *s, size_t len, size_t *pos, rfc3339_fields *f)
{
	if (*pos == len)
		return RFC3339_NO_OFFSET;
	if (s[*pos] == 'Z' || s[*pos] == 'z')
		(*pos)++;
	else if (s[*pos] == '+' || s[*pos] == '-')
	{
		f->off_sign = (s[*pos] == '-') ? -1 : 1;
		(*pos)++;
		if (!read_digits(s, len, pos, 2, &f->off_hour) ||
			!read_char(s, len, pos, ':') ||
			!read_digits(s, len, pos, 2, &f->off_minute))
			return RFC3339_SYNTAX;
	}
	else
		return RFC3339_SYNTAX;
	return RFC3339_OK;
}

/*
 * The values of a well-formed string: a date that exists, a time of day
 * (second 60, a leap second, has a status of its own) and an offset within
 * -23:59 to +23:59, checked in that order.
 */
static rfc3339_status
check_fields(const rfc3339_fields *f)
{
	if (f->month < 1 || f->month > 12 ||
		f->day < 1 || f->day > days_in_month(f->year, f->month))
		return RFC3339_BAD_DATE;
	if (f->hour > 23 || f->minute > 59)
		return RFC3339_BAD_TIME;
	if (f->second == 60)
		return RFC3339_LEAP_SECOND;
	if (f->second > 59)
		return RFC3339_BAD_TIME;
	if (f->off_hour > 23 || f->off_minute > 59)
		return RFC3339_BAD_OFFSET;
	return RFC3339_OK;
}

/*
 * The UTC instant of checked fields, in microseconds since the Unix epoch:
 * the local time minus the offset.  Not yet checked against the range.
 */
static int64_t
utc_microseconds(const rfc3339_fields *f)
{
	int64_t		secs;

	secs = days_from_civil(f->year, f->month, f->day) * SECS_PER_DAY +
		f->hour * INT64_C(3600) + f->minute * INT64_C(60) + f->second;
	secs -= f->off_sign * (f->off_hour * INT64_C(3600) + f->off_minute * INT64_C(60));
	return secs * USECS_PER_SEC + f->fraction;
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
 *
 * The syntax first, left to right, so that the first syntactic problem
 * decides the status; then the values; then the range of the instant.
 */
rfc3339_status
rfc3339_parse_offset(const char *s, size_t len, int64_t *unix_us,
					 int *offset_minutes)
{
	size_t		pos = 0;
	rfc3339_fields f;
	rfc3339_status st;
	int64_t		result;

	f.fraction = 0;
	f.off_sign = 0;
	f.off_hour = 0;
	f.off_minute = 0;

	if (!scan_date_time(s, len, &pos, &f))
		return RFC3339_SYNTAX;
	st = scan_fraction(s, len, &pos, &f);
	if (st != RFC3339_OK)
		return st;
	st = scan_offset(s, len, &pos, &f);
	if (st != RFC3339_OK)
		return st;

	/* nothing may follow */
	if (pos != len)
		return RFC3339_SYNTAX;

	/* The string is well-formed; now check the values. */
	st = check_fields(&f);
	if (st != RFC3339_OK)
		return st;

	result = utc_microseconds(&f);
	if (result < RFC3339_MIN_UNIX_US || result > RFC3339_MAX_UNIX_US)
		return RFC3339_OUT_OF_RANGE;

	*unix_us = result;
	*offset_minutes = f.off_sign * (f.off_hour * 60 + f.off_minute);
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
