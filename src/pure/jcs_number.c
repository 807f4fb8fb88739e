/*-------------------------------------------------------------------------
 *
 * jcs_number.c
 *		RFC 8785 JSON Canonicalization Scheme (JCS): a number's canonical
 *		text, as ECMAScript's Number::toString writes the double nearest to
 *		the number's JSON text.
 *
 * Numbers.  The text is scanned once for its significant digits d1..dk
 * (leading and trailing zeros dropped) and the exponent n that makes the
 * value 0.d1..dk x 10^n; digit counts and exponents are kept in 64 bits and
 * the exponent saturates, so no text, however long, overflows anything.
 * ECMAScript's rule then needs the shortest digit string that converts back
 * to the same double (of those, the one nearest to it):
 *
 *	- fast path: with k <= 15 and |n| <= 300 the digits are d1..dk
 *	  themselves.  Every decimal of at most DBL_DIG = 15 significant digits
 *	  in the normal range survives the trip to double and back to 15 digits,
 *	  so two different such decimals never give the same double: no shorter
 *	  string, and no other string of k digits, converts to ours;
 *	- otherwise strtod() gives the double (from at most 800 significant
 *	  digits, see JCS_STRTOD_DIGITS), and the shortest digits are searched
 *	  for with snprintf("%.*e") and strtod() (see shortest_digits).
 *
 * Nothing here allocates memory or keeps state between calls.  strtod()
 * and snprintf() are assumed to use "." (LC_NUMERIC=C, as in the backend);
 * the texts given to strtod() have no decimal point at all, and the point
 * in snprintf()'s output is skipped whatever it is.
 *
 * src/pure/jcs_number.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcs.h"

/* the exponent of a number's text stops growing here (far beyond range) */
#define JCS_EXPONENT_SATURATE	INT64_C(100000000000000)

/*
 * Significant digits given to strtod(), plus a sticky 1 when non-zero
 * digits follow them.  Every boundary where rounding changes (the exact
 * value of a double, 767 significant digits at most, or of the midpoint
 * of two neighbouring doubles, 768 at most) is a multiple of the unit of
 * the 768th digit, so it cannot lie strictly between the first 800 digits
 * and the next multiple of their last digit's unit, where both the text
 * and its shortened copy lie: the two round alike.
 */
#define JCS_STRTOD_DIGITS	800

/* digits of a shortest round trip: never more than 17 */
#define JCS_MAX_SHORTEST	17

/* the fast path's bound on the decimal exponent, inside the normal range */
#define JCS_FAST_EXPONENT	300

/* beyond these decimal exponents n (value 0.d1.. x 10^n) nothing fits */
#define JCS_MAX_EXPONENT	309		/* 0.1e310 = 1e309 > DBL_MAX */
#define JCS_MIN_EXPONENT	(-323)	/* 0.99..e-324 < half the least subnormal */

/* a number's text, scanned */
typedef struct jcs_decimal
{
	bool		negative;
	const char *intdigits;		/* the digits before the point */
	size_t		intlen;
	const char *fracdigits;		/* the digits after it (fraclen may be 0) */
	size_t		fraclen;
	size_t		first;			/* index of the first non-zero digit in
								 * intdigits followed by fracdigits */
	size_t		k;				/* digits from the first to the last non-zero
								 * one; 0 for a zero */
	int64_t		n;				/* value = 0.d1 d2 .. dk x 10^n */
} jcs_decimal;

static bool scan_number(const char *s, size_t len, jcs_decimal *dec);
static bool scan_mantissa(const char *s, size_t len, size_t *pos,
						  jcs_decimal *dec);
static bool scan_exponent(const char *s, size_t len, size_t *pos,
						  int64_t *exponent);
static inline char digit_at(const jcs_decimal *dec, size_t i);
static void find_significant(jcs_decimal *dec, int64_t e);
static void copy_digits(const jcs_decimal *dec, size_t from, size_t m, char *out);
static double digits_to_double(const char *digits, size_t p, int exponent);
static void increment_digits(char *digits, size_t p, int *n);
static void nearest_digits(double d, int p, char *digits, int *n);
static bool round_trip_digits(double d, bool wide_above, int p,
							  char *digits, int *n);
static double decimal_to_double(const jcs_decimal *dec, int dn, char *buf);
static bool fifteen_digits(const char *buf, double d, int dn, char *digits,
						   size_t *k, int *n);
static int	bisect_digits(double d, bool wide_above, int lo, int hi,
						  char *digits, int *n);
static jcs_status shortest_digits(const jcs_decimal *dec, char *digits,
								  size_t *k, int *n);
static size_t format_es(char *out, bool negative, const char *digits,
						size_t k, int n);

/*
 * Check s[0..len) against RFC 8259's number grammar
 *
 *		[ "-" ] ( "0" / 1-9 *DIGIT ) [ "." 1*DIGIT ] [ ("e" / "E") [ "+" / "-" ] 1*DIGIT ]
 *
 * and find its significant digits and decimal exponent.
 */
static bool
scan_number(const char *s, size_t len, jcs_decimal *dec)
{
	size_t		pos = 0;
	int64_t		e = 0;

	if (!scan_mantissa(s, len, &pos, dec))
		return false;
	if (pos < len && (s[pos] == 'e' || s[pos] == 'E'))
	{
		if (!scan_exponent(s, len, &pos, &e))
			return false;
	}
	if (pos != len)
		return false;
	find_significant(dec, e);
	return true;
}

/*
 * The sign, the integer digits and the fraction's, at s[*pos]: they fill
 * dec's negative, intdigits, intlen, fracdigits and fraclen (fraclen 0 and
 * fracdigits s when there is no fraction).  False if the text does not
 * start with a number.
 */
static bool
scan_mantissa(const char *s, size_t len, size_t *pos, jcs_decimal *dec)
{
	size_t		p = *pos;
	size_t		start;

	dec->negative = false;
	dec->fracdigits = s;
	dec->fraclen = 0;
	if (p < len && s[p] == '-')
	{
		dec->negative = true;
		p++;
	}
	if (p >= len || s[p] < '0' || s[p] > '9')
		return false;
	start = p;
	if (s[p] == '0')
		p++;
	else
	{
		while (p < len && s[p] >= '0' && s[p] <= '9')
			p++;
	}
	dec->intdigits = s + start;
	dec->intlen = p - start;

	if (p < len && s[p] == '.')
	{
		p++;
		start = p;
		while (p < len && s[p] >= '0' && s[p] <= '9')
			p++;
		if (p == start)
			return false;
		dec->fracdigits = s + start;
		dec->fraclen = p - start;
	}
	*pos = p;
	return true;
}

/*
 * The exponent after the "e" or "E" at s[*pos], as a signed value whose
 * magnitude saturates at JCS_EXPONENT_SATURATE (far beyond any double's
 * range, and far from overflowing 64 bits).  False if it has no digit.
 */
static bool
scan_exponent(const char *s, size_t len, size_t *pos, int64_t *exponent)
{
	size_t		p = *pos + 1;
	size_t		start;
	int64_t		e = 0;
	bool		eneg = false;

	if (p < len && (s[p] == '+' || s[p] == '-'))
	{
		eneg = s[p] == '-';
		p++;
	}
	start = p;
	while (p < len && s[p] >= '0' && s[p] <= '9')
	{
		if (e < JCS_EXPONENT_SATURATE)
			e = e * 10 + (s[p] - '0');
		p++;
	}
	if (p == start)
		return false;
	*pos = p;
	*exponent = eneg ? -e : e;
	return true;
}

/* the digit at index i of intdigits followed by fracdigits */
static inline char
digit_at(const jcs_decimal *dec, size_t i)
{
	return i < dec->intlen ? dec->intdigits[i] : dec->fracdigits[i - dec->intlen];
}

/*
 * dec's first, k and n, from its digits and the text's exponent e: the
 * first and the last non-zero digit of intdigits followed by fracdigits
 * (k = 0 and n = 0 for a zero).
 */
static void
find_significant(jcs_decimal *dec, int64_t e)
{
	size_t		total = dec->intlen + dec->fraclen;
	size_t		i;
	size_t		last;

	for (i = 0; i < total; i++)
	{
		if (digit_at(dec, i) != '0')
			break;
	}
	dec->first = i;
	if (i == total)
	{
		dec->k = 0;
		dec->n = 0;
		return;
	}
	last = total - 1;
	while (digit_at(dec, last) == '0')
		last--;
	dec->k = last - dec->first + 1;
	/* sizes of objects in memory are far below 2^62: no overflow */
	dec->n = (int64_t) dec->intlen - (int64_t) dec->first + e;
}

/* copy m digits from index from of intdigits followed by fracdigits */
static void
copy_digits(const jcs_decimal *dec, size_t from, size_t m, char *out)
{
	if (from < dec->intlen)
	{
		size_t		a = dec->intlen - from;

		if (a > m)
			a = m;
		memcpy(out, dec->intdigits + from, a);
		out += a;
		m -= a;
		from = dec->intlen;
	}
	memcpy(out, dec->fracdigits + (from - dec->intlen), m);
}

/*
 * strtod() of the integer digits[0..p) times 10^exponent (p at most
 * JCS_STRTOD_DIGITS + 1).  The text has no decimal point, so the locale
 * does not matter.
 */
static double
digits_to_double(const char *digits, size_t p, int exponent)
{
	char		buf[JCS_STRTOD_DIGITS + 16];
	char	   *q;
	unsigned int u;
	char		rev[12];
	int			nrev = 0;

	memcpy(buf, digits, p);
	q = buf + p;
	*q++ = 'e';
	if (exponent < 0)
	{
		*q++ = '-';
		u = 0U - (unsigned int) exponent;
	}
	else
		u = (unsigned int) exponent;
	do
	{
		rev[nrev++] = (char) ('0' + u % 10);
		u /= 10;
	} while (u != 0);
	while (nrev > 0)
		*q++ = rev[--nrev];
	*q = '\0';
	return strtod(buf, NULL);
}

/*
 * Add one unit in the last place to the p digits (value 0.digits x 10^n);
 * 99..9 becomes 100..0 with n one higher.
 */
static void
increment_digits(char *digits, size_t p, int *n)
{
	size_t		i = p;

	while (i > 0)
	{
		i--;
		if (digits[i] != '9')
		{
			digits[i]++;
			return;
		}
		digits[i] = '0';
	}
	digits[0] = '1';
	(*n)++;
}

/*
 * The p significant digits nearest to d > 0 (correctly rounded by
 * snprintf), as digits[0..p) and n with value 0.digits x 10^n.
 */
static void
nearest_digits(double d, int p, char *digits, int *n)
{
	char		buf[64];
	const char *s = buf;
	int			got = 0;
	int			e = 0;
	bool		eneg = false;

	snprintf(buf, sizeof(buf), "%.*e", p - 1, d);
	/* "d.ddde+XX": take the digits, skip the point whatever it is */
	while (*s != '\0' && *s != 'e' && *s != 'E')
	{
		if (*s >= '0' && *s <= '9' && got < p)
			digits[got++] = *s;
		s++;
	}
	while (got < p)
		digits[got++] = '0';
	if (*s != '\0')
		s++;
	if (*s == '-' || *s == '+')
		eneg = *s++ == '-';
	while (*s >= '0' && *s <= '9')
		e = e * 10 + (*s++ - '0');
	*n = (eneg ? -e : e) + 1;
}

/*
 * Whether some decimal of p significant digits converts back to d > 0; if
 * so, digits[0..p) and *n hold the one nearest to d.
 *
 * The decimals that convert to d form an interval around d, so it holds
 * one of p digits if and only if it holds the one just below d or the one
 * just above.  snprintf gives the nearer of those two.  When the interval
 * is symmetric, the nearer one is in it whenever the farther one is, and
 * one test suffices.  It is not symmetric when d is a power of two above
 * the least normal double: the doubles below are twice as dense as those
 * above, and the interval reaches twice as far up as down.  There the
 * nearest may lie below the interval while the next decimal up is in it
 * (2^172, 5.986310706507379e+51, is one such), so that one is tried too.
 *
 * Hence the answer is "does any p-digit decimal convert to d", which is
 * monotone in p (a p-digit decimal is also one of p+1 digits), and the
 * shortest p may be searched for by bisection.
 */
static bool
round_trip_digits(double d, bool wide_above, int p, char *digits, int *n)
{
	double		back;

	nearest_digits(d, p, digits, n);
	back = digits_to_double(digits, (size_t) p, *n - p);
	if (back == d)
		return true;
	if (wide_above && back < d)
	{
		increment_digits(digits, (size_t) p, n);
		return digits_to_double(digits, (size_t) p, *n - p) == d;
	}
	return false;
}

/*
 * The double nearest to dec (k > 0; dn is its exponent n): strtod() of the
 * first JCS_STRTOD_DIGITS significant digits, and a sticky 1 when more
 * follow (see JCS_STRTOD_DIGITS), which are left in buf (at least
 * JCS_STRTOD_DIGITS + 1 bytes).  Out of range, it is 0 or above DBL_MAX.
 */
static double
decimal_to_double(const jcs_decimal *dec, int dn, char *buf)
{
	size_t		m;

	m = dec->k < JCS_STRTOD_DIGITS ? dec->k : JCS_STRTOD_DIGITS;
	copy_digits(dec, dec->first, m, buf);
	if (dec->k > m)
		buf[m++] = '1';
	return digits_to_double(buf, m, dn - (int) m);
}

/*
 * Whether 15 digits suffice for d, the double nearest to the text of more
 * than 15 significant digits whose first ones are buf (exponent dn, within
 * the fast path's bound); if so, digits, *k and *n hold the shortest.
 *
 * Most long inputs are already shortest (16 or 17 digits, from another
 * shortest printer).  Whether 15 digits suffice is one strtod: the text
 * rounded to 15 digits converts to d if any decimal of at most 15 digits
 * does (in the normal range, such a decimal and the text are closer than a
 * quarter of the 15-digit spacing, so it is the text's rounding), and then
 * it is the shortest, by the DBL_DIG argument of the fast path.
 */
static bool
fifteen_digits(const char *buf, double d, int dn, char *digits,
			   size_t *k, int *n)
{
	int			n15 = dn;
	size_t		p;

	memcpy(digits, buf, 15);
	if (buf[15] >= '5')
		increment_digits(digits, 15, &n15);
	if (digits_to_double(digits, 15, n15 - 15) != d)
		return false;
	for (p = 15; p > 1 && digits[p - 1] == '0'; p--)
		;
	*k = p;
	*n = n15;
	return true;
}

/*
 * Bisect for the least p in [lo, hi] whose digits round-trip to d (hi
 * always does) and return it, with the digits in digits[0..p) and the
 * exponent in *n.
 */
static int
bisect_digits(double d, bool wide_above, int lo, int hi, char *digits, int *n)
{
	char		trial[JCS_MAX_SHORTEST];
	int			best = 0;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			tn;

		if (round_trip_digits(d, wide_above, mid, trial, &tn))
		{
			hi = mid;
			best = mid;
			memcpy(digits, trial, (size_t) mid);
			*n = tn;
		}
		else
			lo = mid + 1;
	}
	if (best != hi)
	{
		/* never tested: it holds the input's own digits or is 17 */
		if (!round_trip_digits(d, wide_above, hi, digits, n))
		{
			/* cannot happen; 17 digits always round-trip */
			hi = JCS_MAX_SHORTEST;
			nearest_digits(d, hi, digits, n);
		}
	}
	return hi;
}

/*
 * The slow path: the double nearest to dec (k > 0) and its shortest
 * round-trip digits; out-of-range values are refused here.  digits gets
 * at most JCS_MAX_SHORTEST digits, *k their count and *n the exponent
 * (value 0.digits x 10^n).
 */
static jcs_status
shortest_digits(const jcs_decimal *dec, char *digits, size_t *k, int *n)
{
	char		buf[JCS_STRTOD_DIGITS + 1];
	double		d;
	uint64_t	bits;
	bool		wide_above;
	int			lo;
	int			hi;
	int			dn = (int) dec->n;	/* within the range checked by the caller */

	d = decimal_to_double(dec, dn, buf);
	if (d > DBL_MAX || d == 0.0)
		return JCS_ERR_NUMBER_RANGE;

	/* a power of two above the least normal double (round_trip_digits) */
	memcpy(&bits, &d, sizeof(bits));
	wide_above = (bits & ((UINT64_C(1) << 52) - 1)) == 0 && (bits >> 52) > 1;

	lo = 1;
	hi = dec->k < JCS_MAX_SHORTEST ? (int) dec->k : JCS_MAX_SHORTEST;
	if (dec->k > 15 && dn >= -JCS_FAST_EXPONENT && dn <= JCS_FAST_EXPONENT)
	{
		if (fifteen_digits(buf, d, dn, digits, k, n))
			return JCS_OK;
		lo = 16;
	}
	hi = bisect_digits(d, wide_above, lo, hi, digits, n);

	/* a shortest string ends in a non-zero digit; strip to be sure */
	while (hi > 1 && digits[hi - 1] == '0')
		hi--;
	*k = (size_t) hi;
	return JCS_OK;
}

/*
 * ECMAScript's Number::toString layout of the value 0.digits x 10^n, the
 * k digits having no trailing zero.  Returns the length written.
 */
static size_t
format_es(char *out, bool negative, const char *digits, size_t k, int n)
{
	char	   *q = out;
	int			ik = (int) k;

	if (negative)
		*q++ = '-';
	if (ik <= n && n <= 21)
	{
		/* an integer: the digits and n - k zeros */
		memcpy(q, digits, k);
		q += k;
		memset(q, '0', (size_t) (n - ik));
		q += n - ik;
	}
	else if (0 < n && n <= 21)
	{
		/* the point inside the digits */
		memcpy(q, digits, (size_t) n);
		q += n;
		*q++ = '.';
		memcpy(q, digits + n, k - (size_t) n);
		q += k - (size_t) n;
	}
	else if (-6 < n && n <= 0)
	{
		/* 0.000ddd */
		*q++ = '0';
		*q++ = '.';
		memset(q, '0', (size_t) (-n));
		q += -n;
		memcpy(q, digits, k);
		q += k;
	}
	else
	{
		/* d.ddde+x or de-x */
		int			e = n - 1;
		unsigned int u;

		*q++ = digits[0];
		if (k > 1)
		{
			*q++ = '.';
			memcpy(q, digits + 1, k - 1);
			q += k - 1;
		}
		*q++ = 'e';
		*q++ = e < 0 ? '-' : '+';
		u = (unsigned int) (e < 0 ? -e : e);
		if (u >= 100)
			*q++ = (char) ('0' + u / 100);
		if (u >= 10)
			*q++ = (char) ('0' + u / 10 % 10);
		*q++ = (char) ('0' + u % 10);
	}
	*q = '\0';
	return (size_t) (q - out);
}

/*
 * jcs_number
 *		Write the JSON number text as ECMAScript's Number::toString writes
 *		the double nearest to it.
 *
 * Any zero, "-0" too, is "0".  A non-zero value that rounds to zero, or one
 * beyond the largest double, is JCS_ERR_NUMBER_RANGE.
 */
jcs_status
jcs_number(const char *text, size_t len, char out[JCS_NUMBER_MAXLEN + 1],
		   size_t *outlen)
{
	jcs_decimal dec;
	char		digits[JCS_MAX_SHORTEST];
	size_t		k;
	int			n;
	jcs_status	st;

	if (!scan_number(text, len, &dec))
		return JCS_ERR_NUMBER_SYNTAX;
	if (dec.k == 0)
	{
		out[0] = '0';
		out[1] = '\0';
		*outlen = 1;
		return JCS_OK;
	}
	if (dec.n > JCS_MAX_EXPONENT || dec.n < JCS_MIN_EXPONENT)
		return JCS_ERR_NUMBER_RANGE;

	if (dec.k <= 15 && dec.n >= -JCS_FAST_EXPONENT && dec.n <= JCS_FAST_EXPONENT)
	{
		/* the fast path: the significant digits are the shortest */
		k = dec.k;
		n = (int) dec.n;
		copy_digits(&dec, dec.first, k, digits);
	}
	else
	{
		st = shortest_digits(&dec, digits, &k, &n);
		if (st != JCS_OK)
			return st;
	}
	*outlen = format_es(out, dec.negative, digits, k, n);
	return JCS_OK;
}
