/*-------------------------------------------------------------------------
 *
 * test_booking_form.c
 *		Unit tests for a booking request's form: okno's (fingerprint
 *		version 1) and the course's (version 0).
 *
 * The expected texts were produced independently with Python:
 * json.dumps(obj, sort_keys=True, separators=(",", ":")) with the instants
 * formatted from datetime (okno's form), or by pydantic (the course's,
 * test_course).
 *
 * test/unit/test_booking_form.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "booking_form.h"
#include "unit.h"

typedef struct form_case
{
	int32_t		resource_id;
	int64_t		starts;
	int64_t		ends;
	const char *text;
} form_case;

static const form_case cases[] = {
	{1, INT64_C(1796108400000000), INT64_C(1796112000000000),
	"{\"ends_at\":\"2026-12-01T08:00:00Z\",\"resource_id\":1,\"starts_at\":\"2026-12-01T07:00:00Z\"}"},
	{0, INT64_C(0), INT64_C(1),
	"{\"ends_at\":\"1970-01-01T00:00:00.000001Z\",\"resource_id\":0,\"starts_at\":\"1970-01-01T00:00:00Z\"}"},
	{-1, INT64_C(-1), INT64_C(0),
	"{\"ends_at\":\"1970-01-01T00:00:00Z\",\"resource_id\":-1,\"starts_at\":\"1969-12-31T23:59:59.999999Z\"}"},
	{2147483647, INT64_C(946684800000000), INT64_C(951782400500000),
	"{\"ends_at\":\"2000-02-29T00:00:00.500000Z\",\"resource_id\":2147483647,\"starts_at\":\"2000-01-01T00:00:00Z\"}"},
	{INT32_MIN, INT64_C(253402300799999999), INT64_C(253402300799999999),
	"{\"ends_at\":\"9999-12-31T23:59:59.999999Z\",\"resource_id\":-2147483648,\"starts_at\":\"9999-12-31T23:59:59.999999Z\"}"},
	{INT32_MIN, INT64_C(-62135596800000000), INT64_C(-62135596799999999),
	"{\"ends_at\":\"0001-01-01T00:00:00.000001Z\",\"resource_id\":-2147483648,\"starts_at\":\"0001-01-01T00:00:00Z\"}"},
	{42, INT64_C(-2208988800000000), INT64_C(-2208985199999999),
	"{\"ends_at\":\"1900-01-01T01:00:00.000001Z\",\"resource_id\":42,\"starts_at\":\"1900-01-01T00:00:00Z\"}"},
	{123456789, INT64_C(1796108400123456), INT64_C(1796108400654321),
	"{\"ends_at\":\"2026-12-01T07:00:00.654321Z\",\"resource_id\":123456789,\"starts_at\":\"2026-12-01T07:00:00.123456Z\"}"},
	{-7, INT64_C(-1000000), INT64_C(-500000),
	"{\"ends_at\":\"1969-12-31T23:59:59.500000Z\",\"resource_id\":-7,\"starts_at\":\"1969-12-31T23:59:59Z\"}"},
	{10, INT64_C(9), INT64_C(10),
	"{\"ends_at\":\"1970-01-01T00:00:00.000010Z\",\"resource_id\":10,\"starts_at\":\"1970-01-01T00:00:00.000009Z\"}"},
};

#define GUARD_BYTES 16
#define GUARD		'#'

static void
test_maxlen(void)
{
	/* 44 fixed characters + 2 * 27 + strlen("-2147483648") */
	CHECK(OKNO_BOOKING_FORM_MAXLEN == 109);
	CHECK(strlen(cases[4].text) == OKNO_BOOKING_FORM_MAXLEN);
}

static void
test_cases(void)
{
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const form_case *c = &cases[i];
		char		buf[OKNO_BOOKING_FORM_MAXLEN + 1 + GUARD_BYTES];
		size_t		len;
		size_t		k;
		bool		guard_ok = true;

		memset(buf, GUARD, sizeof(buf));
		len = okno_booking_form_write(buf, c->resource_id, c->starts, c->ends);
		CHECK_MSG(strcmp(buf, c->text) == 0, "case %u: got %s", (unsigned) i, buf);
		CHECK_MSG(len == strlen(c->text), "case %u: length %u", (unsigned) i,
				  (unsigned) len);
		CHECK_MSG(len <= OKNO_BOOKING_FORM_MAXLEN, "case %u: too long", (unsigned) i);
		for (k = len + 1; k < sizeof(buf); k++)
			guard_ok = guard_ok && buf[k] == GUARD;
		CHECK_MSG(guard_ok, "case %u: wrote past the NUL", (unsigned) i);
	}
}

/* the resource id is written like printf's %d for a spread of values */
static void
test_resource_ids(void)
{
	static const int32_t ids[] = {
		0, 1, -1, 9, 10, -9, -10, 99, 100, 999999999, 1000000000, -1000000000,
		2147483647, -2147483647, INT32_MIN, 65536, -65536, 42,
	};
	size_t		i;
	int			failures = 0;
	int64_t		v;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
	{
		char		buf[OKNO_BOOKING_FORM_MAXLEN + 1];
		char		expected[OKNO_BOOKING_FORM_MAXLEN + 1];
		size_t		len;

		len = okno_booking_form_write(buf, ids[i], 0, 0);
		snprintf(expected, sizeof(expected),
				 "{\"ends_at\":\"1970-01-01T00:00:00Z\",\"resource_id\":%d,"
				 "\"starts_at\":\"1970-01-01T00:00:00Z\"}", (int) ids[i]);
		CHECK_MSG(strcmp(buf, expected) == 0 && len == strlen(expected),
				  "id %d: got %s", (int) ids[i], buf);
	}

	/* every power-of-ten neighbourhood, positive and negative */
	for (v = 1; v <= INT64_C(1000000000); v *= 10)
	{
		int64_t		d;

		for (d = -1; d <= 1; d++)
		{
			int64_t		w;
			int			sign;

			for (sign = -1; sign <= 1; sign += 2)
			{
				char		buf[OKNO_BOOKING_FORM_MAXLEN + 1];
				char		expected[OKNO_BOOKING_FORM_MAXLEN + 1];

				w = sign * (v + d);
				if (w < INT32_MIN || w > INT32_MAX)
					continue;
				okno_booking_form_write(buf, (int32_t) w, 0, 0);
				snprintf(expected, sizeof(expected),
						 "{\"ends_at\":\"1970-01-01T00:00:00Z\",\"resource_id\":%lld,"
						 "\"starts_at\":\"1970-01-01T00:00:00Z\"}", (long long) w);
				if (strcmp(buf, expected) != 0)
					failures++;
			}
		}
	}
	CHECK_MSG(failures == 0, "%d resource ids written wrongly", failures);
}

/* equal inputs give byte-identical output; any change in input changes it */
static void
test_deterministic(void)
{
	char		a[OKNO_BOOKING_FORM_MAXLEN + 1];
	char		b[OKNO_BOOKING_FORM_MAXLEN + 1];

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	okno_booking_form_write(a, 5, INT64_C(1796108400000000), INT64_C(1796112000000000));
	okno_booking_form_write(b, 5, INT64_C(1796108400000000), INT64_C(1796112000000000));
	CHECK(strcmp(a, b) == 0);

	okno_booking_form_write(b, 6, INT64_C(1796108400000000), INT64_C(1796112000000000));
	CHECK(strcmp(a, b) != 0);
	okno_booking_form_write(b, 5, INT64_C(1796108400000001), INT64_C(1796112000000000));
	CHECK(strcmp(a, b) != 0);
	okno_booking_form_write(b, 5, INT64_C(1796108400000000), INT64_C(1796112000000001));
	CHECK(strcmp(a, b) != 0);
	/* starts and ends are not interchangeable */
	okno_booking_form_write(b, 5, INT64_C(1796112000000000), INT64_C(1796108400000000));
	CHECK(strcmp(a, b) != 0);
}

/*
 * The course's form (fingerprint version 0).  Expected texts from pydantic
 * 2.10 (Debian 13): json.dumps(BookingIn(...).model_dump(mode="json"),
 * sort_keys=True, separators=(",", ":")).
 */
static void
test_course(void)
{
	char		buf[OKNO_BOOKING_FORM_COURSE_MAXLEN + 1];
	size_t		n;

	n = okno_booking_form_write_course(buf, 1, INT64_C(1796108400000000), 180,
									   INT64_C(1796112000000000), 180);
	CHECK(strcmp(buf, "{\"ends_at\":\"2026-12-01T11:00:00+03:00\",\"resource_id\":1,\"starts_at\":\"2026-12-01T10:00:00+03:00\"}") == 0);
	CHECK(n == strlen(buf));
	n = okno_booking_form_write_course(buf, 7, INT64_C(1796108400500000), 0,
									   INT64_C(1796108400123456), 330);
	CHECK(strcmp(buf, "{\"ends_at\":\"2026-12-01T12:30:00.123456+05:30\",\"resource_id\":7,\"starts_at\":\"2026-12-01T07:00:00.500000Z\"}") == 0);
	/* with zero offsets the course's form is okno's */
	{
		char		ours[OKNO_BOOKING_FORM_MAXLEN + 1];

		(void) okno_booking_form_write(ours, 3, INT64_C(1796108400000000), INT64_C(1796108400000001));
		(void) okno_booking_form_write_course(buf, 3, INT64_C(1796108400000000), 0,
											  INT64_C(1796108400000001), 0);
		CHECK(strcmp(buf, ours) == 0);
	}
	/* the longest text fits the bound */
	n = okno_booking_form_write_course(buf, INT32_MIN, INT64_C(1796108400123456), -1439,
									   INT64_C(1796108400123456), 1439);
	CHECK(n == OKNO_BOOKING_FORM_COURSE_MAXLEN);
}

int
main(void)
{
	test_maxlen();
	test_cases();
	test_resource_ids();
	test_deterministic();
	test_course();

	UNIT_DONE("test_booking_form");
}
