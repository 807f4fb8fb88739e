/*-------------------------------------------------------------------------
 *
 * subscriber.c
 *	  Subscriber names: the rule they follow and the ones that exist.
 *
 * A subscriber is a recipient of the outbox's events with its own delivery
 * state.  Its name is 1 to 63 bytes of lower-case ASCII letters, digits,
 * "_" and "-", starting with a letter, so that it reads the same in SQL, in
 * a relay's command line and in a metric's label.  The default subscriber,
 * named "default", is the outbox's own delivery state (outbox.delivered_at,
 * attempts, available_at, parked_at): every function without a subscriber
 * argument serves it.
 *
 * An invalid name is invalid_parameter_value (22023); a valid name that
 * is not a subscriber is subscriber_missing (OKB09).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "okno.h"
#include "errors.h"

#define OKNO_SUBSCRIBER_MAXLEN 63

/*
 * Whether name follows the rule above.
 */
static bool
subscriber_name_valid(const char *name, int len)
{
	int			i;

	if (len < 1 || len > OKNO_SUBSCRIBER_MAXLEN)
		return false;
	if (name[0] < 'a' || name[0] > 'z')
		return false;
	for (i = 1; i < len; i++)
	{
		char		c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			  c == '_' || c == '-'))
			return false;
	}
	return true;
}

/*
 * The subscriber named by a function's argument, checked: a palloc'd C
 * string.  fname names the function in the hint.
 */
char *
okno_subscriber_arg(text *arg, const char *fname)
{
	char	   *name = text_to_cstring(arg);
	int			len = strlen(name);

	if (!subscriber_name_valid(name, len))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid subscriber name \"%s\"", name),
				 errdetail("A subscriber name is 1 to %d characters: lower-case letters, digits, \"_\" and \"-\", starting with a letter.",
						   OKNO_SUBSCRIBER_MAXLEN),
				 errhint("Call %s with the name the subscriber was given, or \"%s\" for the default subscriber.",
						 fname, OKNO_DEFAULT_SUBSCRIBER)));
	if (strcmp(name, OKNO_DEFAULT_SUBSCRIBER) != 0)
		okno_error_subscriber_missing(name);
	return name;
}
