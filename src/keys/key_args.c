/*-------------------------------------------------------------------------
 *
 * key_args.c
 *	  The arguments that name a key: the operation, its scope and the key
 *	  itself, each read from its SQL argument and checked against its rule;
 *	  and whose key it is, in messages.
 *
 * An operation's name is 1 to 63 bytes of lower-case ASCII letters,
 * digits, "_", "-", "." and "/", starting with a letter ("reschedule",
 * "bookings/reschedule", "payment.capture"): it names an endpoint, reads
 * the same in SQL, a log line and a metric's label, and holds no ":", which
 * separates the parts of a key's identity (tombstone.c).  The rule is the
 * one of all okno's names (pure/name_rule.c), with this punctuation.  A
 * violation is invalid_parameter_value (22023), as a subscriber's name is.
 *
 * A scope is the tenant or actor the key belongs to: any text of at most
 * 255 bytes, the empty one included (an operation without tenants).  Keys
 * of different operations or scopes never meet.
 *
 * The key follows the course's rule, for bookings and operations alike: 1
 * to 80 bytes of A-Z, a-z, 0-9, "_", "." and "-"; otherwise invalid_key
 * (OKB01).
 *
 * A NULL operation, scope or key is null_value_not_allowed (22004), except
 * that a NULL key is invalid_key, as it is for bookings.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "base/base.h"
#include "pure/name_rule.h"
#include "keys/keys.h"

#define OKNO_OPERATION_MAXLEN	63
#define OKNO_SCOPE_MAXLEN		255
#define OKNO_KEY_MAXLEN			80

/*
 * The operation named by argument argno, checked: a palloc'd C string.
 */
const char *
okno_operation_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;

	okno_require_arg(fcinfo, argno, "operation", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Name the operation, such as \"reschedule\".");
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (!okno_name_valid(name, strlen(name), OKNO_OPERATION_MAXLEN, "_-./"))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid operation name \"%s\"", name),
				 errdetail("An operation name is 1 to %d characters: lower-case letters, digits, \"_\", \"-\", \".\" and \"/\", starting with a letter.",
						   OKNO_OPERATION_MAXLEN),
				 errhint("Name the operation, such as \"reschedule\" or \"bookings/reschedule\".")));
	return name;
}

/*
 * The scope named by argument argno, checked: a palloc'd C string.
 */
const char *
okno_scope_arg(FunctionCallInfo fcinfo, int argno)
{
	text	   *arg;
	int			len;

	okno_require_arg(fcinfo, argno, "scope", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Pass the tenant or actor the key belongs to, or an empty string for none.");
	arg = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(arg);
	if (len > OKNO_SCOPE_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("scope is too long"),
				 errdetail("The scope is %d bytes long; at most %d are allowed.",
						   len, OKNO_SCOPE_MAXLEN),
				 errhint("Pass the tenant or actor the key belongs to, such as its id.")));
	return text_to_cstring(arg);
}

/*
 * Raise invalid_key unless key is a non-null string matching the rule: 1
 * to 80 bytes, each one of A-Z, a-z, 0-9, "_", "." and "-" (any byte of a
 * multibyte character is outside the class).  Short, ASCII and without
 * separators, so that a key can be stored in the course's varchar(80) and
 * used in a lock tag and an identity without surprises.
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
		unsigned char c = p[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			okno_error_invalid_key(psprintf("The key has a character outside the allowed set at byte %d.",
											i + 1));
	}
}

/*
 * The key named by argument argno, checked: a palloc'd C string.
 */
const char *
okno_key_arg(FunctionCallInfo fcinfo, int argno)
{
	text	   *key = PG_ARGISNULL(argno) ? NULL : PG_GETARG_TEXT_PP(argno);

	okno_check_key(key);
	return text_to_cstring(key);
}

/*
 * Whose key ref names, as a noun phrase for messages: "actor 1", or
 * "operation "pay" in scope "t1"".
 */
char *
okno_key_owner(const OknoKeyRef *ref)
{
	if (ref->operation == NULL)
		return psprintf("actor %d", ref->actor);
	return psprintf("operation \"%s\" in scope \"%s\"", ref->operation, ref->scope);
}
