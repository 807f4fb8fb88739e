/*-------------------------------------------------------------------------
 *
 * test_name_rule.c
 *		Unit tests for the rule of okno's lower-case names.
 *
 * Every byte value in every position, the length bounds, and the three
 * punctuation sets okno uses (subscribers, event kinds, operations).
 *
 * test/unit/test_name_rule.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "name_rule.h"
#include "unit.h"

#define SUBSCRIBER	"_-"
#define KIND		"_-."
#define OPERATION	"_-./"

static bool
valid(const char *s, size_t maxlen, const char *punct)
{
	return okno_name_valid(s, strlen(s), maxlen, punct);
}

/* the rule, written out plainly, for one byte after the first */
static bool
allowed_later(int c, const char *punct)
{
	if (c >= 'a' && c <= 'z')
		return true;
	if (c >= '0' && c <= '9')
		return true;
	return c != 0 && strchr(punct, c) != NULL;
}

int
main(void)
{
	static const char *const puncts[] = {SUBSCRIBER, KIND, OPERATION};
	char		buf[300];
	int			c;
	size_t		p;

	/* examples */
	CHECK(valid("relay", 63, SUBSCRIBER));
	CHECK(valid("search-index_2", 63, SUBSCRIBER));
	CHECK(!valid("search.index", 63, SUBSCRIBER));
	CHECK(valid("booking_rescheduled", 40, KIND));
	CHECK(valid("payment.captured", 40, KIND));
	CHECK(!valid("payment/captured", 40, KIND));
	CHECK(valid("bookings/reschedule", 63, OPERATION));
	CHECK(valid("payment.capture", 63, OPERATION));
	CHECK(!valid("Reschedule", 63, OPERATION));
	CHECK(!valid("1pay", 63, OPERATION));
	CHECK(!valid("_pay", 63, OPERATION));
	CHECK(!valid("-pay", 63, OPERATION));
	CHECK(!valid("/pay", 63, OPERATION));
	CHECK(!valid("pay:now", 63, OPERATION));
	CHECK(!valid("pay now", 63, OPERATION));
	CHECK(!valid("", 63, OPERATION));

	/* an embedded NUL is never part of a name, whatever punct holds */
	CHECK(!okno_name_valid("ab\0c", 4, 63, OPERATION));
	CHECK(okno_name_valid("ab\0c", 2, 63, OPERATION));

	/* length bounds */
	for (p = 0; p < 3; p++)
	{
		memset(buf, 'a', sizeof(buf));
		CHECK(okno_name_valid(buf, 1, 1, puncts[p]));
		CHECK(!okno_name_valid(buf, 2, 1, puncts[p]));
		CHECK(okno_name_valid(buf, 63, 63, puncts[p]));
		CHECK(!okno_name_valid(buf, 64, 63, puncts[p]));
		CHECK(!okno_name_valid(buf, 0, 63, puncts[p]));
	}

	/* every byte value first, and after a letter, for each set */
	for (p = 0; p < 3; p++)
	{
		for (c = 0; c < 256; c++)
		{
			buf[0] = (char) c;
			buf[1] = 'a';
			CHECK_MSG(okno_name_valid(buf, 2, 63, puncts[p]) == (c >= 'a' && c <= 'z'),
					  "first byte 0x%02x, set \"%s\"", c, puncts[p]);
			buf[0] = 'a';
			buf[1] = (char) c;
			buf[2] = 'b';
			CHECK_MSG(okno_name_valid(buf, 3, 63, puncts[p]) == allowed_later(c, puncts[p]),
					  "second byte 0x%02x, set \"%s\"", c, puncts[p]);
		}
	}

	UNIT_DONE("test_name_rule");
}
