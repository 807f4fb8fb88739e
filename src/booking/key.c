/*-------------------------------------------------------------------------
 *
 * key.c
 *	  The Idempotency-Key rule: ^[A-Za-z0-9_.-]{1,80}$.
 *
 * The rule is the course's: short, ASCII, no separators, so a key can be
 * stored in varchar(80) and used in a lock tag without surprises.  It is
 * checked byte by byte; any byte outside the class (including every byte of
 * a multibyte character) makes the key invalid.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"

#define OKNO_KEY_MAXLEN 80

static inline bool
key_byte_ok(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		(c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/*
 * Raise invalid_key unless key is a non-null string matching the rule.
 */
void
okno_check_key(text *key)
{
	const unsigned char *p;
	int			len;
	int			i;

	if (key == NULL)
		okno_error_invalid_key("The key must not be null.");

	p = (const unsigned char *) VARDATA_ANY(key);
	len = VARSIZE_ANY_EXHDR(key);

	if (len == 0)
		okno_error_invalid_key("The key is empty.");
	if (len > OKNO_KEY_MAXLEN)
		okno_error_invalid_key(psprintf("The key is %d bytes long; at most %d are allowed.",
										len, OKNO_KEY_MAXLEN));
	for (i = 0; i < len; i++)
	{
		if (!key_byte_ok(p[i]))
			okno_error_invalid_key(psprintf("The key has a character outside the allowed set at byte %d.",
											i + 1));
	}
}
