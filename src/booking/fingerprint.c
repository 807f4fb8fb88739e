/*-------------------------------------------------------------------------
 *
 * fingerprint.c
 *	  A booking request's form and its SHA-256 fingerprint.
 *
 * pure/booking_form.c writes the form (pure C); this file hashes it with
 * SHA-256 (base/digest.c) and exposes both to SQL as okno_canonical()
 * and okno_fingerprint(), which validate their argument exactly as
 * okno_create_booking() does.
 *
 * Two forms, named by idempotency.fingerprint_version:
 *   1  okno's own: the instants in UTC;
 *   0  the course's: what its Python service stored before okno took the
 *      database over (or beside it), the instants at the offsets sent.
 * A key is always compared in the form it was stored under.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"
#include "pure/booking_form.h"

PG_FUNCTION_INFO_V1(okno_canonical);
PG_FUNCTION_INFO_V1(okno_fingerprint);
PG_FUNCTION_INFO_V1(okno_canonical_version);
PG_FUNCTION_INFO_V1(okno_fingerprint_version);

/* the largest buffer either form needs */
#define BOOKING_FORM_BUFLEN \
	(Max(OKNO_BOOKING_FORM_MAXLEN, OKNO_BOOKING_FORM_COURSE_MAXLEN) + 1)

/*
 * Whether this library computes fingerprint version 'version'.
 */
bool
okno_fingerprint_known(int version)
{
	return version == OKNO_FINGERPRINT_VERSION || version == OKNO_FINGERPRINT_COURSE;
}

/*
 * Write in's form of the given version into buf (BOOKING_FORM_BUFLEN
 * bytes); return its length.
 */
static size_t
booking_form(const OknoBookingIn *in, int version, char *buf)
{
	if (version == OKNO_FINGERPRINT_COURSE)
		return okno_booking_form_write_course(buf, in->resource_id,
											  in->starts_us, in->starts_offset,
											  in->ends_us, in->ends_offset);
	if (version != OKNO_FINGERPRINT_VERSION)
		elog(ERROR, "unknown fingerprint version %d", version);
	return okno_booking_form_write(buf, in->resource_id, in->starts_us, in->ends_us);
}

/*
 * Write the lowercase hex SHA-256 of in's form of the given version into
 * hex.
 */
void
okno_fingerprint_hex(const OknoBookingIn *in, int version,
					 char hex[OKNO_FINGERPRINT_LEN + 1])
{
	char		form[BOOKING_FORM_BUFLEN];
	size_t		len;
	uint8		digest[OKNO_SHA256_LEN];

	len = booking_form(in, version, form);
	okno_sha256(form, len, digest);
	hex[hex_encode((const char *) digest, sizeof(digest), hex)] = '\0';
}

/*
 * The version argument of the two-argument forms: 0 or 1, else 22023.
 */
static int
version_arg(FunctionCallInfo fcinfo, int argno)
{
	int			version;

	okno_require_arg(fcinfo, argno, "fingerprint_version", ERRCODE_INVALID_PARAMETER_VALUE,
					 "Pass 1 for okno's form or 0 for the course's.");
	version = PG_GETARG_INT16(argno);
	if (!okno_fingerprint_known(version))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fingerprint version %d is not known", version),
				 errhint("Pass 1 for okno's form or 0 for the course's.")));
	return version;
}

/* okno_canonical's result: the payload's form of the given version */
static Datum
form_text(FunctionCallInfo fcinfo, int version)
{
	OknoBookingIn in;
	char		form[BOOKING_FORM_BUFLEN];
	size_t		len;

	okno_parse_payload(PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0), &in);
	len = booking_form(&in, version, form);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(form, (int) len));
}

/* okno_fingerprint's result: the SHA-256 of that form, in hex */
static Datum
fingerprint(FunctionCallInfo fcinfo, int version)
{
	OknoBookingIn in;
	char		hex[OKNO_FINGERPRINT_LEN + 1];

	okno_parse_payload(PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0), &in);
	okno_fingerprint_hex(&in, version, hex);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(hex, OKNO_FINGERPRINT_LEN));
}

/*
 * okno_canonical(payload jsonb) RETURNS text
 */
Datum
okno_canonical(PG_FUNCTION_ARGS)
{
	return form_text(fcinfo, OKNO_FINGERPRINT_VERSION);
}

/*
 * okno_fingerprint(payload jsonb) RETURNS text
 */
Datum
okno_fingerprint(PG_FUNCTION_ARGS)
{
	return fingerprint(fcinfo, OKNO_FINGERPRINT_VERSION);
}

/*
 * okno_canonical(payload jsonb, fingerprint_version smallint) RETURNS text
 */
Datum
okno_canonical_version(PG_FUNCTION_ARGS)
{
	int			version = version_arg(fcinfo, 1);

	return form_text(fcinfo, version);
}

/*
 * okno_fingerprint(payload jsonb, fingerprint_version smallint) RETURNS text
 */
Datum
okno_fingerprint_version(PG_FUNCTION_ARGS)
{
	int			version = version_arg(fcinfo, 1);

	return fingerprint(fcinfo, version);
}
