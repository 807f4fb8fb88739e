/*-------------------------------------------------------------------------
 *
 * fuzz.h
 *		Helpers shared by the okno libFuzzer targets.
 *
 * Each target defines LLVMFuzzerTestOneInput().  A broken property is
 * reported with FUZZ_FAIL(), which prints what went wrong and aborts, so
 * libFuzzer treats it like a crash: it stops, saves the input as a crash
 * artifact and exits non-zero.
 *
 * test/fuzz/fuzz.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_FUZZ_H
#define OKNO_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rfc3339.h"

extern int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* report a broken property and abort (at least one argument after fmt) */
#define FUZZ_FAIL(...) \
	do { \
		fprintf(stderr, "%s:%d: property violated: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		abort(); \
	} while (0)

/*
 * A cursor over the fuzzer's bytes.  Reads past the end give zero bytes, so
 * that every input, however short, decodes to something.
 */
typedef struct fuzz_reader
{
	const uint8_t *data;
	size_t		size;
	size_t		pos;
} fuzz_reader;

static inline uint8_t
fuzz_u8(fuzz_reader *r)
{
	if (r->pos >= r->size)
		return 0;
	return r->data[r->pos++];
}

/* little-endian, zero-padded at the end of the input */
static inline uint64_t
fuzz_u64(fuzz_reader *r)
{
	uint64_t	v = 0;
	int			i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t) fuzz_u8(r) << (8 * i);
	return v;
}

static inline uint32_t
fuzz_u32(fuzz_reader *r)
{
	uint32_t	v = 0;
	int			i;

	for (i = 0; i < 4; i++)
		v |= (uint32_t) fuzz_u8(r) << (8 * i);
	return v;
}

static inline bool
fuzz_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Check that text[0..len) is okno's canonical UTC form of unix_us,
 *
 *		YYYY-MM-DDTHH:MM:SSZ			when unix_us is a whole second
 *		YYYY-MM-DDTHH:MM:SS.ffffffZ		otherwise (six digits, not all 0)
 *
 * that text[len] is the terminating NUL, and that parsing the text gives
 * unix_us back.  Aborts through FUZZ_FAIL() otherwise.
 */
static inline void
fuzz_check_utc_form(const char *text, size_t len, int64_t unix_us)
{
	static const char shape[] = "9999-99-99T99:99:99";
	int64_t		sub = unix_us % 1000000;
	int64_t		back = 0;
	rfc3339_status st;
	size_t		i;

	if (sub < 0)
		sub += 1000000;
	if (len != (sub == 0 ? 20u : 27u))
		FUZZ_FAIL("UTC text of %lld has length %zu", (long long) unix_us, len);
	if (text[len] != '\0')
		FUZZ_FAIL("UTC text of %lld is not NUL-terminated", (long long) unix_us);
	for (i = 0; i < sizeof(shape) - 1; i++)
	{
		if (shape[i] == '9' ? !fuzz_is_digit(text[i]) : text[i] != shape[i])
			FUZZ_FAIL("UTC text \"%s\" of %lld: bad byte at %zu",
					  text, (long long) unix_us, i);
	}
	if (sub != 0)
	{
		int64_t		f = 0;

		if (text[19] != '.')
			FUZZ_FAIL("UTC text \"%s\": no '.' before the fraction", text);
		for (i = 20; i < 26; i++)
		{
			if (!fuzz_is_digit(text[i]))
				FUZZ_FAIL("UTC text \"%s\": bad fraction digit at %zu", text, i);
			f = f * 10 + (text[i] - '0');
		}
		if (f != sub)
			FUZZ_FAIL("UTC text \"%s\": fraction %lld, expected %lld",
					  text, (long long) f, (long long) sub);
	}
	if (text[len - 1] != 'Z')
		FUZZ_FAIL("UTC text \"%s\" does not end with 'Z'", text);

	st = rfc3339_parse(text, len, &back);
	if (st != RFC3339_OK)
		FUZZ_FAIL("UTC text \"%s\" of %lld does not parse: status %d",
				  text, (long long) unix_us, (int) st);
	if (back != unix_us)
		FUZZ_FAIL("UTC text \"%s\" parses to %lld, not %lld",
				  text, (long long) back, (long long) unix_us);
}

/*
 * Format unix_us into a heap buffer of exactly RFC3339_UTC_MAXLEN + 1 bytes
 * (so that AddressSanitizer sees any write past the documented size) and
 * check the result with fuzz_check_utc_form().
 */
static inline void
fuzz_format_and_check(int64_t unix_us)
{
	char	   *buf = malloc(RFC3339_UTC_MAXLEN + 1);
	size_t		len;

	if (buf == NULL)
		abort();
	len = rfc3339_format_utc(unix_us, buf);
	if (len > RFC3339_UTC_MAXLEN)
		FUZZ_FAIL("rfc3339_format_utc(%lld) returned %zu", (long long) unix_us, len);
	fuzz_check_utc_form(buf, len, unix_us);
	free(buf);
}

#endif							/* OKNO_FUZZ_H */
