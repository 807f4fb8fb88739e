/*-------------------------------------------------------------------------
 *
 * fuzz_jcs.c
 *		libFuzzer target: JSON text -> jcs_write(), and raw bytes ->
 *		jcs_number().
 *
 * The input is a JSON text (at most FUZZ_JCS_MAX_INPUT bytes).  When the
 * test parser of test/unit/jcs_parse.c accepts it (strict RFC 8259, but
 * passing bad UTF-8 in strings through, nesting at most FUZZ_JCS_MAX_DEPTH),
 * jcs_write() must return:
 *
 *	- an error only when the tree has one, found independently here: a
 *	  number out of range (strtod gives infinity, or zero from non-zero
 *	  digits), a string or key that is not UTF-8 (decoding validator), two
 *	  equal keys in one object; and the error report must name a value or
 *	  key that has that problem;
 *	- JCS_OK when it has none, with an output that
 *	  (1) parses again (strictly),
 *	  (2) canonicalizes to exactly itself,
 *	  (3) has no whitespace outside strings, no raw byte below 0x20, and
 *		  only the escapes \" \\ \b \t \n \f \r and \u00xx (lowercase, for
 *		  the other controls), and is UTF-8,
 *	  (4) has the input's tree, members sorted by the UTF-16 reference
 *		  comparator: the same types, strings and keys byte for byte,
 *		  and every number the same finite double (strtod of both texts),
 *		  the first few also written exactly as the slow reference does.
 *
 * When the raw bytes start like a number ("-" or a digit), jcs_number()
 * sees them too, in a buffer of exactly JCS_NUMBER_MAXLEN + 1 bytes: its
 * status must agree with the grammar and strtod(), and its text with the
 * reference formatter.
 *
 * test/fuzz/fuzz_jcs.c
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

#include "fuzz.h"
#include "jcs.h"
#include "jcs_parse.h"

#define FUZZ_JCS_MAX_INPUT	4096
#define FUZZ_JCS_MAX_DEPTH	64

/* numbers per input checked against the (slow) reference formatter */
#define FUZZ_JCS_REF_NUMBERS 16

typedef struct fuzz_out
{
	char	   *data;
	size_t		len;
	size_t		cap;
} fuzz_out;

/* problems found in a tree independently of jcs.c */
typedef struct fuzz_problems
{
	bool		range;
	bool		utf8;
	bool		duplicate;
} fuzz_problems;

static void out_append(void *arg, const char *data, size_t len);
static char *copy_text(const char *s, size_t len);
static bool number_out_of_range(const char *text, size_t len);
static void find_problems(const jcs_value *v, fuzz_problems *pr);
static bool key_is_repeated(const jcs_value *v, const char *key, size_t keylen);
static bool error_matches(const jcs_value *root, const jcs_error *err);
static void check_form(const char *s, size_t len);
static void compare_trees(const jcs_value *in, const jcs_value *out, int *refs);
static void fuzz_number(const uint8_t *data, size_t size);

static void
out_append(void *arg, const char *data, size_t len)
{
	fuzz_out   *o = arg;

	if (o->len + len > o->cap)
	{
		size_t		cap = o->cap ? o->cap : 256;

		while (cap < o->len + len)
			cap *= 2;
		o->data = realloc(o->data, cap);
		if (o->data == NULL)
			abort();
		o->cap = cap;
	}
	memcpy(o->data + o->len, data, len);
	o->len += len;
}

/* a NUL-terminated heap copy */
static char *
copy_text(const char *s, size_t len)
{
	char	   *c = malloc(len + 1);

	if (c == NULL)
		abort();
	if (len > 0)
		memcpy(c, s, len);
	c[len] = '\0';
	return c;
}

/* strtod of the number text gives infinity, or zero from non-zero digits */
static bool
number_out_of_range(const char *text, size_t len)
{
	char	   *c = copy_text(text, len);
	double		d = strtod(c, NULL);
	bool		nonzero = false;
	size_t		i;

	for (i = 0; i < len && text[i] != 'e' && text[i] != 'E'; i++)
	{
		if (text[i] >= '1' && text[i] <= '9')
			nonzero = true;
	}
	free(c);
	return d > DBL_MAX || d < -DBL_MAX || (d == 0 && nonzero);
}

static void
find_problems(const jcs_value *v, fuzz_problems *pr)
{
	size_t		i;
	size_t		j;

	switch (v->type)
	{
		case JCS_NUMBER:
			if (number_out_of_range(v->text, v->len))
				pr->range = true;
			break;
		case JCS_STRING:
			if (!jcs_ref_utf8_valid(v->text, v->len))
				pr->utf8 = true;
			break;
		case JCS_ARRAY:
			for (i = 0; i < v->count; i++)
				find_problems(v->items[i], pr);
			break;
		case JCS_OBJECT:
			for (i = 0; i < v->count; i++)
			{
				const jcs_member *m = &v->members[i];

				if (!jcs_ref_utf8_valid(m->key, m->keylen))
					pr->utf8 = true;
				for (j = i + 1; j < v->count; j++)
				{
					if (m->keylen == v->members[j].keylen &&
						memcmp(m->key, v->members[j].key, m->keylen) == 0)
						pr->duplicate = true;
				}
				find_problems(m->value, pr);
			}
			break;
		default:
			break;
	}
}

/* whether some object in the tree has key (the very pointer) and its twin */
static bool
key_is_repeated(const jcs_value *v, const char *key, size_t keylen)
{
	size_t		i;
	size_t		j;

	if (v->type == JCS_ARRAY)
	{
		for (i = 0; i < v->count; i++)
			if (key_is_repeated(v->items[i], key, keylen))
				return true;
	}
	if (v->type != JCS_OBJECT)
		return false;
	for (i = 0; i < v->count; i++)
	{
		if (v->members[i].key == key && v->members[i].keylen == keylen)
		{
			for (j = 0; j < v->count; j++)
			{
				if (j != i && v->members[j].keylen == keylen &&
					memcmp(v->members[j].key, key, keylen) == 0)
					return true;
			}
		}
		if (key_is_repeated(v->members[i].value, key, keylen))
			return true;
	}
	return false;
}

/* the error report names something that has the reported problem */
static bool
error_matches(const jcs_value *root, const jcs_error *err)
{
	switch (err->status)
	{
		case JCS_ERR_NUMBER_RANGE:
			return err->value != NULL && err->value->type == JCS_NUMBER &&
				err->key == NULL &&
				number_out_of_range(err->value->text, err->value->len);
		case JCS_ERR_UTF8:
			if (err->value != NULL)
				return err->key == NULL && err->value->type == JCS_STRING &&
					!jcs_ref_utf8_valid(err->value->text, err->value->len);
			return err->key != NULL &&
				!jcs_ref_utf8_valid(err->key, err->keylen);
		case JCS_ERR_DUPLICATE_KEY:
			return err->key != NULL && key_is_repeated(root, err->key, err->keylen);
		default:
			return false;
	}
}

/* property (3): the bytes of a canonical text */
static void
check_form(const char *s, size_t len)
{
	size_t		i = 0;
	bool		in_string = false;

	if (!jcs_ref_utf8_valid(s, len))
		FUZZ_FAIL("output is not UTF-8: %.*s", (int) (len > 200 ? 200 : len), s);
	while (i < len)
	{
		unsigned char c = (unsigned char) s[i];

		if (c < 0x20)
			FUZZ_FAIL("raw byte 0x%02x at %zu of the output", c, i);
		if (!in_string)
		{
			if (c == '"')
				in_string = true;
			else if (strchr("{}[],:-+.0123456789eEnulltruefalse", c) == NULL)
				FUZZ_FAIL("byte '%c' outside strings at %zu of the output", c, i);
			i++;
			continue;
		}
		if (c == '"')
			in_string = false;
		else if (c == '\\')
		{
			char		e = i + 1 < len ? s[i + 1] : '\0';

			if (e == 'u')
			{
				unsigned	code;

				if (len - i < 6 || s[i + 2] != '0' || s[i + 3] != '0' ||
					(s[i + 4] != '0' && s[i + 4] != '1') ||
					!((s[i + 5] >= '0' && s[i + 5] <= '9') ||
					  (s[i + 5] >= 'a' && s[i + 5] <= 'f')))
					FUZZ_FAIL("bad \\u escape at %zu of the output", i);
				code = (unsigned) ((s[i + 4] - '0') * 16 +
								   (s[i + 5] <= '9' ? s[i + 5] - '0' : s[i + 5] - 'a' + 10));
				if (code == 8 || code == 9 || code == 10 || code == 12 || code == 13)
					FUZZ_FAIL("\\u%04x has a short escape (at %zu)", code, i);
				i += 6;
				continue;
			}
			if (e == '\0' || strchr("\"\\btnfr", e) == NULL)
				FUZZ_FAIL("escape \\%c at %zu of the output", e, i);
			i += 2;
			continue;
		}
		i++;
	}
	if (in_string)
		FUZZ_FAIL("output ends inside a string");
}

/* property (4): the same tree, sorted, with the same values */
static void
compare_trees(const jcs_value *in, const jcs_value *out, int *refs)
{
	size_t		i;

	if (in->type != out->type)
		FUZZ_FAIL("type %d became %d", (int) in->type, (int) out->type);
	switch (in->type)
	{
		case JCS_NUMBER:
			{
				char	   *a = copy_text(in->text, in->len);
				char	   *b = copy_text(out->text, out->len);
				double		da = strtod(a, NULL);
				double		db = strtod(b, NULL);

				if (da != db || db > DBL_MAX || db < -DBL_MAX)
					FUZZ_FAIL("number %s became %s", a, b);
				if (*refs < FUZZ_JCS_REF_NUMBERS)
				{
					char		want[40];

					(*refs)++;
					jcs_ref_number(da, 17, want);
					if (strcmp(want, b) != 0)
						FUZZ_FAIL("number %s written %s, the reference says %s",
								  a, b, want);
				}
				free(a);
				free(b);
				break;
			}
		case JCS_STRING:
			if (in->len != out->len ||
				(in->len > 0 && memcmp(in->text, out->text, in->len) != 0))
				FUZZ_FAIL("a string changed");
			break;
		case JCS_ARRAY:
			if (in->count != out->count)
				FUZZ_FAIL("array of %zu items became %zu", in->count, out->count);
			for (i = 0; i < in->count; i++)
				compare_trees(in->items[i], out->items[i], refs);
			break;
		case JCS_OBJECT:
			if (in->count != out->count)
				FUZZ_FAIL("object of %zu members became %zu", in->count, out->count);
			for (i = 0; i < in->count; i++)
			{
				const jcs_member *a = &in->members[i];
				const jcs_member *b = &out->members[i];

				if (a->keylen != b->keylen ||
					(a->keylen > 0 && memcmp(a->key, b->key, a->keylen) != 0))
					FUZZ_FAIL("key %zu of an object changed", i);
				if (i > 0 && jcs_ref_compare_keys(out->members[i - 1].key,
												  out->members[i - 1].keylen,
												  b->key, b->keylen) >= 0)
					FUZZ_FAIL("keys %zu and %zu out of UTF-16 order", i - 1, i);
				compare_trees(a->value, b->value, refs);
			}
			break;
		default:
			break;
	}
}

/* jcs_number on the raw bytes */
static void
fuzz_number(const uint8_t *data, size_t size)
{
	char	   *out = malloc(JCS_NUMBER_MAXLEN + 1);
	size_t		n = 0;
	jcs_status	st;
	jcs_value  *root;
	jcs_parse_arena *arena;
	bool		grammar;

	if (out == NULL)
		abort();
	st = jcs_number((const char *) data, size, out, &n);
	/* the test parser's grammar: a lone number, no whitespace around */
	grammar = jcs_parse((const char *) data, size, 1, 0, &root, &arena, NULL) == JCS_PARSE_OK;
	if (grammar)
	{
		grammar = root->type == JCS_NUMBER && root->len == size;
		jcs_parse_free(arena);
	}
	if (!grammar)
	{
		if (st != JCS_ERR_NUMBER_SYNTAX)
			FUZZ_FAIL("\"%.*s\": status %d for no number", (int) (size > 64 ? 64 : size),
					  (const char *) data, (int) st);
	}
	else if (number_out_of_range((const char *) data, size))
	{
		if (st != JCS_ERR_NUMBER_RANGE)
			FUZZ_FAIL("\"%.*s\": status %d, out of range", (int) (size > 64 ? 64 : size),
					  (const char *) data, (int) st);
	}
	else
	{
		char	   *c = copy_text((const char *) data, size);
		double		d = strtod(c, NULL);
		char		want[40];

		jcs_ref_number(d, 17, want);
		if (st != JCS_OK || n > JCS_NUMBER_MAXLEN || out[n] != '\0' ||
			strlen(out) != n || strcmp(out, want) != 0)
			FUZZ_FAIL("\"%.*s\": status %d, \"%s\", the reference says \"%s\"",
					  (int) (size > 64 ? 64 : size), c, (int) st,
					  st == JCS_OK ? out : "", want);
		free(c);
	}
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jcs_value  *root;
	jcs_parse_arena *arena;
	jcs_error	err;
	jcs_status	st;
	fuzz_problems pr = {false, false, false};
	fuzz_out	o = {NULL, 0, 0};
	int			shown = size > 64 ? 64 : (int) size;

	if (size > FUZZ_JCS_MAX_INPUT)
		return 0;
	if (size > 0 && (data[0] == '-' || (data[0] >= '0' && data[0] <= '9')))
		fuzz_number(data, size);

	if (jcs_parse((const char *) data, size, FUZZ_JCS_MAX_DEPTH,
				  JCS_PARSE_ALLOW_BAD_UTF8, &root, &arena, NULL) != JCS_PARSE_OK)
		return 0;

	find_problems(root, &pr);
	st = jcs_write(root, out_append, &o, &err);
	if (st != JCS_OK)
	{
		if (err.status != st)
			FUZZ_FAIL("\"%.*s\": status %d, report %d", shown,
					  (const char *) data, (int) st, (int) err.status);
		if (!((st == JCS_ERR_NUMBER_RANGE && pr.range) ||
			  (st == JCS_ERR_UTF8 && pr.utf8) ||
			  (st == JCS_ERR_DUPLICATE_KEY && pr.duplicate)))
			FUZZ_FAIL("\"%.*s\": status %d, but no such problem (%d %d %d)",
					  shown, (const char *) data, (int) st,
					  pr.range, pr.utf8, pr.duplicate);
		if (!error_matches(root, &err))
			FUZZ_FAIL("\"%.*s\": status %d reports the wrong value or key",
					  shown, (const char *) data, (int) st);
	}
	else
	{
		jcs_value  *again;
		jcs_parse_arena *arena2;
		fuzz_out	o2 = {NULL, 0, 0};
		int			refs = 0;

		if (pr.range || pr.utf8 || pr.duplicate)
			FUZZ_FAIL("\"%.*s\": success despite a problem (%d %d %d)",
					  shown, (const char *) data, pr.range, pr.utf8, pr.duplicate);
		if (err.status != JCS_OK)
			FUZZ_FAIL("success with a report of status %d", (int) err.status);
		check_form(o.data, o.len);
		if (jcs_parse(o.data, o.len, FUZZ_JCS_MAX_DEPTH, 0, &again, &arena2,
					  NULL) != JCS_PARSE_OK)
			FUZZ_FAIL("output does not parse: %.*s", (int) (o.len > 200 ? 200 : o.len),
					  o.data);
		compare_trees(root, again, &refs);
		if (jcs_write(again, out_append, &o2, NULL) != JCS_OK ||
			o2.len != o.len || memcmp(o2.data, o.data, o.len) != 0)
			FUZZ_FAIL("not idempotent: %.*s", (int) (o.len > 200 ? 200 : o.len),
					  o.data);
		free(o2.data);
		jcs_parse_free(arena2);
	}
	free(o.data);
	jcs_parse_free(arena);
	return 0;
}
