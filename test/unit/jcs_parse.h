/*-------------------------------------------------------------------------
 *
 * jcs_parse.h
 *		Test code only: a strict JSON text parser that builds the jcs_value
 *		tree of src/pure/jcs.h, and a slow reference for jcs_number().
 *
 * Used by test/unit/test_jcs.c and test/fuzz/fuzz_jcs.c; not part of the
 * extension, where PostgreSQL's own parser builds the tree.
 *
 * test/unit/jcs_parse.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_JCS_PARSE_H
#define OKNO_JCS_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "jcs.h"

typedef enum jcs_parse_status
{
	JCS_PARSE_OK = 0,
	JCS_PARSE_SYNTAX,			/* not RFC 8259 JSON text */
	JCS_PARSE_DEPTH,			/* arrays and objects nested too deep */
	JCS_PARSE_SURROGATE,		/* a \u escape of an unpaired surrogate */
	JCS_PARSE_UTF8,				/* a string is not UTF-8 (unless allowed) */
	JCS_PARSE_NOMEM				/* malloc failed */
} jcs_parse_status;

/* pass a string's raw bytes through unchecked, for jcs_write to judge */
#define JCS_PARSE_ALLOW_BAD_UTF8	0x1

/* the memory of one parsed tree */
typedef struct jcs_parse_arena jcs_parse_arena;

/*
 * Parse text[0..len) (one JSON value between optional whitespace) into a
 * tree.  Numbers point into text, which must outlive the tree; strings and
 * keys are unescaped into the arena.  Duplicate keys are kept, in their
 * order.  On success *root is the tree and *arena owns it (free it with
 * jcs_parse_free); on failure nothing is left allocated and *errpos, if
 * errpos is not NULL, is the byte offset where parsing stopped.
 */
extern jcs_parse_status jcs_parse(const char *text, size_t len, int max_depth,
								  unsigned flags, jcs_value **root,
								  jcs_parse_arena **arena, size_t *errpos);
extern void jcs_parse_free(jcs_parse_arena *arena);

/* code point cp as UTF-8 into buf (4 bytes at most); the bytes written */
extern size_t jcs_ref_utf8_encode(unsigned long cp, char *buf);

/* whether s[0..len) is valid UTF-8 (decoded code point by code point) */
extern bool jcs_ref_utf8_valid(const char *s, size_t len);

/* the reference for jcs_compare_keys: via UTF-16 (valid UTF-8 only) */
extern int	jcs_ref_compare_keys(const char *a, size_t alen, const char *b,
								 size_t blen);

/*
 * The reference for jcs_number: ECMAScript's Number::toString of the
 * finite double d, found slowly (precision by precision from hint, which
 * may be any of 1..17, three candidates each).  out needs 40 bytes;
 * returns the length.
 */
extern size_t jcs_ref_number(double d, int hint, char *out);

#endif							/* OKNO_JCS_PARSE_H */
