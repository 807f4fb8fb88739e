/*-------------------------------------------------------------------------
 *
 * payload.c
 *	  jsonb booking payload -> OknoBookingIn, strictly.
 *
 * The payload must be a JSON object with exactly three keys:
 *   resource_id  a JSON number that is an integer from 1 to 2147483647,
 *                in any form (1, 1.0 and 1e0 all mean 1);
 *   starts_at    a JSON string, an RFC 3339 date-time with an offset;
 *   ends_at      likewise, and later than starts_at.
 *
 * The checks run in a fixed order, and the first that fails names its field
 * in the DETAIL: unknown keys (in jsonb's key order), then missing keys,
 * then resource_id, starts_at and ends_at, then the order of the instants.
 * The timestamps are parsed by rfc3339.c, never by PostgreSQL's timestamptz
 * input, so that no session setting (TimeZone, DateStyle) and no special
 * word (now, today, infinity, epoch) can change what a payload means.
 *
 * jsonb keeps only the last of duplicate keys, so {"resource_id":1,
 * "resource_id":2} arrives here as resource_id 2; docs/CHOICES.md says so.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "datatype/timestamp.h"
#include "mb/pg_wchar.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"
#include "pure/rfc3339.h"

#define FIELD_RESOURCE_ID	0
#define FIELD_STARTS_AT		1
#define FIELD_ENDS_AT		2
#define NUM_FIELDS			3

static const char *const field_names[NUM_FIELDS] = {
	"resource_id", "starts_at", "ends_at"
};

/* The JSON type of a value, for messages. */
static const char *
json_type_name(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "a string";
		case jbvNumeric:
			return "a number";
		case jbvBool:
			return "a boolean";
		case jbvBinary:
			return JsonContainerIsArray(v->val.binary.data) ? "an array" : "an object";
		case jbvArray:
			return "an array";
		case jbvObject:
			return "an object";
		default:
			return "an unknown type";
	}
}

static int
field_index(const JsonbValue *key)
{
	int			i;

	for (i = 0; i < NUM_FIELDS; i++)
	{
		if (strlen(field_names[i]) == (size_t) key->val.string.len &&
			memcmp(field_names[i], key->val.string.val, key->val.string.len) == 0)
			return i;
	}
	return -1;
}

static int32
parse_resource_id(const JsonbValue *v)
{
	Numeric		num;
	int32		result;
	bool		overflow = false;

	if (v->type != jbvNumeric)
		okno_error_invalid_payload(psprintf("Field \"resource_id\" must be a JSON number, not %s.",
											json_type_name(v)));
	num = v->val.numeric;

	/*
	 * numeric_int4_opt_error rounds, so a fraction is caught by converting
	 * the result back and comparing: 1.0 and 1e0 equal 1, 1.5 does not.
	 */
	result = numeric_int4_opt_error(num, &overflow);
	if (overflow || result < 1 ||
		!DatumGetBool(DirectFunctionCall2(numeric_eq, NumericGetDatum(num),
										  NumericGetDatum(int64_to_numeric(result)))))
		okno_error_invalid_payload("Field \"resource_id\" must be an integer from 1 to 2147483647.");
	return result;
}

static int64
parse_instant(const JsonbValue *v, const char *name, int16 *offset_minutes)
{
	rfc3339_status st;
	int64		unix_us;
	int			offset;

	if (v->type != jbvString)
		okno_error_invalid_payload(psprintf("Field \"%s\" must be a JSON string, not %s.",
											name, json_type_name(v)));
	st = rfc3339_parse_offset(v->val.string.val, v->val.string.len, &unix_us, &offset);
	if (st != RFC3339_OK)
		okno_error_invalid_payload(psprintf("Field \"%s\" is not a valid RFC 3339 date-time: %s.",
											name, rfc3339_status_detail(st)));
	*offset_minutes = (int16) offset;
	return unix_us;
}

/*
 * Validate payload and fill *out; raise invalid_payload on the first rule
 * that fails.  A NULL payload is invalid too.
 */
void
okno_parse_payload(Jsonb *payload, OknoBookingIn *out)
{
	JsonbValue	values[NUM_FIELDS];
	bool		seen[NUM_FIELDS] = {false, false, false};
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;
	int			current = -1;
	int			i;

	if (payload == NULL)
		okno_error_invalid_payload("The payload must not be null.");
	if (JB_ROOT_IS_SCALAR(payload))
	{
		(void) JsonbExtractScalar(&payload->root, &v);
		okno_error_invalid_payload(psprintf("The payload must be a JSON object, not %s.",
											json_type_name(&v)));
	}
	if (!JB_ROOT_IS_OBJECT(payload))
		okno_error_invalid_payload("The payload must be a JSON object, not an array.");

	it = JsonbIteratorInit(&payload->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			current = field_index(&v);
			if (current < 0)
				okno_error_invalid_payload(psprintf("Field \"%.*s\" is not allowed.",
													pg_mbcliplen(v.val.string.val,
																 v.val.string.len, 64),
													v.val.string.val));
		}
		else if (tok == WJB_VALUE)
		{
			Assert(current >= 0);
			values[current] = v;
			seen[current] = true;
		}
	}

	for (i = 0; i < NUM_FIELDS; i++)
	{
		if (!seen[i])
			okno_error_invalid_payload(psprintf("Field \"%s\" is missing.", field_names[i]));
	}

	out->resource_id = parse_resource_id(&values[FIELD_RESOURCE_ID]);
	out->starts_us = parse_instant(&values[FIELD_STARTS_AT], "starts_at",
								   &out->starts_offset);
	out->ends_us = parse_instant(&values[FIELD_ENDS_AT], "ends_at",
								 &out->ends_offset);

	if (out->starts_us >= out->ends_us)
		okno_error_invalid_payload("Field \"starts_at\" must be earlier than \"ends_at\".");
}
