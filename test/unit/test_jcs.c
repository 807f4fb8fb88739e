/*-------------------------------------------------------------------------
 *
 * test_jcs.c
 *		Unit tests for the RFC 8785 (JCS) canonical writer.
 *
 * The expected texts come from RFC 8785 itself (its examples and the
 * number table of Appendix B, transcribed by hand), from ECMA-262's rules
 * written out case by case, from a slow reference formatter (jcs_parse.c)
 * compared on a million doubles, and from the vector files of
 * test/vectors/jcs, which Node and the npm package canonicalize wrote.
 * JSON texts are turned into trees by the test parser of jcs_parse.c.
 *
 * test/unit/test_jcs.c
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
#include "jcs_parse.h"
#include "unit.h"

#define VECTOR_DIR "../vectors/jcs/"

/* a growing output buffer for jcs_write, NUL-terminated after each append */
typedef struct outbuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	int			calls;
} outbuf;

static void out_append(void *arg, const char *data, size_t len);
static void out_reset(outbuf *o);
static jcs_status canon(const char *text, size_t len, outbuf *o, jcs_error *err,
						jcs_parse_status *pst);
static void check_canon(const char *in, const char *expected);
static void check_canon_status(const char *in, jcs_status expected);
static void check_number(const char *text, const char *expected);
static void check_number_status(const char *text, jcs_status expected);
static uint64_t rng_next(void);
static double double_from_bits(uint64_t bits);
static void test_rfc_appendix_b(void);
static void test_rfc_examples(void);
static void test_structure(void);
static void test_escapes(void);
static void test_utf8(void);
static void test_errors(void);
static void test_number_layout(void);
static void test_number_huge(void);
static void test_number_exponents(void);
static void test_number_oracle(void);
static void test_vectors_numbers(void);
static void test_vectors_documents(void);
static size_t random_key(char *buf);
static void test_compare_keys(void);
static void test_sort_large(void);
static void test_append_runs(void);
static void test_parser(void);

static void
out_append(void *arg, const char *data, size_t len)
{
	outbuf	   *o = arg;

	if (o->len + len + 1 > o->cap)
	{
		size_t		cap = o->cap ? o->cap : 256;

		while (cap < o->len + len + 1)
			cap *= 2;
		o->data = realloc(o->data, cap);
		if (o->data == NULL)
		{
			printf("out of memory\n");
			exit(1);
		}
		o->cap = cap;
	}
	memcpy(o->data + o->len, data, len);
	o->len += len;
	o->data[o->len] = '\0';
	o->calls++;
}

static void
out_reset(outbuf *o)
{
	o->len = 0;
	o->calls = 0;
	if (o->data != NULL)
		o->data[0] = '\0';
}

/*
 * Parse text (strictly, but passing bad UTF-8 through) and write its
 * canonical form into o.  Returns the writer's status; *pst gets the
 * parser's (the writer is not called when it is not JCS_PARSE_OK).
 */
static jcs_status
canon(const char *text, size_t len, outbuf *o, jcs_error *err,
	  jcs_parse_status *pst)
{
	jcs_value  *root;
	jcs_parse_arena *arena;
	jcs_status	st;

	out_reset(o);
	out_append(o, "", 0);
	*pst = jcs_parse(text, len, 2000, JCS_PARSE_ALLOW_BAD_UTF8, &root, &arena, NULL);
	if (*pst != JCS_PARSE_OK)
		return JCS_OK;
	st = jcs_write(root, out_append, o, err);
	jcs_parse_free(arena);
	return st;
}

static void
check_canon(const char *in, const char *expected)
{
	outbuf		o = {0};
	jcs_parse_status pst;
	jcs_status	st = canon(in, strlen(in), &o, NULL, &pst);

	CHECK_MSG(pst == JCS_PARSE_OK && st == JCS_OK && strcmp(o.data, expected) == 0,
			  "%s: parse %d, status %d, got %s, expected %s",
			  in, (int) pst, (int) st, o.data, expected);
	free(o.data);
}

static void
check_canon_status(const char *in, jcs_status expected)
{
	outbuf		o = {0};
	jcs_parse_status pst;
	jcs_status	st = canon(in, strlen(in), &o, NULL, &pst);

	CHECK_MSG(pst == JCS_PARSE_OK && st == expected,
			  "%s: parse %d, status %d, expected status %d",
			  in, (int) pst, (int) st, (int) expected);
	free(o.data);
}

/* jcs_number of text must succeed with expected */
static void
check_number(const char *text, const char *expected)
{
	char		out[JCS_NUMBER_MAXLEN + 1];
	size_t		n = 0;
	jcs_status	st;

	memset(out, 'X', sizeof(out));
	st = jcs_number(text, strlen(text), out, &n);
	CHECK_MSG(st == JCS_OK && n == strlen(expected) && strcmp(out, expected) == 0,
			  "jcs_number(%s): status %d, got %.*s, expected %s",
			  text, (int) st, (int) (st == JCS_OK ? n : 0), out, expected);
}

static void
check_number_status(const char *text, jcs_status expected)
{
	char		out[JCS_NUMBER_MAXLEN + 1];
	size_t		n = 0;
	jcs_status	st = jcs_number(text, strlen(text), out, &n);

	CHECK_MSG(st == expected, "jcs_number(%s): status %d, expected %d",
			  text, (int) st, (int) expected);
}

/* splitmix64, seeded: the same numbers on every run */
static uint64_t rng_state = UINT64_C(0x8785878587858785);

static uint64_t
rng_next(void)
{
	uint64_t	z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static double
double_from_bits(uint64_t bits)
{
	double		d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

/*
 * RFC 8785 Appendix B: IEEE-754 bits and their expected text.  The input
 * text is printf("%.17g"), which converts back to the same double.  The
 * table's NaN and Infinity rows have no JSON text; 1e400 stands for them.
 */
static void
test_rfc_appendix_b(void)
{
	static const struct
	{
		uint64_t	bits;
		const char *text;
	}			table[] = {
		{UINT64_C(0x0000000000000000), "0"},
		{UINT64_C(0x8000000000000000), "0"},
		{UINT64_C(0x0000000000000001), "5e-324"},
		{UINT64_C(0x8000000000000001), "-5e-324"},
		{UINT64_C(0x7fefffffffffffff), "1.7976931348623157e+308"},
		{UINT64_C(0xffefffffffffffff), "-1.7976931348623157e+308"},
		{UINT64_C(0x4340000000000000), "9007199254740992"},
		{UINT64_C(0xc340000000000000), "-9007199254740992"},
		{UINT64_C(0x4430000000000000), "295147905179352830000"},
		{UINT64_C(0x44b52d02c7e14af5), "9.999999999999997e+22"},
		{UINT64_C(0x44b52d02c7e14af6), "1e+23"},
		{UINT64_C(0x44b52d02c7e14af7), "1.0000000000000001e+23"},
		{UINT64_C(0x444b1ae4d6e2ef4e), "999999999999999700000"},
		{UINT64_C(0x444b1ae4d6e2ef4f), "999999999999999900000"},
		{UINT64_C(0x444b1ae4d6e2ef50), "1e+21"},
		{UINT64_C(0x3eb0c6f7a0b5ed8c), "9.999999999999997e-7"},
		{UINT64_C(0x3eb0c6f7a0b5ed8d), "0.000001"},
		{UINT64_C(0x41b3de4355555553), "333333333.3333332"},
		{UINT64_C(0x41b3de4355555554), "333333333.33333325"},
		{UINT64_C(0x41b3de4355555555), "333333333.3333333"},
		{UINT64_C(0x41b3de4355555556), "333333333.3333334"},
		{UINT64_C(0x41b3de4355555557), "333333333.33333343"},
		{UINT64_C(0xbecbf647612f3696), "-0.0000033333333333333333"},
		{UINT64_C(0x43143ff3c1cb0959), "1424953923781206.2"},
	};
	size_t		i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
	{
		char		text[40];

		snprintf(text, sizeof(text), "%.17g", double_from_bits(table[i].bits));
		check_number(text, table[i].text);
		/* the expected text is itself JSON and canonical */
		check_number(table[i].text, table[i].text);
	}
	check_number_status("1e400", JCS_ERR_NUMBER_RANGE);
	check_number_status("-1e400", JCS_ERR_NUMBER_RANGE);
}

/* RFC 8785 sections 3.2.2 (a whole document) and 3.2.3 (sorting) */
static void
test_rfc_examples(void)
{
	check_canon("{\n"
				"  \"numbers\": [333333333.33333329, 1E30, 4.50,\n"
				"              2e-3, 0.000000000000000000000000001],\n"
				"  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
				"  \"literals\": [null, true, false]\n"
				"}",
				"{\"literals\":[null,true,false],"
				"\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
				"\"string\":\"\xE2\x82\xAC$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");

	check_canon("{\n"
				"  \"\\u20ac\": \"Euro Sign\",\n"
				"  \"\\r\": \"Carriage Return\",\n"
				"  \"\\ufb33\": \"Hebrew Letter Dalet With Dagesh\",\n"
				"  \"1\": \"One\",\n"
				"  \"\\ud83d\\ude00\": \"Emoji: Grinning Face\",\n"
				"  \"\\u0080\": \"Control\",\n"
				"  \"\\u00f6\": \"Latin Small Letter O With Diaeresis\"\n"
				"}",
				"{\"\\r\":\"Carriage Return\","
				"\"1\":\"One\","
				"\"\xC2\x80\":\"Control\","
				"\"\xC3\xB6\":\"Latin Small Letter O With Diaeresis\","
				"\"\xE2\x82\xAC\":\"Euro Sign\","
				"\"\xF0\x9F\x98\x80\":\"Emoji: Grinning Face\","
				"\"\xEF\xAC\xB3\":\"Hebrew Letter Dalet With Dagesh\"}");
}

static void
test_structure(void)
{
	check_canon("null", "null");
	check_canon(" true ", "true");
	check_canon("\tfalse\r\n", "false");
	check_canon("\"\"", "\"\"");
	check_canon("[]", "[]");
	check_canon("{}", "{}");
	check_canon("[ ]", "[]");
	check_canon("{ }", "{}");
	check_canon("[3, 1, 2]", "[3,1,2]");
	check_canon("[[], {}, [[]], {\"a\": {}}]", "[[],{},[[]],{\"a\":{}}]");
	check_canon("{\"b\": 1, \"a\": [true, {\"d\": null, \"c\": false}]}",
				"{\"a\":[true,{\"c\":false,\"d\":null}],\"b\":1}");
	check_canon("{\"a\":1,\"A\":2,\"\":3,\"aa\":4,\"a \":5}",
				"{\"\":3,\"A\":2,\"a\":1,\"a \":5,\"aa\":4}");
	check_canon("[\"\\/\", \"a/b\"]", "[\"/\",\"a/b\"]");
	check_canon("-0", "0");
	check_canon("[1.0, -0.0, 1e0, 10E-1, 0.1e1]", "[1,0,1,1,1]");
	/* a deep nest: the caller bounds the depth, the writer just recurses */
	{
		char		in[2 * 1000 + 1];
		int			i;

		for (i = 0; i < 1000; i++)
		{
			in[i] = '[';
			in[2000 - 1 - i] = ']';
		}
		in[2000] = '\0';
		check_canon(in, in);
	}
}

/* every ASCII character in a string and in a key, and some others */
static void
test_escapes(void)
{
	int			c;

	for (c = 0; c < 0x80; c++)
	{
		char		raw[2];
		char		want[16];
		char		wantobj[40];
		jcs_value	v;
		jcs_member	m;
		jcs_value	obj;
		jcs_value	one;
		outbuf		o = {0};
		jcs_status	st;

		raw[0] = (char) c;
		switch (c)
		{
			case '"':
				strcpy(want, "\"\\\"\"");
				break;
			case '\\':
				strcpy(want, "\"\\\\\"");
				break;
			case 0x08:
				strcpy(want, "\"\\b\"");
				break;
			case 0x09:
				strcpy(want, "\"\\t\"");
				break;
			case 0x0A:
				strcpy(want, "\"\\n\"");
				break;
			case 0x0C:
				strcpy(want, "\"\\f\"");
				break;
			case 0x0D:
				strcpy(want, "\"\\r\"");
				break;
			default:
				if (c < 0x20)
					snprintf(want, sizeof(want), "\"\\u%04x\"", c);
				else
					snprintf(want, sizeof(want), "\"%c\"", c);
				break;
		}

		memset(&v, 0, sizeof(v));
		v.type = JCS_STRING;
		v.text = raw;
		v.len = 1;
		st = jcs_write(&v, out_append, &o, NULL);
		CHECK_MSG(st == JCS_OK && strcmp(o.data, want) == 0,
				  "character 0x%02x: got %s, expected %s", c, o.data, want);

		/* the same as a key */
		memset(&one, 0, sizeof(one));
		one.type = JCS_NUMBER;
		one.text = "1";
		one.len = 1;
		m.key = raw;
		m.keylen = 1;
		m.value = &one;
		memset(&obj, 0, sizeof(obj));
		obj.type = JCS_OBJECT;
		obj.count = 1;
		obj.members = &m;
		snprintf(wantobj, sizeof(wantobj), "{%s:1}", want);
		out_reset(&o);
		st = jcs_write(&obj, out_append, &o, NULL);
		CHECK_MSG(st == JCS_OK && strcmp(o.data, wantobj) == 0,
				  "key 0x%02x: got %s, expected %s", c, o.data, wantobj);
		free(o.data);
	}

	/* the escapes the writer must not use: \/, \u for U+007F and above */
	check_canon("\"\\u007f\\u0080\\u2028\\u2029\\ufeff\\uffff\\ud800\\udc00\"",
				"\"\x7F\xC2\x80\xE2\x80\xA8\xE2\x80\xA9\xEF\xBB\xBF\xEF\xBF\xBF\xF0\x90\x80\x80\"");
	/* escapes and runs mixed, a NUL inside */
	check_canon("\"a\\u0000b\\u001Fc\\\"\\\\d\\te\\u000bf\"",
				"\"a\\u0000b\\u001fc\\\"\\\\d\\te\\u000bf\"");
	check_canon("\"\\b\\f\\n\\r\\t\\u0001\\u0010\\u001e\"",
				"\"\\b\\f\\n\\r\\t\\u0001\\u0010\\u001e\"");
	/* a key with escapes */
	check_canon("{\"a\\nb\":\"\\u00e9\"}", "{\"a\\nb\":\"\xC3\xA9\"}");
	/* a string of zero length whose text is NULL */
	{
		jcs_value	v;
		outbuf		o = {0};

		memset(&v, 0, sizeof(v));
		v.type = JCS_STRING;
		CHECK(jcs_write(&v, out_append, &o, NULL) == JCS_OK);
		CHECK_STR_EQ(o.data, "\"\"");
		free(o.data);
	}
}

/*
 * UTF-8: the table of malformed sequences, their valid neighbours, and all
 * sequences of two and three bytes (and many of four) checked against the
 * decoding validator of jcs_parse.c.
 */
static void
test_utf8(void)
{
	static const char *const bad[] = {
		"\x80", "\xBF", "\xC0\x80", "\xC1\xBF", "\xC2", "\xC2\x41", "\xC2\xC0",
		"\xE0\x80\x80", "\xE0\x9F\xBF", "\xE2\x82", "\xE2\x28\xA1",
		"\xED\xA0\x80", "\xED\xAF\xBF", "\xED\xB0\x80", "\xED\xBF\xBF",
		"\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF", "\xF0\x90\x80", "\xF4\x90\x80\x80",
		"\xF5\x80\x80\x80", "\xF7\xBF\xBF\xBF", "\xF8\x88\x80\x80\x80", "\xFE",
		"\xFF", "a\xFF", "\xC3\xA9\xA9", "\xF0\x9F\x98", "ok\xE2\x82"
	};
	static const char *const good[] = {
		"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
		"\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "\x7F", "a\xC3\xA9z"
	};
	size_t		i;
	long		mismatches = 0;
	long		tried = 0;
	outbuf		o = {0};

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		jcs_value	v;
		jcs_value	obj;
		jcs_value	nul;
		jcs_member	m;
		jcs_error	err;
		jcs_status	st;

		memset(&v, 0, sizeof(v));
		v.type = JCS_STRING;
		v.text = bad[i];
		v.len = strlen(bad[i]);
		out_reset(&o);
		st = jcs_write(&v, out_append, &o, &err);
		CHECK_MSG(st == JCS_ERR_UTF8 && err.status == JCS_ERR_UTF8 &&
				  err.value == &v && err.key == NULL,
				  "bad UTF-8 #%zu in a string: status %d", i, (int) st);
		CHECK(!jcs_ref_utf8_valid(bad[i], strlen(bad[i])));

		memset(&nul, 0, sizeof(nul));
		nul.type = JCS_NULL;
		m.key = bad[i];
		m.keylen = strlen(bad[i]);
		m.value = &nul;
		memset(&obj, 0, sizeof(obj));
		obj.type = JCS_OBJECT;
		obj.count = 1;
		obj.members = &m;
		out_reset(&o);
		st = jcs_write(&obj, out_append, &o, &err);
		CHECK_MSG(st == JCS_ERR_UTF8 && err.status == JCS_ERR_UTF8 &&
				  err.value == NULL && err.key == bad[i] &&
				  err.keylen == strlen(bad[i]),
				  "bad UTF-8 #%zu in a key: status %d", i, (int) st);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
	{
		jcs_value	v;
		char		want[16];

		memset(&v, 0, sizeof(v));
		v.type = JCS_STRING;
		v.text = good[i];
		v.len = strlen(good[i]);
		out_reset(&o);
		snprintf(want, sizeof(want), "\"%s\"", good[i]);
		CHECK(jcs_write(&v, out_append, &o, NULL) == JCS_OK);
		CHECK_STR_EQ(o.data, want);
		CHECK(jcs_ref_utf8_valid(good[i], strlen(good[i])));
	}

	/* every two- and three-byte string, and four-byte ones at random */
	{
		unsigned char s[4];
		jcs_value	v;
		unsigned long x;

		memset(&v, 0, sizeof(v));
		v.type = JCS_STRING;
		v.text = (const char *) s;
		for (x = 0; x < 0x1000000UL + 0x10000UL + 2000000UL; x++)
		{
			bool		ok;
			bool		ref;

			if (x < 0x10000UL)
			{
				s[0] = (unsigned char) (x >> 8);
				s[1] = (unsigned char) x;
				v.len = 2;
			}
			else if (x < 0x1010000UL)
			{
				unsigned long y = x - 0x10000UL;

				s[0] = (unsigned char) (y >> 16);
				s[1] = (unsigned char) (y >> 8);
				s[2] = (unsigned char) y;
				v.len = 3;
				/* ASCII first bytes are covered by the two-byte strings */
				if (s[0] < 0x80)
					continue;
			}
			else
			{
				uint64_t	r = rng_next();

				s[0] = (unsigned char) (0xF0 | (r & 0x0F));
				s[1] = (unsigned char) (0x80 | ((r >> 8) & 0x3F));
				s[2] = (unsigned char) (0x80 | ((r >> 16) & 0x3F));
				s[3] = (unsigned char) (r >> 24);
				if (r & (UINT64_C(1) << 40))
					s[1] = (unsigned char) (r >> 32);
				v.len = 4;
			}
			out_reset(&o);
			ok = jcs_write(&v, out_append, &o, NULL) == JCS_OK;
			ref = jcs_ref_utf8_valid(v.text, v.len);
			tried++;
			if (ok != ref)
			{
				if (mismatches++ < 5)
					printf("UTF-8 %02x %02x %02x %02x (%zu bytes): writer %d, reference %d\n",
						   s[0], s[1], s[2], s[3], v.len, ok, ref);
			}
		}
		CHECK_MSG(mismatches == 0, "%ld of %ld byte strings judged differently",
				  mismatches, tried);
	}
	free(o.data);
}

/* every status, and what the error report holds */
static void
test_errors(void)
{
	static const char *const syntax[] = {
		"", "-", "+1", "01", "-01", "00", "1.", ".1", "-.1", "1e", "1e+", "1E-",
		"1.e5", "0x10", " 1", "1 ", "1a", "NaN", "Infinity", "-Infinity", "1,5",
		"--1", "1e5.5", "1E+-5", "\xD9\xA1", "1\x00", "0.0.0", "1e1e1", "e5",
		"1_000", "\xEF\xBC\x91"
	};
	static const char *const range[] = {
		"1e309", "1.8e308", "-1e400", "1e-324", "-1e-324", "1e-400",
		"2.4703282292062327e-324", "1.7976931348623159e308", "1e2147483648",
		"1e-2147483649", "1e99999999999999999999999999", "-1e-99999999999999999999999"
	};
	size_t		i;
	jcs_error	err;
	outbuf		o = {0};
	jcs_parse_status pst;
	jcs_status	st;

	for (i = 0; i < sizeof(syntax) / sizeof(syntax[0]); i++)
	{
		char		out[JCS_NUMBER_MAXLEN + 1];
		size_t		n;
		size_t		len = strlen(syntax[i]);

		if (strcmp(syntax[i], "1\x00") == 0)
			len = 2;
		st = jcs_number(syntax[i], len, out, &n);
		CHECK_MSG(st == JCS_ERR_NUMBER_SYNTAX, "jcs_number(\"%s\"): status %d",
				  syntax[i], (int) st);
	}
	for (i = 0; i < sizeof(range) / sizeof(range[0]); i++)
		check_number_status(range[i], JCS_ERR_NUMBER_RANGE);

	/* through the writer: the offending value is reported */
	{
		jcs_value	num;
		jcs_value	arr;
		jcs_value	ok;
		jcs_value  *items[2];

		memset(&ok, 0, sizeof(ok));
		ok.type = JCS_NUMBER;
		ok.text = "12";
		ok.len = 2;
		memset(&num, 0, sizeof(num));
		num.type = JCS_NUMBER;
		num.text = "1.5e99999";
		num.len = strlen(num.text);
		items[0] = &ok;
		items[1] = &num;
		memset(&arr, 0, sizeof(arr));
		arr.type = JCS_ARRAY;
		arr.count = 2;
		arr.items = items;
		st = jcs_write(&arr, out_append, &o, &err);
		CHECK(st == JCS_ERR_NUMBER_RANGE && err.status == st &&
			  err.value == &num && err.key == NULL);
		num.text = "1.5.2";
		num.len = strlen(num.text);
		out_reset(&o);
		st = jcs_write(&arr, out_append, &o, &err);
		CHECK(st == JCS_ERR_NUMBER_SYNTAX && err.status == st && err.value == &num);
		/* err may be NULL */
		out_reset(&o);
		CHECK(jcs_write(&arr, out_append, &o, NULL) == JCS_ERR_NUMBER_SYNTAX);
		/* success resets the report */
		num.text = "7";
		num.len = 1;
		out_reset(&o);
		err.status = JCS_ERR_UTF8;
		err.value = &num;
		CHECK(jcs_write(&arr, out_append, &o, &err) == JCS_OK &&
			  err.status == JCS_OK && err.value == NULL && err.key == NULL);
		CHECK_STR_EQ(o.data, "[12,7]");
		/* a node of no jcs_type is refused, not written */
		num.type = (jcs_type) 99;
		out_reset(&o);
		CHECK(jcs_write(&arr, out_append, &o, &err) != JCS_OK && err.value == &num);
	}

	/* duplicate keys: equal bytes, however they were escaped */
	check_canon_status("{\"a\":1,\"a\":2}", JCS_ERR_DUPLICATE_KEY);
	check_canon_status("{\"a\":1,\"b\":2,\"\\u0061\":3}", JCS_ERR_DUPLICATE_KEY);
	check_canon_status("{\"\":1,\"\":1}", JCS_ERR_DUPLICATE_KEY);
	check_canon_status("[1,{\"x\":{\"\\ud83d\\ude00\":1,\"\xF0\x9F\x98\x80\":2}}]",
					   JCS_ERR_DUPLICATE_KEY);
	check_canon_status("{\"a\":1,\"A\":2,\"a \":3}", JCS_OK);
	{
		const char *in = "{\"k\":1,\"z\":0,\"k\":2}";
		jcs_value  *root;
		jcs_parse_arena *arena;

		CHECK(jcs_parse(in, strlen(in), 10, 0, &root, &arena, NULL) == JCS_PARSE_OK);
		out_reset(&o);
		st = jcs_write(root, out_append, &o, &err);
		CHECK(st == JCS_ERR_DUPLICATE_KEY && err.status == st &&
			  err.keylen == 1 && err.key[0] == 'k' && err.value == NULL);
		jcs_parse_free(arena);
	}
	/* UTF-8 errors via the parser (which passes the bytes through) */
	check_canon_status("\"\xC0\xAF\"", JCS_ERR_UTF8);
	check_canon_status("{\"\xED\xA0\x80\":1}", JCS_ERR_UTF8);
	check_canon_status("[\"ok\",\"\xF4\x90\x80\x80\"]", JCS_ERR_UTF8);
	(void) pst;
	free(o.data);
}

/* ECMAScript's layouts and their boundaries */
static void
test_number_layout(void)
{
	/* the examples of the brief and of ECMA-262 */
	check_number("1e21", "1e+21");
	check_number("1e20", "100000000000000000000");
	check_number("333333333.33333333", "333333333.3333333");
	check_number("0.000001", "0.000001");
	check_number("1e-7", "1e-7");
	check_number("5e-324", "5e-324");
	check_number("1.7976931348623157e308", "1.7976931348623157e+308");
	check_number("9007199254740993", "9007199254740992");
	check_number("9007199254740995", "9007199254740996");
	check_number("1.0", "1");
	check_number("-0.0", "0");
	check_number("-0", "0");
	check_number("0", "0");
	check_number("0.000", "0");
	check_number("0e-999999", "0");
	check_number("-0E+7", "0");
	check_number("3e-324", "5e-324");
	check_number("2.4703282292062328e-324", "5e-324");
	check_number("1e-323", "1e-323");
	check_number("7e-324", "5e-324");
	check_number("8e-324", "1e-323");

	/* n = 21 and 22: plain integer up to 21 digits, then exponent */
	check_number("123456789012345678901", "123456789012345680000");
	check_number("999999999999999999999", "1e+21");
	check_number("100000000000000000000", "100000000000000000000");
	check_number("1.5e21", "1.5e+21");
	check_number("1.5e20", "150000000000000000000");
	check_number("-1e21", "-1e+21");
	check_number("12345678901234567e5", "1.2345678901234568e+21");
	check_number("1234567890123456.7e5", "123456789012345670000");
	/* 0 < n <= 21 with a fraction */
	check_number("12.5", "12.5");
	check_number("1.25", "1.25");
	check_number("125", "125");
	check_number("1250", "1250");
	check_number("125e1", "1250");
	check_number("12345678901234567890.5", "12345678901234567000");
	check_number("1234567.125", "1234567.125");
	/* n = 0, -5 (plain) and -6 (exponent) */
	check_number("0.5", "0.5");
	check_number("0.05", "0.05");
	check_number("0.0000012345", "0.0000012345");
	check_number("0.00000012345", "1.2345e-7");
	check_number("0.000001", "0.000001");
	check_number("0.0000001", "1e-7");
	check_number("-0.0000001", "-1e-7");
	check_number("0.000009999999999999999", "0.000009999999999999999");
	check_number("1e-6", "0.000001");
	/* the exponent form: one digit, or a point after the first */
	check_number("1e100", "1e+100");
	check_number("1.5e100", "1.5e+100");
	check_number("123e-20", "1.23e-18");
	check_number("1e-100", "1e-100");
	check_number("-2.5e-308", "-2.5e-308");
	check_number("4.35e-320", "4.35e-320");
	/* shortest round trip, nearest among equals */
	check_number("0.1", "0.1");
	check_number("0.30000000000000004", "0.30000000000000004");
	check_number("0.3000000000000000444089209850062616169452667236328125",
				 "0.30000000000000004");
	check_number("0.1000000000000000055511151231257827", "0.1");
	check_number("1.00000000000000011102230246251565404236316680908203125", "1");
	check_number("1.0000000000000002", "1.0000000000000002");
	check_number("123456789012345678", "123456789012345680");
	check_number("2.2250738585072014e-308", "2.2250738585072014e-308");
	check_number("2.225073858507201e-308", "2.225073858507201e-308");
	check_number("1.7976931348623158e308", "1.7976931348623157e+308");
	/* powers of two whose shortest digits lie above the nearest ones */
	check_number("5986310706507378352962293074805895248510699696029696",
				 "5.986310706507379e+51");
	check_number("5.9863107065073784e+51", "5.986310706507379e+51");
	/* integers */
	check_number("42", "42");
	check_number("-2147483648", "-2147483648");
	check_number("18446744073709551615", "18446744073709552000");
	check_number("4.50", "4.5");
	check_number("-12.50e3", "-12500");
	check_number("1E30", "1e+30");
	check_number("2e-3", "0.002");
	check_number("0.000000000000000000000000001", "1e-27");
}

/*
 * Long texts: the digits of PostgreSQL's numeric (up to 131072 before the
 * point and 16383 after), and texts whose last digit beyond the 800th
 * decides the rounding.
 */
static void
test_number_huge(void)
{
	size_t		cap = 200000;
	char	   *t = malloc(cap);
	char		out[JCS_NUMBER_MAXLEN + 1];
	size_t		n;
	size_t		i;
	size_t		len;
	jcs_status	st;

	if (t == NULL)
	{
		CHECK(t != NULL);
		return;
	}

	/* 100,000 digits: far beyond range */
	for (i = 0; i < 100000; i++)
		t[i] = (char) ('1' + i % 9);
	CHECK(jcs_number(t, 100000, out, &n) == JCS_ERR_NUMBER_RANGE);
	/* 131072 digits with an exponent that brings them back */
	memcpy(t, "1", 1);
	memset(t + 1, '0', 131071);
	len = 131072 + (size_t) sprintf(t + 131072, "e-131071");
	st = jcs_number(t, len, out, &n);
	CHECK(st == JCS_OK && strcmp(out, "1") == 0);
	len = 131072 + (size_t) sprintf(t + 131072, "e-131050");
	st = jcs_number(t, len, out, &n);
	CHECK(st == JCS_OK && strcmp(out, "1e+21") == 0);
	/* 16,000 zeros after the point, then a 1: non-zero, rounds to zero */
	memcpy(t, "0.", 2);
	memset(t + 2, '0', 16000);
	t[16002] = '1';
	CHECK(jcs_number(t, 16003, out, &n) == JCS_ERR_NUMBER_RANGE);
	len = 16003 + (size_t) sprintf(t + 16003, "e16001");
	st = jcs_number(t, len, out, &n);
	CHECK(st == JCS_OK && strcmp(out, "1") == 0);
	/* the same zeros and no 1: zero */
	CHECK(jcs_number(t, 16002, out, &n) == JCS_OK && strcmp(out, "0") == 0);
	/* 1.000...0001 with 100,000 digits: 1 */
	memcpy(t, "1.", 2);
	memset(t + 2, '0', 99998);
	t[100000] = '1';
	st = jcs_number(t, 100001, out, &n);
	CHECK(st == JCS_OK && strcmp(out, "1") == 0);
	/* numeric's extremes: 131072 nines before the point, 16383 after */
	memset(t, '9', 131072);
	t[131072] = '.';
	memset(t + 131073, '9', 16383);
	CHECK(jcs_number(t, 131073 + 16383, out, &n) == JCS_ERR_NUMBER_RANGE);
	t[0] = '-';
	CHECK(jcs_number(t, 131073 + 16383, out, &n) == JCS_ERR_NUMBER_RANGE);
	memcpy(t, "0.", 2);
	memset(t + 2, '0', 16382);
	t[16384] = '1';
	CHECK(jcs_number(t, 16385, out, &n) == JCS_ERR_NUMBER_RANGE);

	/*
	 * 2^53 + 1 lies halfway between two doubles and rounds to the even one
	 * (2^53); any non-zero digit after it, however far, rounds it up.
	 */
	strcpy(t, "9007199254740993.");
	memset(t + 17, '0', 2000);
	CHECK(jcs_number(t, 17 + 2000, out, &n) == JCS_OK &&
		  strcmp(out, "9007199254740992") == 0);
	t[17 + 2000] = '1';
	CHECK(jcs_number(t, 17 + 2001, out, &n) == JCS_OK &&
		  strcmp(out, "9007199254740994") == 0);
	t[17 + 500] = '1';
	t[17 + 2000] = '0';
	CHECK(jcs_number(t, 17 + 2001, out, &n) == JCS_OK &&
		  strcmp(out, "9007199254740994") == 0);

	/*
	 * 2^-1075, half the least subnormal: exactly, it rounds (to even) to
	 * zero, a range error; a 1 after its 752 digits, placed beyond the
	 * 800th, makes it round up to 5e-324.  Also 3 x 2^-1075 (rounds to
	 * 2 x 2^-1074 = 1e-323) and just below it (to 5e-324).
	 */
	{
		/* 5^1075 in decimal, least significant digit first */
		unsigned char d[800];
		int			nd = 1;
		int			k;
		int			j;
		size_t		pos;
		int			mult;

		for (mult = 1; mult <= 3; mult += 2)
		{
			memset(d, 0, sizeof(d));
			d[0] = (unsigned char) mult;
			nd = 1;
			for (k = 0; k < 1075; k++)
			{
				int			carry = 0;

				for (j = 0; j < nd; j++)
				{
					int			x = d[j] * 5 + carry;

					d[j] = (unsigned char) (x % 10);
					carry = x / 10;
				}
				while (carry)
				{
					d[nd++] = (unsigned char) (carry % 10);
					carry /= 10;
				}
			}
			/* the value is digits x 10^-1075 */
			pos = (size_t) sprintf(t, "0.");
			memset(t + pos, '0', (size_t) (1075 - nd));
			pos += (size_t) (1075 - nd);
			for (j = nd - 1; j >= 0; j--)
				t[pos++] = (char) ('0' + d[j]);
			if (mult == 1)
			{
				CHECK(nd == 752);
				CHECK(jcs_number(t, pos, out, &n) == JCS_ERR_NUMBER_RANGE);
				memset(t + pos, '0', 100);
				t[pos + 100] = '1';
				CHECK(jcs_number(t, pos + 101, out, &n) == JCS_OK &&
					  strcmp(out, "5e-324") == 0);
			}
			else
			{
				CHECK(jcs_number(t, pos, out, &n) == JCS_OK &&
					  strcmp(out, "1e-323") == 0);
				/* one less in the last digit: just below the midpoint */
				t[pos - 1]--;
				memset(t + pos, '9', 200);
				CHECK(jcs_number(t, pos + 200, out, &n) == JCS_OK &&
					  strcmp(out, "5e-324") == 0);
			}
		}
	}
	free(t);
}

/* exponents far beyond int, and digit counts that cancel them */
static void
test_number_exponents(void)
{
	check_number_status("1e2147483648", JCS_ERR_NUMBER_RANGE);
	check_number_status("1e2147483647", JCS_ERR_NUMBER_RANGE);
	check_number_status("1e4294967296", JCS_ERR_NUMBER_RANGE);
	check_number_status("1e-2147483649", JCS_ERR_NUMBER_RANGE);
	check_number_status("1e-2147483648", JCS_ERR_NUMBER_RANGE);
	check_number_status("1e-9223372036854775808", JCS_ERR_NUMBER_RANGE);
	check_number_status("1e9223372036854775808", JCS_ERR_NUMBER_RANGE);
	check_number_status("1e+99999999999999999999999999999999999999", JCS_ERR_NUMBER_RANGE);
	check_number("0e99999999999", "0");
	check_number("0e-99999999999", "0");
	check_number("0.0e99999999999999999999999999999999", "0");
	check_number("-0e+9223372036854775808", "0");
	check_number("1e00000000000000000000000000000005", "100000");
	check_number("1E+0", "1");
	check_number("1e-0", "1");
	check_number("1e308", "1e+308");
	check_number("10e307", "1e+308");
	check_number("0.01e310", "1e+308");
	check_number("1000e-326", "1e-323");
	check_number("0.000001e-317", "1e-323");
	check_number_status("1e-325", JCS_ERR_NUMBER_RANGE);
	check_number_status("0.1e-323", JCS_ERR_NUMBER_RANGE);
	check_number_status("10e308", JCS_ERR_NUMBER_RANGE);
}

/*
 * The oracle: jcs_number against jcs_ref_number on doubles with random
 * bits (their %.17g text), on random short decimals in several layouts
 * and on random 16- and 17-digit decimals.
 */
static void
test_number_oracle(void)
{
	long		tried = 0;
	long		bad = 0;
	int			i;

	for (i = 0; i < 1000000; i++)
	{
		char		text[64];
		char		want[40];
		char		got[JCS_NUMBER_MAXLEN + 1];
		size_t		n = 0;
		double		d;
		jcs_status	st;
		int			kind = i % 10;
		int			hint = 17;

		if (kind < 3)
		{
			/* random bits, every exponent and both signs */
			d = double_from_bits(rng_next());
			if (d != d || d > DBL_MAX || d < -DBL_MAX)
				continue;
			snprintf(text, sizeof(text), "%.17g", d);
		}
		else if (kind < 9)
		{
			/* a decimal of 1..15 digits, as integer, with point or exponent */
			uint64_t	r = rng_next();
			int			k = 1 + (int) (r % 15);
			int			e = (int) ((r >> 8) % 61) - 30;
			char		digits[20];
			int			j;
			uint64_t	r2 = rng_next();

			for (j = 0; j < k; j++)
			{
				digits[j] = (char) ('0' + (r2 % 10));
				r2 /= 10;
				if (r2 == 0)
					r2 = rng_next();
			}
			if (digits[0] == '0')
				digits[0] = '1';
			hint = k;
			switch ((r >> 20) % 3)
			{
				case 0:
					snprintf(text, sizeof(text), "%s%.*se%d",
							 (r >> 30) & 1 ? "-" : "", k, digits, e);
					break;
				case 1:
					snprintf(text, sizeof(text), "%s%.1s.%.*sE%+d",
							 (r >> 30) & 1 ? "-" : "", digits, k - 1,
							 digits + 1, e);
					if (k == 1)
						snprintf(text, sizeof(text), "%s%.1sE%+d",
								 (r >> 30) & 1 ? "-" : "", digits, e);
					break;
				default:
					snprintf(text, sizeof(text), "%s0.%.*s",
							 (r >> 30) & 1 ? "-" : "", k, digits);
					break;
			}
			d = strtod(text, NULL);
		}
		else
		{
			/* 16 or 17 digits across most of the range */
			uint64_t	r = rng_next();
			int			e = (int) (r % 620) - 325;
			uint64_t	m = rng_next() % UINT64_C(90000000000000000) +
				UINT64_C(10000000000000000);

			if (r & 0x10000)
				m /= 10;
			snprintf(text, sizeof(text), "%llue%d", (unsigned long long) m, e);
			d = strtod(text, NULL);
			if (d == 0 || d > DBL_MAX)
				continue;
		}
		tried++;
		/* the reference walks from the hint; now and then from afar */
		if (i % 97 == 0)
			hint = i % 2 ? 1 : 17;
		jcs_ref_number(d, hint, want);
		memset(got, 'X', sizeof(got));
		st = jcs_number(text, strlen(text), got, &n);
		if (st != JCS_OK || n != strlen(want) || strcmp(got, want) != 0)
		{
			if (bad++ < 10)
				printf("oracle: jcs_number(%s) = %d \"%s\", reference \"%s\"\n",
					   text, (int) st, st == JCS_OK ? got : "", want);
		}
	}
	CHECK_MSG(bad == 0, "%ld of %ld numbers differ from the reference", bad, tried);
	CHECK(tried > 950000);
}

/* numbers.tsv: hex bits and Node's String(x) */
static void
test_vectors_numbers(void)
{
	FILE	   *f = fopen(VECTOR_DIR "numbers.tsv", "r");
	char		line[256];
	long		lines = 0;
	long		bad = 0;

	CHECK_MSG(f != NULL, "cannot open %s", VECTOR_DIR "numbers.tsv");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		char	   *tab;
		char	   *want;
		char		text[40];
		char		got[JCS_NUMBER_MAXLEN + 1];
		size_t		n;
		double		d;
		jcs_status	st;
		jcs_status	st2;
		char		got2[JCS_NUMBER_MAXLEN + 1];

		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		tab = strchr(line, '\t');
		if (tab == NULL || tab - line != 16)
		{
			bad++;
			printf("numbers.tsv: bad line \"%s\"\n", line);
			continue;
		}
		*tab = '\0';
		want = tab + 1;
		d = double_from_bits(strtoull(line, NULL, 16));
		snprintf(text, sizeof(text), "%.17g", d);
		st = jcs_number(text, strlen(text), got, &n);
		/* Node's text is itself JSON and converts to the same double */
		st2 = jcs_number(want, strlen(want), got2, &n);
		lines++;
		if (st != JCS_OK || strcmp(got, want) != 0 || st2 != JCS_OK ||
			strcmp(got2, want) != 0 || strtod(want, NULL) != d)
		{
			if (bad++ < 10)
				printf("numbers.tsv: %s (%s): got \"%s\" (status %d), expected \"%s\"\n",
					   line, text, st == JCS_OK ? got : "", (int) st, want);
		}
	}
	fclose(f);
	CHECK_MSG(bad == 0, "%ld of %ld number vectors failed", bad, lines);
	CHECK_MSG(lines >= 20000, "only %ld number vectors", lines);
}

/* documents.tsv: percent-encoded input and canonicalize's output */
static void
test_vectors_documents(void)
{
	FILE	   *f = fopen(VECTOR_DIR "documents.tsv", "r");
	size_t		cap = 1 << 20;
	char	   *line = malloc(cap);
	char	   *input = malloc(cap);
	long		lines = 0;
	long		bad = 0;
	outbuf		o = {0};
	outbuf		o2 = {0};

	CHECK_MSG(f != NULL, "cannot open %s", VECTOR_DIR "documents.tsv");
	if (f == NULL || line == NULL || input == NULL)
	{
		free(line);
		free(input);
		if (f != NULL)
			fclose(f);
		return;
	}
	while (fgets(line, (int) cap, f) != NULL)
	{
		char	   *tab;
		char	   *want;
		size_t		in_len = 0;
		size_t		i;
		jcs_parse_status pst;
		jcs_parse_status pst2;
		jcs_status	st;
		jcs_status	st2;

		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		tab = strchr(line, '\t');
		if (tab == NULL)
		{
			bad++;
			printf("documents.tsv: no tab in a line\n");
			continue;
		}
		*tab = '\0';
		want = tab + 1;
		for (i = 0; line[i] != '\0'; i++)
		{
			if (line[i] == '%' && line[i + 1] != '\0' && line[i + 2] != '\0')
			{
				char		h[3];

				h[0] = line[i + 1];
				h[1] = line[i + 2];
				h[2] = '\0';
				input[in_len++] = (char) strtol(h, NULL, 16);
				i += 2;
			}
			else
				input[in_len++] = line[i];
		}
		lines++;
		st = canon(input, in_len, &o, NULL, &pst);
		/* the expected text is canonical: it canonicalizes to itself */
		st2 = canon(want, strlen(want), &o2, NULL, &pst2);
		if (pst != JCS_PARSE_OK || st != JCS_OK || strcmp(o.data, want) != 0 ||
			pst2 != JCS_PARSE_OK || st2 != JCS_OK || strcmp(o2.data, want) != 0)
		{
			if (bad++ < 5)
				printf("documents.tsv line %ld: parse %d, status %d\n  got      %s\n  expected %s\n",
					   lines, (int) pst, (int) st, o.data, want);
		}
	}
	fclose(f);
	CHECK_MSG(bad == 0, "%ld of %ld document vectors failed", bad, lines);
	CHECK_MSG(lines >= 300, "only %ld document vectors", lines);
	free(line);
	free(input);
	free(o.data);
	free(o2.data);
}

/*
 * A random key of up to 6 characters (24 bytes) of every UTF-8 length;
 * returns its length.
 */
static size_t
random_key(char *buf)
{
	uint64_t	r = rng_next();
	int			nchars = (int) (r % 7);
	size_t		n = 0;
	int			i;

	for (i = 0; i < nchars; i++)
	{
		uint64_t	x = rng_next();
		unsigned long cp;

		switch (x % 6)
		{
			case 0:
				cp = 0x61 + (x >> 8) % 3;	/* a, b, c: many shared prefixes */
				break;
			case 1:
				cp = (x >> 8) % 0x80;
				break;
			case 2:
				cp = 0x80 + (x >> 8) % (0x800 - 0x80);
				break;
			case 3:
				cp = 0x800 + (x >> 8) % (0xD800 - 0x800);
				break;
			case 4:
				cp = 0xE000 + (x >> 8) % 0x2000;
				break;
			default:
				cp = 0x10000 + (x >> 8) % 0x100000;
				break;
		}
		n += jcs_ref_utf8_encode(cp, buf + n);
	}
	return n;
}

#define SIGN(x) ((x) < 0 ? -1 : (x) > 0 ? 1 : 0)

static void
test_compare_keys(void)
{
	static const struct
	{
		const char *a;
		const char *b;
		int			sign;
	}			cases[] = {
		{"", "", 0},
		{"", "a", -1},
		{"a", "", 1},
		{"a", "a", 0},
		{"a", "ab", -1},
		{"ab", "a", 1},
		{"a", "b", -1},
		{"B", "a", -1},
		{"\x7F", "\xC2\x80", -1},
		{"\xC3\xB6", "\xE2\x82\xAC", -1},
		/* U+FFFF (EF BF BF) vs U+10000 (F0 90 80 80): UTF-16 puts the latter first */
		{"\xF0\x90\x80\x80", "\xEF\xBF\xBF", -1},
		{"\xEF\xBF\xBF", "\xF0\x90\x80\x80", 1},
		/* U+E000 (EE 80 80) vs U+1F600 */
		{"\xF0\x9F\x98\x80", "\xEE\x80\x80", -1},
		{"\xF4\x8F\xBF\xBF", "\xEE\x80\x80", -1},
		{"\xEE\x80\x80", "\xEF\xBF\xBF", -1},
		/* U+D7FF (ED 9F BF) is below every surrogate pair */
		{"\xED\x9F\xBF", "\xF0\x90\x80\x80", -1},
		/* U+FB33 after the emoji, as in RFC 8785 3.2.3 */
		{"\xF0\x9F\x98\x80", "\xEF\xAC\xB3", -1},
		{"\xE2\x82\xAC", "\xF0\x9F\x98\x80", -1},
		/* after a common prefix, and prefixes of astral strings */
		{"x\xF0\x9F\x98\x80", "x\xEF\xBF\xBD", -1},
		{"x\xF0\x9F\x98\x80", "x\xF0\x9F\x98\x80y", -1},
		{"x\xF0\x9F\x98\x81", "x\xF0\x9F\x98\x80y", 1},
		{"\xF0\x90\x80\x80", "\xF0\x90\x80\x81", -1},
		{"\xF0\x9F\x98\x80", "\xF1\x80\x80\x80", -1},
	};
	size_t		i;
	long		bad = 0;
	int			r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		int			got = jcs_compare_keys(cases[i].a, strlen(cases[i].a),
										   cases[i].b, strlen(cases[i].b));
		int			ref = jcs_ref_compare_keys(cases[i].a, strlen(cases[i].a),
											   cases[i].b, strlen(cases[i].b));

		CHECK_MSG(SIGN(got) == cases[i].sign && SIGN(ref) == cases[i].sign,
				  "case %zu: jcs_compare_keys %d, reference %d, expected %d",
				  i, got, ref, cases[i].sign);
	}
	/* NULL with length 0 */
	CHECK(jcs_compare_keys(NULL, 0, NULL, 0) == 0);
	CHECK(jcs_compare_keys(NULL, 0, "a", 1) < 0);

	for (r = 0; r < 200000; r++)
	{
		char		a[32];
		char		b[64];			/* a prefix of a and a random key */
		size_t		alen = random_key(a);
		size_t		blen;
		int			got;
		int			ref;

		/* half of the pairs share a prefix */
		if (r & 1)
		{
			blen = random_key(b);
		}
		else
		{
			size_t		keep = alen ? (size_t) (rng_next() % (alen + 1)) : 0;

			/* keep whole characters: cut at a lead byte */
			while (keep > 0 && keep < alen && ((unsigned char) a[keep] & 0xC0) == 0x80)
				keep--;
			memcpy(b, a, keep);
			blen = keep + random_key(b + keep);
		}
		got = jcs_compare_keys(a, alen, b, blen);
		ref = jcs_ref_compare_keys(a, alen, b, blen);
		if (SIGN(got) != SIGN(ref) ||
			SIGN(jcs_compare_keys(b, blen, a, alen)) != -SIGN(ref))
			bad++;
	}
	CHECK_MSG(bad == 0, "%ld random key pairs ordered differently", bad);
}

/* big objects (the heapsort path) and the insertion sort's boundary */
static void
test_sort_large(void)
{
	static const size_t sizes[] = {0, 1, 2, 15, 16, 17, 18, 100, 1000, 5000};
	size_t		si;

	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
	{
		size_t		count = sizes[si];
		jcs_member *m = calloc(count + 1, sizeof(jcs_member));
		char	   *keys = malloc((count + 1) * 32);
		jcs_value	nul;
		jcs_value	obj;
		outbuf		o = {0};
		jcs_status	st;
		size_t		i;
		size_t		made = 0;
		bool		sorted = true;
		bool		dup_seen = false;

		if (m == NULL || keys == NULL)
		{
			CHECK(false);
			free(m);
			free(keys);
			return;
		}
		memset(&nul, 0, sizeof(nul));
		nul.type = JCS_NULL;
		/* distinct keys: a random key with the index appended */
		for (i = 0; i < count; i++)
		{
			char	   *k = keys + i * 32;
			size_t		len = random_key(k);

			/* a fixed-width suffix keeps the keys distinct */
			len += (size_t) sprintf(k + len, "%05zu", i);
			m[made].key = k;
			m[made].keylen = len;
			m[made].value = &nul;
			made++;
		}
		memset(&obj, 0, sizeof(obj));
		obj.type = JCS_OBJECT;
		obj.count = made;
		obj.members = m;
		st = jcs_write(&obj, out_append, &o, NULL);
		CHECK(st == JCS_OK);
		for (i = 1; i < made; i++)
		{
			if (jcs_ref_compare_keys(m[i - 1].key, m[i - 1].keylen,
									 m[i].key, m[i].keylen) >= 0)
				sorted = false;
		}
		CHECK_MSG(sorted, "%zu members not in UTF-16 order", made);

		/* a duplicate anywhere is found */
		if (made >= 2)
		{
			jcs_error	err;

			m[(made - 1) / 2].key = m[made - 1].key;
			m[(made - 1) / 2].keylen = m[made - 1].keylen;
			out_reset(&o);
			st = jcs_write(&obj, out_append, &o, &err);
			dup_seen = st == JCS_ERR_DUPLICATE_KEY && err.key != NULL;
			CHECK_MSG(dup_seen, "%zu members: duplicate not found (status %d)",
					  made, (int) st);
		}
		free(o.data);
		free(m);
		free(keys);
	}
}

/* output reaches the append function in long runs, whatever its size */
static void
test_append_runs(void)
{
	size_t		len = 100000;
	char	   *s = malloc(len);
	jcs_value	v;
	jcs_value	items[300];
	jcs_value  *ptrs[300];
	jcs_value	arr;
	outbuf		o = {0};
	size_t		i;

	if (s == NULL)
	{
		CHECK(s != NULL);
		return;
	}
	memset(s, 'x', len);
	memset(&v, 0, sizeof(v));
	v.type = JCS_STRING;
	v.text = s;
	v.len = len;
	CHECK(jcs_write(&v, out_append, &o, NULL) == JCS_OK);
	CHECK(o.len == len + 2 && o.data[0] == '"' && o.data[len + 1] == '"');
	CHECK_MSG(o.calls <= 3, "%d calls for one long string", o.calls);

	/* many small tokens are collected into few calls */
	for (i = 0; i < 300; i++)
	{
		memset(&items[i], 0, sizeof(items[i]));
		items[i].type = JCS_NUMBER;
		items[i].text = "123.25";
		items[i].len = 6;
		ptrs[i] = &items[i];
	}
	memset(&arr, 0, sizeof(arr));
	arr.type = JCS_ARRAY;
	arr.count = 300;
	arr.items = ptrs;
	out_reset(&o);
	CHECK(jcs_write(&arr, out_append, &o, NULL) == JCS_OK);
	CHECK(o.len == 2 + 300 * 6 + 299);
	CHECK_MSG(o.calls <= 4, "%d calls for 300 numbers", o.calls);

	/* a long string with escapes every so often */
	for (i = 0; i < len; i += 1000)
		s[i] = '\n';
	out_reset(&o);
	CHECK(jcs_write(&v, out_append, &o, NULL) == JCS_OK);
	CHECK(o.len == len + 2 + len / 1000);
	CHECK(o.calls < 300);
	free(s);
	free(o.data);
}

/* the test parser itself */
static void
test_parser(void)
{
	static const struct
	{
		const char *text;
		jcs_parse_status st;
	}			cases[] = {
		{"", JCS_PARSE_SYNTAX},
		{" ", JCS_PARSE_SYNTAX},
		{"[1,]", JCS_PARSE_SYNTAX},
		{"{\"a\":1,}", JCS_PARSE_SYNTAX},
		{"[,1]", JCS_PARSE_SYNTAX},
		{"{,}", JCS_PARSE_SYNTAX},
		{"{\"a\" 1}", JCS_PARSE_SYNTAX},
		{"{a:1}", JCS_PARSE_SYNTAX},
		{"{'a':1}", JCS_PARSE_SYNTAX},
		{"[1 2]", JCS_PARSE_SYNTAX},
		{"01", JCS_PARSE_SYNTAX},
		{"-01", JCS_PARSE_SYNTAX},
		{"1.", JCS_PARSE_SYNTAX},
		{".5", JCS_PARSE_SYNTAX},
		{"+1", JCS_PARSE_SYNTAX},
		{"1e", JCS_PARSE_SYNTAX},
		{"NaN", JCS_PARSE_SYNTAX},
		{"Infinity", JCS_PARSE_SYNTAX},
		{"nul", JCS_PARSE_SYNTAX},
		{"True", JCS_PARSE_SYNTAX},
		{"1 2", JCS_PARSE_SYNTAX},
		{"[1]]", JCS_PARSE_SYNTAX},
		{"[1", JCS_PARSE_SYNTAX},
		{"\"abc", JCS_PARSE_SYNTAX},
		{"\"a\nb\"", JCS_PARSE_SYNTAX},
		{"\"a\tb\"", JCS_PARSE_SYNTAX},
		{"\"\\x\"", JCS_PARSE_SYNTAX},
		{"\"\\u12\"", JCS_PARSE_SYNTAX},
		{"\"\\u12G4\"", JCS_PARSE_SYNTAX},
		{"\"\\\"", JCS_PARSE_SYNTAX},
		{"\"\\ud800\"", JCS_PARSE_SURROGATE},
		{"\"\\udc00\"", JCS_PARSE_SURROGATE},
		{"\"\\ud800\\u0041\"", JCS_PARSE_SURROGATE},
		{"\"\\ud800x\"", JCS_PARSE_SURROGATE},
		{"\"\\udbff\\udfff\"", JCS_PARSE_OK},
		{"\"\\uD83D\\uDE00\"", JCS_PARSE_OK},
		{"\xEF\xBB\xBF{}", JCS_PARSE_SYNTAX},	/* no byte order mark */
		{"[1]\x0B", JCS_PARSE_SYNTAX},
		{"\f1", JCS_PARSE_SYNTAX},
		{"/* */1", JCS_PARSE_SYNTAX},
		{" \t\r\n[ \t\r\n1 \t\r\n] \t\r\n", JCS_PARSE_OK},
		{"\"\xC3\xA9\"", JCS_PARSE_OK},
		{"\"\xC3\"", JCS_PARSE_UTF8},
		{"\"\xED\xA0\x80\"", JCS_PARSE_UTF8},
		{"{\"a\":1,\"a\":2}", JCS_PARSE_OK},
		{"-0.0e-0", JCS_PARSE_OK},
		{"\"\x7F\"", JCS_PARSE_OK},
	};
	size_t		i;
	jcs_value  *root;
	jcs_parse_arena *arena;
	size_t		errpos = 0;
	char	   *deep;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		jcs_parse_status st = jcs_parse(cases[i].text, strlen(cases[i].text),
										100, 0, &root, &arena, NULL);

		CHECK_MSG(st == cases[i].st, "parse \"%s\": %d, expected %d",
				  cases[i].text, (int) st, (int) cases[i].st);
		if (st == JCS_PARSE_OK)
			jcs_parse_free(arena);
		else
			CHECK(root == NULL && arena == NULL);
	}

	/* duplicate keys are kept, in order */
	CHECK(jcs_parse("{\"a\":1,\"a\":2}", 13, 10, 0, &root, &arena, NULL) == JCS_PARSE_OK);
	CHECK(root->type == JCS_OBJECT && root->count == 2 &&
		  root->members[0].keylen == 1 && root->members[1].keylen == 1 &&
		  root->members[0].value->text[0] == '1' &&
		  root->members[1].value->text[0] == '2');
	jcs_parse_free(arena);

	/* the tree: types, texts, unescaped strings with NULs */
	{
		const char *in = "[null,true,false,-1.5e3,\"a\\u0000\\u00e9\",{\"k\\/\":[]}]";

		CHECK(jcs_parse(in, strlen(in), 10, 0, &root, &arena, NULL) == JCS_PARSE_OK);
		CHECK(root->type == JCS_ARRAY && root->count == 6);
		CHECK(root->items[0]->type == JCS_NULL && root->items[1]->type == JCS_TRUE &&
			  root->items[2]->type == JCS_FALSE);
		CHECK(root->items[3]->type == JCS_NUMBER && root->items[3]->len == 6 &&
			  memcmp(root->items[3]->text, "-1.5e3", 6) == 0);
		CHECK(root->items[4]->type == JCS_STRING && root->items[4]->len == 4 &&
			  memcmp(root->items[4]->text, "a\0\xC3\xA9", 4) == 0);
		CHECK(root->items[5]->type == JCS_OBJECT && root->items[5]->count == 1 &&
			  root->items[5]->members[0].keylen == 2 &&
			  memcmp(root->items[5]->members[0].key, "k/", 2) == 0 &&
			  root->items[5]->members[0].value->type == JCS_ARRAY &&
			  root->items[5]->members[0].value->count == 0);
		jcs_parse_free(arena);
	}

	/* the nesting limit: 1000 levels pass, 1001 do not */
	deep = malloc(2 * 1001 + 1);
	if (deep != NULL)
	{
		for (i = 0; i < 1001; i++)
		{
			deep[i] = '[';
			deep[2 * 1001 - 1 - i] = ']';
		}
		CHECK(jcs_parse(deep + 1, 2 * 1000, 1000, 0, &root, &arena, NULL) == JCS_PARSE_OK);
		jcs_parse_free(arena);
		CHECK(jcs_parse(deep, 2 * 1001, 1000, 0, &root, &arena, &errpos) == JCS_PARSE_DEPTH);
		CHECK(errpos == 1000);
		free(deep);
	}
	/* bad UTF-8 passes through when allowed */
	CHECK(jcs_parse("\"\xFF\"", 3, 10, JCS_PARSE_ALLOW_BAD_UTF8, &root, &arena, NULL) == JCS_PARSE_OK);
	CHECK(root->type == JCS_STRING && root->len == 1);
	jcs_parse_free(arena);
	/* the error position */
	CHECK(jcs_parse("[1, 2,]", 7, 10, 0, &root, &arena, &errpos) == JCS_PARSE_SYNTAX);
	CHECK(errpos == 6);
	/* the reference formatter's own landmarks */
	{
		char		out[40];

		jcs_ref_number(1e21, 1, out);
		CHECK_STR_EQ(out, "1e+21");
		jcs_ref_number(1e20, 17, out);
		CHECK_STR_EQ(out, "100000000000000000000");
		jcs_ref_number(-1e-7, 5, out);
		CHECK_STR_EQ(out, "-1e-7");
		jcs_ref_number(1e-6, 1, out);
		CHECK_STR_EQ(out, "0.000001");
		jcs_ref_number(-0.0, 1, out);
		CHECK_STR_EQ(out, "0");
		jcs_ref_number(0x1p172, 1, out);
		CHECK_STR_EQ(out, "5.986310706507379e+51");
		jcs_ref_number(0x1p172, 17, out);
		CHECK_STR_EQ(out, "5.986310706507379e+51");
		jcs_ref_number(123.456, 3, out);
		CHECK_STR_EQ(out, "123.456");
		jcs_ref_number(0.1 + 0.2, 1, out);
		CHECK_STR_EQ(out, "0.30000000000000004");
		jcs_ref_number(5e-324, 17, out);
		CHECK_STR_EQ(out, "5e-324");
	}
}

int
main(void)
{
	test_rfc_appendix_b();
	test_rfc_examples();
	test_structure();
	test_escapes();
	test_utf8();
	test_errors();
	test_number_layout();
	test_number_huge();
	test_number_exponents();
	test_number_oracle();
	test_vectors_numbers();
	test_vectors_documents();
	test_compare_keys();
	test_sort_large();
	test_append_runs();
	test_parser();

	UNIT_DONE("test_jcs");
}
