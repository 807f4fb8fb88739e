/*-------------------------------------------------------------------------
 *
 * okno.c
 *	  The module entry: PG_MODULE_MAGIC and _PG_init, which lets each group
 *	  define its settings and register its callbacks.
 *
 * The code is grouped by the path the data takes (docs/DESIGN.md, "The
 * code"), each group's header saying what it owns and may call:
 *
 *	pure/		RFC 3339, a booking's form, RFC 8785, UUID version 7, the
 *				rule of okno's names: no PostgreSQL
 *	base/		the schema, the binding to the tables, kept plans, errors
 *	keys/		idempotency keys of any operation, their locks and tombstones
 *	booking/	a booking's steps: key, payload, fingerprint, lock, write
 *	outbox/		an event's write and the wake its commit sends
 *	delivery/	the drains, the wait, subscribers, failures, dead letters
 *	maintenance/	purge, verify, counts, the tables' creation and adoption
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "base/base.h"
#include "keys/keys.h"
#include "booking/booking.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	okno_base_init();
	okno_keys_init();
	okno_booking_init();
	okno_outbox_init();
	okno_delivery_init();
	/* after every okno.* setting is defined */
	MarkGUCPrefixReserved("okno");
}
