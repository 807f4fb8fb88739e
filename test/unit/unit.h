/*-------------------------------------------------------------------------
 *
 * unit.h
 *		Minimal assertion harness for the okno unit tests.
 *
 * Each test program includes this header once, runs its CHECKs and ends
 * main() with UNIT_DONE("name").  Every CHECK counts as one pass or one
 * failure; failures print the failing expression with file:line.  The last
 * line a program prints is "name: N passed, M failed", which the Makefile
 * sums up.
 *
 * test/unit/unit.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_UNIT_H
#define OKNO_UNIT_H

#include <stdio.h>
#include <string.h>

static int	unit_passed = 0;
static int	unit_failed = 0;

/* count one check; on failure print the expression */
#define CHECK(cond) \
	do { \
		if (cond) \
			unit_passed++; \
		else \
		{ \
			unit_failed++; \
			printf("%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

/* like CHECK, but also print a printf-style explanation (at least 1 arg) */
#define CHECK_MSG(cond, ...) \
	do { \
		if (cond) \
			unit_passed++; \
		else \
		{ \
			unit_failed++; \
			printf("%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__); \
			printf("\n"); \
		} \
	} while (0)

/* compare two int64 values, printing both on failure */
#define CHECK_I64_EQ(actual, expected) \
	do { \
		long long	unit_a_ = (long long) (actual); \
		long long	unit_e_ = (long long) (expected); \
		CHECK_MSG(unit_a_ == unit_e_, "got %lld, expected %lld", \
				  unit_a_, unit_e_); \
	} while (0)

/* compare two NUL-terminated strings, printing both on failure */
#define CHECK_STR_EQ(actual, expected) \
	do { \
		const char *unit_a_ = (actual); \
		const char *unit_e_ = (expected); \
		CHECK_MSG(strcmp(unit_a_, unit_e_) == 0, "got \"%s\", expected \"%s\"", \
				  unit_a_, unit_e_); \
	} while (0)

/* print the summary line and return the exit status from main() */
#define UNIT_DONE(name) \
	do { \
		printf("%s: %d passed, %d failed\n", (name), unit_passed, unit_failed); \
		return unit_failed == 0 ? 0 : 1; \
	} while (0)

#endif							/* OKNO_UNIT_H */
