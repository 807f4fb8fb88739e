/*-------------------------------------------------------------------------
 *
 * jcs.h
 *		RFC 8785 JSON Canonicalization Scheme (JCS): the canonical writer.
 *
 * This module has no dependency on PostgreSQL headers; it only needs the
 * C99 standard headers, so that it can be unit-tested on its own.
 *
 * The caller builds a tree of jcs_value nodes (numbers as their JSON text,
 * strings as unescaped UTF-8) and jcs_write() appends its canonical text:
 * no whitespace, object members sorted by their keys' UTF-16 code units,
 * strings with the minimal escapes, numbers as ECMAScript writes them.
 *
 * src/pure/jcs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_JCS_H
#define OKNO_JCS_H

#include <stddef.h>

typedef enum jcs_type
{
	JCS_NULL, JCS_FALSE, JCS_TRUE, JCS_NUMBER, JCS_STRING, JCS_ARRAY, JCS_OBJECT
} jcs_type;

typedef struct jcs_value jcs_value;

typedef struct jcs_member
{
	const char *key;			/* UTF-8, unescaped, not NUL-terminated */
	size_t		keylen;
	jcs_value  *value;
} jcs_member;

struct jcs_value
{
	jcs_type	type;
	const char *text;			/* JCS_NUMBER: the number as JSON number text
								 * (RFC 8259 grammar, e.g. "-12.50e3");
								 * JCS_STRING: UTF-8 bytes, unescaped */
	size_t		len;			/* of text */
	size_t		count;			/* JCS_ARRAY: items; JCS_OBJECT: members */
	jcs_value **items;			/* JCS_ARRAY */
	jcs_member *members;		/* JCS_OBJECT: jcs_write sorts them in place */
};

typedef enum jcs_status
{
	JCS_OK = 0,
	JCS_ERR_NUMBER_RANGE,		/* magnitude beyond IEEE-754 double: overflows to
								 * infinity, or is non-zero and rounds to zero */
	JCS_ERR_NUMBER_SYNTAX,		/* not RFC 8259 number text */
	JCS_ERR_UTF8,				/* a string or key is not valid UTF-8 (incl.
								 * surrogate code points, overlongs) */
	JCS_ERR_DUPLICATE_KEY		/* two members of one object have equal keys */
} jcs_status;

typedef struct jcs_error
{
	jcs_status	status;
	const jcs_value *value;		/* the offending number or string, or NULL */
	const char *key;			/* the offending (duplicate / bad) key, or NULL */
	size_t		keylen;
} jcs_error;

/* appends len bytes; the writer calls it with runs, not byte by byte */
typedef void (*jcs_append_fn) (void *arg, const char *data, size_t len);

/* longest output of jcs_number, without a NUL: "-1.2345678901234567e-308" etc. */
#define JCS_NUMBER_MAXLEN 32

/* RFC 8785 canonical form of value, appended through append; sorts every
 * object's members in place.  On an error returns its status and fills err
 * (err may be NULL); what was appended before the error is garbage.
 * Recursive: the caller bounds the tree's depth. */
extern jcs_status jcs_write(jcs_value *value, jcs_append_fn append, void *arg,
							jcs_error *err);

/* ECMAScript Number::toString of the IEEE-754 double nearest to the JSON
 * number text (len bytes, not NUL-terminated); writes at most
 * JCS_NUMBER_MAXLEN bytes plus a NUL into out, stores the length (without
 * NUL) in *outlen. */
extern jcs_status jcs_number(const char *text, size_t len,
							 char out[JCS_NUMBER_MAXLEN + 1], size_t *outlen);

/* <0, 0, >0: key order of RFC 8785 (UTF-16 code units, which differs from
 * UTF-8 byte order only for characters above U+FFFF vs U+E000..U+FFFF).
 * Inputs are valid UTF-8. */
extern int	jcs_compare_keys(const char *a, size_t alen, const char *b, size_t blen);

#endif							/* OKNO_JCS_H */
