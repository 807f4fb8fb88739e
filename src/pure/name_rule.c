/*-------------------------------------------------------------------------
 *
 * name_rule.c
 *		The rule of okno's lower-case names.
 *
 * A subscriber (a-z 0-9 _ -), an event kind (also .) and an operation
 * (also . and /) follow one rule with its own punctuation and length: 1 to
 * maxlen bytes, a lower-case ASCII letter first, then letters, digits and
 * the characters of punct.  Nothing else, so that a name needs no quoting
 * in a log line, a metric label or a URL path, and no two spellings (case,
 * Unicode normalisation) name the same thing.
 *
 * src/pure/name_rule.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "name_rule.h"

/*
 * Whether the len bytes at name follow the rule, with the characters of
 * punct (a NUL-terminated string, never containing NUL itself) allowed
 * after the first.
 */
bool
okno_name_valid(const char *name, size_t len, size_t maxlen, const char *punct)
{
	size_t		i;

	if (len < 1 || len > maxlen)
		return false;
	if (name[0] < 'a' || name[0] > 'z')
		return false;
	for (i = 1; i < len; i++)
	{
		char		c = name[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			continue;
		if (c == '\0' || strchr(punct, c) == NULL)
			return false;
	}
	return true;
}
