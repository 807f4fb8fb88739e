/*-------------------------------------------------------------------------
 *
 * jcs_parse.c
 *		Test code only: a strict JSON text parser that builds the jcs_value
 *		tree of src/pure/jcs.h, and a slow reference for jcs_number().
 *
 * The parser follows RFC 8259 and nothing more: whitespace is space, tab,
 * line feed and carriage return; numbers have no leading zeros, no lone
 * point, no "+" in front; strings have no raw control characters and only
 * the escapes \" \\ \/ \b \f \n \r \t \uXXXX, where a high surrogate must
 * be followed by an escaped low one; no trailing commas, no comments, one
 * value per text.  Duplicate keys are kept, so that jcs_write() can report
 * them.  Every node, string and member list lives in an arena freed at
 * once.
 *
 * The reference number formatter is written for plainness: at a precision
 * p it tries the correctly rounded p-digit decimal of the double and its
 * two neighbours on the p-digit grid, nearest first, and takes one that
 * strtod() turns back into the double; it walks p one by one to the least
 * that has one.  It shares no code, and no shortcut, with jcs.c.
 *
 * test/unit/jcs_parse.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcs.h"
#include "jcs_parse.h"

#define ARENA_CHUNK 65536

typedef struct arena_chunk
{
	struct arena_chunk *next;
	size_t		size;
	size_t		used;
	/* the memory follows, aligned like max_align_t */
} arena_chunk;

struct jcs_parse_arena
{
	arena_chunk *chunks;
};

typedef struct parser
{
	const unsigned char *s;
	size_t		len;
	size_t		pos;
	int			max_depth;
	unsigned	flags;
	jcs_parse_arena *arena;
	jcs_parse_status status;
} parser;

static void *arena_alloc(jcs_parse_arena *a, size_t size);
static bool fail(parser *p, jcs_parse_status st);
static void skip_ws(parser *p);
static bool parse_literal(parser *p, const char *word, jcs_type type,
						  jcs_value *v);
static bool parse_number(parser *p, jcs_value *v);
static int	hex4(const unsigned char *s);
static bool parse_string(parser *p, const char **out, size_t *outlen);
static bool parse_value(parser *p, jcs_value *v, int depth);
static bool parse_array(parser *p, jcs_value *v, int depth);
static bool parse_object(parser *p, jcs_value *v, int depth);
static long next_utf16_unit(const unsigned char *s, size_t len, size_t *i,
							long *low);
static size_t ref_format(char *out, bool negative, const char *digits,
						 int k, int e);
static bool ref_candidate(double d, const char *digits, int p, int e);
static bool ref_round_trips(double d, int p, char *cand, int *ce);

/* size bytes from the arena, aligned for any type; NULL when out of memory */
static void *
arena_alloc(jcs_parse_arena *a, size_t size)
{
	const size_t align = 16;
	size_t		head = (sizeof(arena_chunk) + align - 1) / align * align;
	arena_chunk *c = a->chunks;

	size = (size + align - 1) / align * align;
	if (c == NULL || c->size - c->used < size)
	{
		size_t		want = size > ARENA_CHUNK ? size : ARENA_CHUNK;

		c = malloc(head + want);
		if (c == NULL)
			return NULL;
		c->next = a->chunks;
		c->size = want;
		c->used = 0;
		a->chunks = c;
	}
	c->used += size;
	return (char *) c + head + c->used - size;
}

void
jcs_parse_free(jcs_parse_arena *arena)
{
	arena_chunk *c;

	if (arena == NULL)
		return;
	c = arena->chunks;
	while (c != NULL)
	{
		arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	free(arena);
}

static bool
fail(parser *p, jcs_parse_status st)
{
	if (p->status == JCS_PARSE_OK)
		p->status = st;
	return false;
}

static void
skip_ws(parser *p)
{
	while (p->pos < p->len)
	{
		unsigned char c = p->s[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return;
		p->pos++;
	}
}

static bool
parse_literal(parser *p, const char *word, jcs_type type, jcs_value *v)
{
	size_t		n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
		return fail(p, JCS_PARSE_SYNTAX);
	p->pos += n;
	v->type = type;
	return true;
}

/* the number's extent, checked against the grammar; its text is kept */
static bool
parse_number(parser *p, jcs_value *v)
{
	size_t		start = p->pos;
	size_t		digits;

#define AT_DIGIT() (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
	if (p->pos < p->len && p->s[p->pos] == '-')
		p->pos++;
	if (!AT_DIGIT())
		return fail(p, JCS_PARSE_SYNTAX);
	if (p->s[p->pos] == '0')
	{
		p->pos++;
		if (AT_DIGIT())
			return fail(p, JCS_PARSE_SYNTAX);	/* a leading zero */
	}
	else
	{
		while (AT_DIGIT())
			p->pos++;
	}
	if (p->pos < p->len && p->s[p->pos] == '.')
	{
		p->pos++;
		for (digits = 0; AT_DIGIT(); digits++)
			p->pos++;
		if (digits == 0)
			return fail(p, JCS_PARSE_SYNTAX);
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
	{
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		for (digits = 0; AT_DIGIT(); digits++)
			p->pos++;
		if (digits == 0)
			return fail(p, JCS_PARSE_SYNTAX);
	}
#undef AT_DIGIT
	v->type = JCS_NUMBER;
	v->text = (const char *) p->s + start;
	v->len = p->pos - start;
	return true;
}

/* the value of four hex digits, or -1 */
static int
hex4(const unsigned char *s)
{
	int			v = 0;
	int			i;

	for (i = 0; i < 4; i++)
	{
		int			c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* a string at p->pos (its opening quote), unescaped into the arena */
static bool
parse_string(parser *p, const char **out, size_t *outlen)
{
	size_t		start;
	size_t		end;
	char	   *buf;
	size_t		n = 0;

	p->pos++;
	start = p->pos;
	/* find the closing quote first: the text is at most that long */
	for (end = start; end < p->len && p->s[end] != '"'; end++)
	{
		if (p->s[end] == '\\')
			end++;
	}
	if (end >= p->len)
	{
		p->pos = p->len;
		return fail(p, JCS_PARSE_SYNTAX);
	}
	buf = arena_alloc(p->arena, end - start + 1);
	if (buf == NULL)
		return fail(p, JCS_PARSE_NOMEM);

	while (p->pos < end)
	{
		unsigned char c = p->s[p->pos];
		long		cp;

		if (c < 0x20)
			return fail(p, JCS_PARSE_SYNTAX);
		if (c != '\\')
		{
			buf[n++] = (char) c;
			p->pos++;
			continue;
		}
		p->pos++;
		c = p->s[p->pos++];
		switch (c)
		{
			case '"':
			case '\\':
			case '/':
				buf[n++] = (char) c;
				continue;
			case 'b':
				buf[n++] = '\b';
				continue;
			case 'f':
				buf[n++] = '\f';
				continue;
			case 'n':
				buf[n++] = '\n';
				continue;
			case 'r':
				buf[n++] = '\r';
				continue;
			case 't':
				buf[n++] = '\t';
				continue;
			case 'u':
				break;
			default:
				p->pos--;
				return fail(p, JCS_PARSE_SYNTAX);
		}
		if (end - p->pos < 4 || (cp = hex4(p->s + p->pos)) < 0)
			return fail(p, JCS_PARSE_SYNTAX);
		p->pos += 4;
		if (cp >= 0xDC00 && cp <= 0xDFFF)
			return fail(p, JCS_PARSE_SURROGATE);
		if (cp >= 0xD800 && cp <= 0xDBFF)
		{
			long		lo;

			if (end - p->pos < 6 || p->s[p->pos] != '\\' ||
				p->s[p->pos + 1] != 'u')
				return fail(p, JCS_PARSE_SURROGATE);
			lo = hex4(p->s + p->pos + 2);
			if (lo < 0)
				return fail(p, JCS_PARSE_SYNTAX);
			if (lo < 0xDC00 || lo > 0xDFFF)
				return fail(p, JCS_PARSE_SURROGATE);
			p->pos += 6;
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		}
		/* encode as UTF-8; never longer than the escape it replaces */
		n += jcs_ref_utf8_encode((unsigned long) cp, buf + n);
	}
	p->pos = end + 1;
	if (!(p->flags & JCS_PARSE_ALLOW_BAD_UTF8) && !jcs_ref_utf8_valid(buf, n))
	{
		p->pos = start;
		return fail(p, JCS_PARSE_UTF8);
	}
	*out = buf;
	*outlen = n;
	return true;
}

static bool
parse_value(parser *p, jcs_value *v, int depth)
{
	memset(v, 0, sizeof(*v));
	skip_ws(p);
	if (p->pos >= p->len)
		return fail(p, JCS_PARSE_SYNTAX);
	switch (p->s[p->pos])
	{
		case '{':
			return parse_object(p, v, depth + 1);
		case '[':
			return parse_array(p, v, depth + 1);
		case '"':
			v->type = JCS_STRING;
			return parse_string(p, &v->text, &v->len);
		case 'n':
			return parse_literal(p, "null", JCS_NULL, v);
		case 't':
			return parse_literal(p, "true", JCS_TRUE, v);
		case 'f':
			return parse_literal(p, "false", JCS_FALSE, v);
		default:
			return parse_number(p, v);
	}
}

static bool
parse_array(parser *p, jcs_value *v, int depth)
{
	jcs_value **items = NULL;
	size_t		count = 0;
	size_t		cap = 0;
	bool		ok = false;

	if (depth > p->max_depth)
		return fail(p, JCS_PARSE_DEPTH);
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == ']')
	{
		p->pos++;
		ok = true;
	}
	else
	{
		for (;;)
		{
			jcs_value  *item = arena_alloc(p->arena, sizeof(jcs_value));

			if (item == NULL)
			{
				fail(p, JCS_PARSE_NOMEM);
				break;
			}
			if (count == cap)
			{
				jcs_value **bigger;

				cap = cap == 0 ? 8 : cap * 2;
				bigger = realloc(items, cap * sizeof(*items));
				if (bigger == NULL)
				{
					fail(p, JCS_PARSE_NOMEM);
					break;
				}
				items = bigger;
			}
			if (!parse_value(p, item, depth))
				break;
			items[count++] = item;
			skip_ws(p);
			if (p->pos < p->len && p->s[p->pos] == ',')
			{
				p->pos++;
				continue;
			}
			if (p->pos < p->len && p->s[p->pos] == ']')
			{
				p->pos++;
				ok = true;
			}
			else
				fail(p, JCS_PARSE_SYNTAX);
			break;
		}
	}
	if (ok)
	{
		v->type = JCS_ARRAY;
		v->count = count;
		v->items = arena_alloc(p->arena, (count ? count : 1) * sizeof(*items));
		if (v->items == NULL)
			ok = fail(p, JCS_PARSE_NOMEM);
		else if (count > 0)
			memcpy(v->items, items, count * sizeof(*items));
	}
	free(items);
	return ok;
}

static bool
parse_object(parser *p, jcs_value *v, int depth)
{
	jcs_member *members = NULL;
	size_t		count = 0;
	size_t		cap = 0;
	bool		ok = false;

	if (depth > p->max_depth)
		return fail(p, JCS_PARSE_DEPTH);
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}')
	{
		p->pos++;
		ok = true;
	}
	else
	{
		for (;;)
		{
			jcs_member	m;

			if (count == cap)
			{
				jcs_member *bigger;

				cap = cap == 0 ? 8 : cap * 2;
				bigger = realloc(members, cap * sizeof(*members));
				if (bigger == NULL)
				{
					fail(p, JCS_PARSE_NOMEM);
					break;
				}
				members = bigger;
			}
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != '"')
			{
				fail(p, JCS_PARSE_SYNTAX);
				break;
			}
			if (!parse_string(p, &m.key, &m.keylen))
				break;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
			{
				fail(p, JCS_PARSE_SYNTAX);
				break;
			}
			p->pos++;
			m.value = arena_alloc(p->arena, sizeof(jcs_value));
			if (m.value == NULL)
			{
				fail(p, JCS_PARSE_NOMEM);
				break;
			}
			if (!parse_value(p, m.value, depth))
				break;
			members[count++] = m;
			skip_ws(p);
			if (p->pos < p->len && p->s[p->pos] == ',')
			{
				p->pos++;
				continue;
			}
			if (p->pos < p->len && p->s[p->pos] == '}')
			{
				p->pos++;
				ok = true;
			}
			else
				fail(p, JCS_PARSE_SYNTAX);
			break;
		}
	}
	if (ok)
	{
		v->type = JCS_OBJECT;
		v->count = count;
		v->members = arena_alloc(p->arena, (count ? count : 1) * sizeof(*members));
		if (v->members == NULL)
			ok = fail(p, JCS_PARSE_NOMEM);
		else if (count > 0)
			memcpy(v->members, members, count * sizeof(*members));
	}
	free(members);
	return ok;
}

jcs_parse_status
jcs_parse(const char *text, size_t len, int max_depth, unsigned flags,
		  jcs_value **root, jcs_parse_arena **arena, size_t *errpos)
{
	parser		p;
	jcs_value  *v;

	*root = NULL;
	*arena = NULL;
	p.s = (const unsigned char *) text;
	p.len = len;
	p.pos = 0;
	p.max_depth = max_depth;
	p.flags = flags;
	p.status = JCS_PARSE_OK;
	p.arena = calloc(1, sizeof(jcs_parse_arena));
	if (p.arena == NULL)
		return JCS_PARSE_NOMEM;

	v = arena_alloc(p.arena, sizeof(jcs_value));
	if (v == NULL)
		fail(&p, JCS_PARSE_NOMEM);
	else if (parse_value(&p, v, 0))
	{
		skip_ws(&p);
		if (p.pos != p.len)
			fail(&p, JCS_PARSE_SYNTAX);
	}
	if (p.status != JCS_PARSE_OK)
	{
		if (errpos != NULL)
			*errpos = p.pos;
		jcs_parse_free(p.arena);
		return p.status;
	}
	*root = v;
	*arena = p.arena;
	return JCS_PARSE_OK;
}

/*
 * jcs_ref_utf8_encode
 *		Write code point cp (at most U+10FFFF, not a surrogate) as UTF-8
 *		into buf; return the bytes written (1 to 4).
 */
size_t
jcs_ref_utf8_encode(unsigned long cp, char *buf)
{
	size_t		n = 0;

	if (cp < 0x80)
		buf[n++] = (char) cp;
	else if (cp < 0x800)
	{
		buf[n++] = (char) (0xC0 | (cp >> 6));
		buf[n++] = (char) (0x80 | (cp & 0x3F));
	}
	else if (cp < 0x10000)
	{
		buf[n++] = (char) (0xE0 | (cp >> 12));
		buf[n++] = (char) (0x80 | ((cp >> 6) & 0x3F));
		buf[n++] = (char) (0x80 | (cp & 0x3F));
	}
	else
	{
		buf[n++] = (char) (0xF0 | (cp >> 18));
		buf[n++] = (char) (0x80 | ((cp >> 12) & 0x3F));
		buf[n++] = (char) (0x80 | ((cp >> 6) & 0x3F));
		buf[n++] = (char) (0x80 | (cp & 0x3F));
	}
	return n;
}

/*
 * jcs_ref_utf8_valid
 *		Decode each character and check its code point: the shortest form
 *		for its value, not a surrogate, not above U+10FFFF.
 */
bool
jcs_ref_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *) str;
	size_t		i = 0;

	while (i < len)
	{
		unsigned char c = s[i];
		int			extra;
		unsigned long cp;
		unsigned long min;
		int			j;

		if (c < 0x80)
		{
			i++;
			continue;
		}
		if ((c & 0xE0) == 0xC0)
		{
			extra = 1;
			cp = c & 0x1F;
			min = 0x80;
		}
		else if ((c & 0xF0) == 0xE0)
		{
			extra = 2;
			cp = c & 0x0F;
			min = 0x800;
		}
		else if ((c & 0xF8) == 0xF0)
		{
			extra = 3;
			cp = c & 0x07;
			min = 0x10000;
		}
		else
			return false;
		if (len - i <= (size_t) extra)
			return false;
		for (j = 1; j <= extra; j++)
		{
			if ((s[i + j] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + j] & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += (size_t) extra + 1;
	}
	return true;
}

/*
 * The next UTF-16 code unit of the valid UTF-8 s[*i..len), or -1 at the
 * end; *low keeps the second half of a surrogate pair for the next call.
 */
static long
next_utf16_unit(const unsigned char *s, size_t len, size_t *i, long *low)
{
	unsigned long cp;

	if (*low >= 0)
	{
		long		u = *low;

		*low = -1;
		return u;
	}
	if (*i >= len)
		return -1;
	if (s[*i] < 0x80)
		cp = s[(*i)++];
	else if (s[*i] < 0xE0)
	{
		cp = ((unsigned long) (s[*i] & 0x1F) << 6) | (s[*i + 1] & 0x3F);
		*i += 2;
	}
	else if (s[*i] < 0xF0)
	{
		cp = ((unsigned long) (s[*i] & 0x0F) << 12) |
			((unsigned long) (s[*i + 1] & 0x3F) << 6) | (s[*i + 2] & 0x3F);
		*i += 3;
	}
	else
	{
		cp = ((unsigned long) (s[*i] & 0x07) << 18) |
			((unsigned long) (s[*i + 1] & 0x3F) << 12) |
			((unsigned long) (s[*i + 2] & 0x3F) << 6) | (s[*i + 3] & 0x3F);
		*i += 4;
	}
	if (cp < 0x10000)
		return (long) cp;
	cp -= 0x10000;
	*low = (long) (0xDC00 + (cp & 0x3FF));
	return (long) (0xD800 + (cp >> 10));
}

/*
 * jcs_ref_compare_keys
 *		RFC 8785's key order the long way: both keys converted to UTF-16
 *		and compared code unit by code unit.
 */
int
jcs_ref_compare_keys(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t		ia = 0;
	size_t		ib = 0;
	long		lowa = -1;
	long		lowb = -1;

	for (;;)
	{
		long		ua = next_utf16_unit((const unsigned char *) a, alen, &ia, &lowa);
		long		ub = next_utf16_unit((const unsigned char *) b, blen, &ib, &lowb);

		if (ua != ub)
			return ua < ub ? -1 : 1;	/* the end (-1) sorts first */
		if (ua < 0)
			return 0;
	}
}

/*
 * ECMAScript's layout of the k digits with the scientific exponent e (the
 * value is d.ddd x 10^e): plain notation for -7 < e < 21, else d.ddde+-x.
 */
static size_t
ref_format(char *out, bool negative, const char *digits, int k, int e)
{
	char	   *q = out;
	int			i;

	if (negative)
		*q++ = '-';
	if (e >= 21 || e <= -7)
	{
		*q++ = digits[0];
		if (k > 1)
			q += sprintf(q, ".%.*s", k - 1, digits + 1);
		q += sprintf(q, "e%c%d", e < 0 ? '-' : '+', e < 0 ? -e : e);
	}
	else if (e < 0)
	{
		q += sprintf(q, "0.");
		for (i = 0; i < -e - 1; i++)
			*q++ = '0';
		q += sprintf(q, "%.*s", k, digits);
	}
	else
	{
		/* e + 1 digits before the point, padded with zeros */
		for (i = 0; i <= e; i++)
			*q++ = i < k ? digits[i] : '0';
		if (k > e + 1)
			q += sprintf(q, ".%.*s", k - e - 1, digits + e + 1);
	}
	*q = '\0';
	return (size_t) (q - out);
}

/* whether the p digits with scientific exponent e convert back to d */
static bool
ref_candidate(double d, const char *digits, int p, int e)
{
	char		text[64];

	snprintf(text, sizeof(text), "%c.%.*se%d", digits[0], p - 1, digits + 1, e);
	return strtod(text, NULL) == d;
}

/*
 * Whether some decimal of p significant digits converts back to d > 0: the
 * correctly rounded one (snprintf), or failing that the one a step above
 * or below it on the p-digit grid.  When one does, it is stored in cand
 * (p digits) and *ce (scientific exponent).
 */
static bool
ref_round_trips(double d, int p, char *cand, int *ce)
{
	char		text[64];
	char		near[20];
	int			e;
	int			attempt;
	int			i,
				j;

	snprintf(text, sizeof(text), "%.*e", p - 1, d);
	for (i = 0, j = 0; text[i] != 'e'; i++)
	{
		if (text[i] != '.')
			near[j++] = text[i];
	}
	e = atoi(text + i + 1);

	for (attempt = 0; attempt < 3; attempt++)
	{
		*ce = e;
		memcpy(cand, near, (size_t) p);
		if (attempt == 1)
		{
			/* one step up: 999 + 1 = 1000, one digit more, so a 0 less */
			for (i = p - 1; i >= 0 && cand[i] == '9'; i--)
				cand[i] = '0';
			if (i < 0)
			{
				cand[0] = '1';
				(*ce)++;
			}
			else
				cand[i]++;
		}
		else if (attempt == 2)
		{
			/* one step down: 100 - 1 = 099, one digit fewer, so a 9 more */
			for (i = p - 1; i >= 0 && cand[i] == '0'; i--)
				cand[i] = '9';
			if (i < 0)
				continue;
			cand[i]--;
			if (cand[0] == '0')
			{
				memmove(cand, cand + 1, (size_t) p - 1);
				cand[p - 1] = '9';
				(*ce)--;
			}
		}
		if (ref_candidate(d, cand, p, *ce))
			return true;
	}
	return false;
}

/*
 * Whether some p-digit decimal converts back to d only grows with p (a
 * p-digit decimal is one of p + 1 digits too), so from any start the least
 * such p is found by walking: down while one p - 1 lower still converts,
 * or up until one does.  hint is where to start (the digit count of a text
 * that gave d makes it quick); any value from 1 to 17 is correct.
 */
size_t
jcs_ref_number(double d, int hint, char *out)
{
	bool		negative = d < 0;
	char		best[20];
	char		cand[20];
	int			best_e;
	int			ce;
	int			p;
	int			k;

	if (d == 0)
		return (size_t) sprintf(out, "0");
	if (negative)
		d = -d;
	p = hint < 1 ? 1 : hint > 17 ? 17 : hint;
	if (ref_round_trips(d, p, best, &best_e))
	{
		while (p > 1 && ref_round_trips(d, p - 1, cand, &ce))
		{
			p--;
			memcpy(best, cand, (size_t) p);
			best_e = ce;
		}
	}
	else
	{
		do
			p++;
		while (p < 17 && !ref_round_trips(d, p, best, &best_e));
		if (p == 17 && !ref_round_trips(d, p, best, &best_e))
			return (size_t) sprintf(out, "?");	/* not reached */
	}
	for (k = p; k > 1 && best[k - 1] == '0'; k--)
		;
	return ref_format(out, negative, best, k, best_e);
}
