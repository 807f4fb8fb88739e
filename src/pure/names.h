/*-------------------------------------------------------------------------
 *
 * names.h
 *		Forwards to name_rule.h, for src/outbox/emit.c only: remove this
 *		file once emit.c includes "pure/name_rule.h" instead.
 *
 * src/pure/names.h
 *
 *-------------------------------------------------------------------------
 */
#include "name_rule.h"
