/*-------------------------------------------------------------------------
 *
 * drain.c
 *	  The SQL drains, okno_drain_once() and okno_drain(n), with or without
 *	  a subscriber; and the delivery group's init.
 *
 * Each checks its arguments, makes the result set ready, lets the
 * subscriber's drain fill it (the default subscriber's from outbox,
 * drain_outbox.c; a named one's from okno_delivery, drain_subscriber.c)
 * and then watches that the caller reads every row it handed out
 * (handout.c): a cursor must read them all, or its transaction rolls back.
 *
 * An okno installed at 0.1.0 binds its SQL function okno_drain_once() to
 * the C symbol okno_drain_once, which runs that version's query (its outbox
 * has no retry columns); every later version binds it to
 * okno_drain_once_0_2.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"

/* the most events one okno_drain() hands out */
#define OKNO_DRAIN_MAX	10000

/* whose events a drain hands out */
typedef enum DrainOf
{
	DRAIN_0_1,					/* okno 0.1.0's default subscriber */
	DRAIN_DEFAULT,				/* the default subscriber */
	DRAIN_NAMED					/* the subscriber named by argument argno */
} DrainOf;

PG_FUNCTION_INFO_V1(okno_drain_once);
PG_FUNCTION_INFO_V1(okno_drain_once_0_2);
PG_FUNCTION_INFO_V1(okno_drain);

/*
 * Define the group's settings and register its callbacks.
 */
void
okno_delivery_init(void)
{
	okno_failure_init();
	okno_drain_outbox_init();
	okno_handout_init();
	okno_wait_init();
}

/*
 * Drain up to max_events events into the function's result set, the first
 * ncols columns of each, and watch that they are all read.
 */
static void
drain(FunctionCallInfo fcinfo, const char *fname, DrainOf of, int argno,
	  int32 max_events, int ncols)
{
	char	   *subscriber = NULL;
	const OknoDeliveryRoutine *r;
	uint64		n;

	PreventCommandIfReadOnly(fname);
	/* NULL: the default one; whether another exists, its drain finds out */
	if (of == DRAIN_NAMED)
	{
		subscriber = okno_subscriber_named(fcinfo, argno, fname);
	}
	okno_require_outbox_buckets(okno_binding(), fname);
	r = okno_delivery_routine(subscriber, NULL, NULL);
	/* named subscribers only where Citus has them too (fan_out.c) */
	if (r == &okno_named_routine && okno_binding()->citus[OKNO_REL_OUTBOX])
		okno_refuse_on_citus(psprintf("%s with a subscriber", fname));

	InitMaterializedSRF(fcinfo, 0);
	if (of == DRAIN_0_1)
		n = okno_drain_outbox_0_1((ReturnSetInfo *) fcinfo->resultinfo);
	else
		n = r->drain((ReturnSetInfo *) fcinfo->resultinfo, subscriber, max_events, ncols);

	/* a cursor must read them all, or its transaction rolls back */
	okno_handout_watch(fcinfo, fname, n);
}

/*
 * okno_drain_once() RETURNS TABLE(event_id uuid, kind text, payload jsonb),
 * as an okno installed at 0.1.0 defines it.
 */
Datum
okno_drain_once(PG_FUNCTION_ARGS)
{
	drain(fcinfo, "okno_drain_once()", DRAIN_0_1, 0, 1, 3);
	return (Datum) 0;
}

/*
 * okno_drain_once() RETURNS TABLE(event_id uuid, kind text, payload jsonb),
 * skipping parked and delayed events (every version after 0.1.0), and
 * okno_drain_once(subscriber text).
 */
Datum
okno_drain_once_0_2(PG_FUNCTION_ARGS)
{
	drain(fcinfo, "okno_drain_once()", PG_NARGS() > 0 ? DRAIN_NAMED : DRAIN_DEFAULT,
		  0, 1, 3);
	return (Datum) 0;
}

/*
 * okno_drain(max_events integer DEFAULT 100)
 *	 RETURNS TABLE(event_id uuid, kind text, payload jsonb, attempts integer)
 * and okno_drain(max_events integer, subscriber text)
 */
Datum
okno_drain(PG_FUNCTION_ARGS)
{
	int32		max_events;

	okno_require_arg(fcinfo, 0, "max_events", ERRCODE_INVALID_PARAMETER_VALUE,
					 "Pass a number of events from 1 to %d.", OKNO_DRAIN_MAX);
	max_events = PG_GETARG_INT32(0);
	if (max_events < 1 || max_events > OKNO_DRAIN_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_events must be between 1 and %d", OKNO_DRAIN_MAX),
				 errdetail("The value given was %d.", max_events)));

	drain(fcinfo, "okno_drain()", PG_NARGS() > 1 ? DRAIN_NAMED : DRAIN_DEFAULT,
		  1, max_events, 4);
	return (Datum) 0;
}
