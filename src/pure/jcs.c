/*-------------------------------------------------------------------------
 *
 * jcs.c
 *		RFC 8785 JSON Canonicalization Scheme (JCS): the canonical writer.
 *
 * jcs_write() walks a caller-built tree and appends its canonical text:
 *
 *	- no whitespace; the literals null, true and false;
 *	- strings and keys between quotes, with \" \\ \b \t \n \f \r for those
 *	  characters, \u00xx (lowercase hex) for the other controls below
 *	  U+0020 and every other character as its own UTF-8 bytes; the bytes are
 *	  checked to be UTF-8 (no overlongs, no surrogates, nothing above
 *	  U+10FFFF, no truncated sequence);
 *	- object members sorted by their keys' UTF-16 code units; two equal keys
 *	  are an error;
 *	- arrays in their order;
 *	- numbers as ECMAScript's Number::toString writes the double nearest to
 *	  the number's text (jcs_number, jcs_number.c).
 *
 * Output goes through a small buffer in the writer, so that the caller's
 * append function sees a few long runs rather than every token.  Nothing
 * here allocates memory or keeps state between calls.
 *
 * src/pure/jcs.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "jcs.h"

/* output is collected here and handed to the append function in runs */
#define JCS_WRITE_BUFSIZE	1024

typedef struct jcs_writer
{
	jcs_append_fn append;
	void	   *arg;
	jcs_error  *err;
	size_t		used;
	char		buf[JCS_WRITE_BUFSIZE];
} jcs_writer;


static void writer_flush(jcs_writer *w);
static void writer_put(jcs_writer *w, const char *data, size_t len);
static void writer_putc(jcs_writer *w, char c);
static jcs_status writer_fail(jcs_writer *w, jcs_status status,
							  const jcs_value *value, const char *key,
							  size_t keylen);
static size_t utf8_sequence_length(const unsigned char *p, size_t avail);
static bool needs_care(const unsigned char *p);
static bool write_string(jcs_writer *w, const char *s, size_t len);
static int	utf16_rank(unsigned char c);
static void sort_members(jcs_member *m, size_t count);
static void sift_down(jcs_member *m, size_t root, size_t count);
static jcs_status write_value(jcs_writer *w, jcs_value *v);

/* the escape of each ASCII byte: 0 none, 'u' as \u00xx, else \ and it */
static const char ascii_escape[128] = {
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
	'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
	0, 0, '"', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\\', 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

static const char hex_digits[] = "0123456789abcdef";

/* hand what is buffered to the append function */
static void
writer_flush(jcs_writer *w)
{
	if (w->used > 0)
		w->append(w->arg, w->buf, w->used);
	w->used = 0;
}

/* append len bytes: into the buffer, or straight through when they are many */
static void
writer_put(jcs_writer *w, const char *data, size_t len)
{
	if (len == 0)
		return;					/* data may then be NULL */
	if (len > JCS_WRITE_BUFSIZE - w->used)
	{
		writer_flush(w);
		if (len >= JCS_WRITE_BUFSIZE)
		{
			w->append(w->arg, data, len);
			return;
		}
	}
	memcpy(w->buf + w->used, data, len);
	w->used += len;
}

static void
writer_putc(jcs_writer *w, char c)
{
	if (w->used == JCS_WRITE_BUFSIZE)
		writer_flush(w);
	w->buf[w->used++] = c;
}

/* fill the caller's error report and return the status */
static jcs_status
writer_fail(jcs_writer *w, jcs_status status, const jcs_value *value,
			const char *key, size_t keylen)
{
	if (w->err != NULL)
	{
		w->err->status = status;
		w->err->value = value;
		w->err->key = key;
		w->err->keylen = keylen;
	}
	return status;
}

/*
 * The length of the UTF-8 sequence of a non-ASCII character starting at p
 * (avail bytes left), or 0 when it is not well-formed: a stray continuation
 * byte, an overlong form, a surrogate, a code point above U+10FFFF, or a
 * sequence cut short.  The bounds on the second byte are those of RFC 3629.
 */
static size_t
utf8_sequence_length(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80;
	unsigned char hi = 0xBF;
	size_t		n;
	size_t		i;

	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
	{
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;			/* below U+0800 is overlong */
		else if (c == 0xED)
			hi = 0x9F;			/* U+D800..U+DFFF are surrogates */
	}
	else if (c >= 0xF0 && c <= 0xF4)
	{
		n = 4;
		if (c == 0xF0)
			lo = 0x90;			/* below U+10000 is overlong */
		else if (c == 0xF4)
			hi = 0x8F;			/* above U+10FFFF */
	}
	else
		return 0;

	if (avail < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
	{
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	}
	return n;
}

/*
 * Whether any of the 8 bytes at p is a control (below 0x20), '"', '\\' or
 * not ASCII: the bytes that write_string must look at one by one.  Each
 * test below sets the top bit of a byte where the condition holds (and may
 * set it in bytes above one that does, never when none does).
 */
static bool
needs_care(const unsigned char *p)
{
	const uint64_t ones = UINT64_C(0x0101010101010101);
	const uint64_t highs = UINT64_C(0x8080808080808080);
	uint64_t	x;
	uint64_t	quote;
	uint64_t	backslash;

	memcpy(&x, p, 8);
	quote = x ^ (ones * '"');
	backslash = x ^ (ones * '\\');
	return ((x |						/* 0x80 and above */
			 ((x - ones * 0x20) & ~x) |	/* below 0x20 */
			 ((quote - ones) & ~quote) |	/* '"' */
			 ((backslash - ones) & ~backslash)) & highs) != 0;	/* '\\' */
}

/*
 * Write s as a JSON string.  Bytes that need no escape are appended as one
 * run.  Returns false when s is not valid UTF-8.
 */
static bool
write_string(jcs_writer *w, const char *s, size_t len)
{
	const unsigned char *p;
	const unsigned char *end;
	const unsigned char *run;

	if (len == 0)
	{
		/* s may then be NULL */
		writer_put(w, "\"\"", 2);
		return true;
	}
	p = (const unsigned char *) s;
	end = p + len;
	run = p;
	writer_putc(w, '"');
	while (p < end)
	{
		unsigned char c;
		char		esc;

		/* skip plain ASCII eight bytes at a time */
		while (end - p >= 8 && !needs_care(p))
			p += 8;
		if (p == end)
			break;
		c = *p;

		if (c >= 0x80)
		{
			size_t		n = utf8_sequence_length(p, (size_t) (end - p));

			if (n == 0)
				return false;
			p += n;
			continue;
		}
		esc = ascii_escape[c];
		if (esc == 0)
		{
			p++;
			continue;
		}
		writer_put(w, (const char *) run, (size_t) (p - run));
		if (esc == 'u')
		{
			char		u[6];

			u[0] = '\\';
			u[1] = 'u';
			u[2] = '0';
			u[3] = '0';
			u[4] = hex_digits[c >> 4];
			u[5] = hex_digits[c & 0xF];
			writer_put(w, u, 6);
		}
		else
		{
			char		e[2];

			e[0] = '\\';
			e[1] = esc;
			writer_put(w, e, 2);
		}
		p++;
		run = p;
	}
	writer_put(w, (const char *) run, (size_t) (p - run));
	writer_putc(w, '"');
	return true;
}

/*
 * A byte's place in UTF-16 order.  UTF-8 byte order is code point order;
 * UTF-16 order differs only in putting the characters above U+FFFF (lead
 * bytes F0..F4, written with surrogates D800..DBFF) before U+E000..U+FFFF
 * (lead bytes EE and EF).  Moving EE and EF after every other byte is
 * exactly that, and it is a permutation of the bytes, so comparing strings
 * byte by byte under it is a total order even on invalid UTF-8.
 * Continuation bytes (80..BF) are never moved.
 */
static int
utf16_rank(unsigned char c)
{
	if (c < 0xEE)
		return c;
	if (c >= 0xF0)
		return c - 2;
	return c + 0x10;			/* EE -> FE, EF -> FF */
}

/*
 * jcs_compare_keys
 *		Compare two keys in RFC 8785 order (their UTF-16 code units).
 *
 * A key that is a prefix of the other comes first.
 */
int
jcs_compare_keys(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	size_t		i;

	for (i = 0; i < n; i++)
	{
		unsigned char x = (unsigned char) a[i];
		unsigned char y = (unsigned char) b[i];

		if (x != y)
			return utf16_rank(x) - utf16_rank(y);
	}
	if (alen != blen)
		return alen < blen ? -1 : 1;
	return 0;
}

#define MEMBER_LESS(x, y) \
	(jcs_compare_keys((x)->key, (x)->keylen, (y)->key, (y)->keylen) < 0)

/* restore the max-heap property below root in m[0..count) */
static void
sift_down(jcs_member *m, size_t root, size_t count)
{
	for (;;)
	{
		size_t		child = 2 * root + 1;
		jcs_member	tmp;

		if (child >= count)
			return;
		if (child + 1 < count && MEMBER_LESS(&m[child], &m[child + 1]))
			child++;
		if (!MEMBER_LESS(&m[root], &m[child]))
			return;
		tmp = m[root];
		m[root] = m[child];
		m[child] = tmp;
		root = child;
	}
}

/*
 * Sort members by key, in place and without allocating: insertion sort for
 * the small objects of most documents, heapsort for big ones.  Not stable;
 * equal keys are an error anyway.
 */
static void
sort_members(jcs_member *m, size_t count)
{
	size_t		i;

	if (count <= 16)
	{
		for (i = 1; i < count; i++)
		{
			jcs_member	tmp = m[i];
			size_t		j = i;

			while (j > 0 && MEMBER_LESS(&tmp, &m[j - 1]))
			{
				m[j] = m[j - 1];
				j--;
			}
			m[j] = tmp;
		}
		return;
	}

	for (i = count / 2; i > 0; i--)
		sift_down(m, i - 1, count);
	for (i = count - 1; i > 0; i--)
	{
		jcs_member	tmp = m[0];

		m[0] = m[i];
		m[i] = tmp;
		sift_down(m, 0, i);
	}
}

/* write one value and, recursively, what it contains */
static jcs_status
write_value(jcs_writer *w, jcs_value *v)
{
	jcs_status	st;
	size_t		i;

	switch (v->type)
	{
		case JCS_NULL:
			writer_put(w, "null", 4);
			return JCS_OK;
		case JCS_FALSE:
			writer_put(w, "false", 5);
			return JCS_OK;
		case JCS_TRUE:
			writer_put(w, "true", 4);
			return JCS_OK;
		case JCS_NUMBER:
			{
				size_t		n;

				/* format straight into the buffer */
				if (JCS_WRITE_BUFSIZE - w->used < JCS_NUMBER_MAXLEN + 1)
					writer_flush(w);
				st = jcs_number(v->text, v->len, w->buf + w->used, &n);
				if (st != JCS_OK)
					return writer_fail(w, st, v, NULL, 0);
				w->used += n;
				return JCS_OK;
			}
		case JCS_STRING:
			if (!write_string(w, v->text, v->len))
				return writer_fail(w, JCS_ERR_UTF8, v, NULL, 0);
			return JCS_OK;
		case JCS_ARRAY:
			writer_putc(w, '[');
			for (i = 0; i < v->count; i++)
			{
				if (i > 0)
					writer_putc(w, ',');
				st = write_value(w, v->items[i]);
				if (st != JCS_OK)
					return st;
			}
			writer_putc(w, ']');
			return JCS_OK;
		case JCS_OBJECT:
			sort_members(v->members, v->count);
			/* after sorting, equal keys are neighbours */
			for (i = 1; i < v->count; i++)
			{
				const jcs_member *a = &v->members[i - 1];
				const jcs_member *b = &v->members[i];

				if (a->keylen == b->keylen &&
					(a->keylen == 0 || memcmp(a->key, b->key, a->keylen) == 0))
					return writer_fail(w, JCS_ERR_DUPLICATE_KEY, NULL,
									   b->key, b->keylen);
			}
			writer_putc(w, '{');
			for (i = 0; i < v->count; i++)
			{
				jcs_member *m = &v->members[i];

				if (i > 0)
					writer_putc(w, ',');
				if (!write_string(w, m->key, m->keylen))
					return writer_fail(w, JCS_ERR_UTF8, NULL, m->key, m->keylen);
				writer_putc(w, ':');
				st = write_value(w, m->value);
				if (st != JCS_OK)
					return st;
			}
			writer_putc(w, '}');
			return JCS_OK;
	}
	/* not a jcs_type: refuse rather than write something that is not JSON */
	return writer_fail(w, JCS_ERR_NUMBER_SYNTAX, v, NULL, 0);
}

/*
 * jcs_write
 *		Append the RFC 8785 canonical text of value.
 *
 * A UTF-8 error in a key is reported with the key and no value; one in a
 * string, or a number's error, with that value and no key; a duplicate key
 * with the key (the second of the two in sorted order).  Once an error is
 * found nothing more is appended.
 *
 * Each level of nesting takes about a hundred bytes of stack; formatting
 * a number, at the bottom, about two kilobytes more.
 */
jcs_status
jcs_write(jcs_value *value, jcs_append_fn append, void *arg, jcs_error *err)
{
	jcs_writer	w;
	jcs_status	st;

	w.append = append;
	w.arg = arg;
	w.err = err;
	w.used = 0;
	st = write_value(&w, value);
	if (st != JCS_OK)
		return st;
	writer_flush(&w);
	if (err != NULL)
	{
		err->status = JCS_OK;
		err->value = NULL;
		err->key = NULL;
		err->keylen = 0;
	}
	return JCS_OK;
}

