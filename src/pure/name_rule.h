/*-------------------------------------------------------------------------
 *
 * name_rule.h
 *		The rule of okno's lower-case names: subscribers, event kinds,
 *		operations.
 *
 * This module has no dependency on PostgreSQL headers; it only needs the
 * C99 standard headers, so that it can be unit-tested on its own.
 *
 * src/pure/name_rule.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_NAME_RULE_H
#define OKNO_NAME_RULE_H

#include <stdbool.h>
#include <stddef.h>

extern bool okno_name_valid(const char *name, size_t len, size_t maxlen,
							const char *punct);

#endif							/* OKNO_NAME_RULE_H */
