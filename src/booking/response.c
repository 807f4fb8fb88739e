/*-------------------------------------------------------------------------
 *
 * response.c
 *	  The jsonb documents okno stores and returns.
 *
 * The booking card, stored in idempotency.response_body and returned:
 *   {"id": N, "resource_id": R, "actor_id": A,
 *    "starts_at": "...Z", "ends_at": "...Z", "status": "confirmed"}
 * with both instants in the UTC form rfc3339_format_utc writes, so no session
 * setting shows through.  The event payload: {"booking_id": N}.
 *
 * Both are built as JsonbValues and turned into jsonb once; nothing goes
 * through text.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/numeric.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"
#include "pure/rfc3339.h"

static void
push_key(JsonbParseState **state, const char *key)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) key;
	v.val.string.len = strlen(key);
	(void) pushJsonbValue(state, WJB_KEY, &v);
}

static void
push_int(JsonbParseState **state, const char *key, int64 value)
{
	JsonbValue	v;

	push_key(state, key);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(value);
	(void) pushJsonbValue(state, WJB_VALUE, &v);
}

static void
push_string(JsonbParseState **state, const char *key, const char *value)
{
	JsonbValue	v;

	push_key(state, key);
	v.type = jbvString;
	v.val.string.val = (char *) value;
	v.val.string.len = strlen(value);
	(void) pushJsonbValue(state, WJB_VALUE, &v);
}

static void
push_instant(JsonbParseState **state, const char *key, int64 unix_us)
{
	char		buf[RFC3339_UTC_MAXLEN + 1];

	(void) rfc3339_format_utc(unix_us, buf);
	push_string(state, key, pstrdup(buf));
}

/*
 * The booking card, palloc'd in the current memory context.
 */
Jsonb *
okno_booking_card(int64 id, int32 actor, const OknoBookingIn *in, const char *status)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;

	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	push_int(&state, "id", id);
	push_int(&state, "resource_id", in->resource_id);
	push_int(&state, "actor_id", actor);
	push_instant(&state, "starts_at", in->starts_us);
	push_instant(&state, "ends_at", in->ends_us);
	push_string(&state, "status", status);
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

/*
 * The payload of a booking event, palloc'd in the current memory context.
 */
Jsonb *
okno_event_payload(int64 booking_id)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;

	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	push_int(&state, "booking_id", booking_id);
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}
