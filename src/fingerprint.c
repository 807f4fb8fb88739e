/*-------------------------------------------------------------------------
 *
 * fingerprint.c
 *	  The canonical text of a booking request and its SHA-256 fingerprint.
 *
 * canonical.c writes the text (pure C); this file hashes it with
 * PostgreSQL's cryptohash API and exposes both to SQL as okno_canonical()
 * and okno_fingerprint(), which validate their argument exactly as
 * okno_create_booking() does.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/cryptohash.h"
#include "common/sha2.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "okno.h"
#include "canonical.h"

PG_FUNCTION_INFO_V1(okno_canonical);
PG_FUNCTION_INFO_V1(okno_fingerprint);

/*
 * Write the lowercase hex SHA-256 of in's canonical text into hex.
 */
void
okno_fingerprint_hex(const OknoBookingIn *in, char hex[OKNO_FINGERPRINT_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	char		canon[OKNO_CANONICAL_MAXLEN + 1];
	size_t		len;
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	pg_cryptohash_ctx *ctx;
	int			i;

	len = okno_canonical_write(canon, in->resource_id, in->starts_us, in->ends_us);

	ctx = pg_cryptohash_create(PG_SHA256);
	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) canon, len) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute SHA-256 fingerprint: %s",
			 pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);

	for (i = 0; i < PG_SHA256_DIGEST_LENGTH; i++)
	{
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 0x0F];
	}
	hex[OKNO_FINGERPRINT_LEN] = '\0';
}

/*
 * okno_canonical(payload jsonb) RETURNS text
 */
Datum
okno_canonical(PG_FUNCTION_ARGS)
{
	OknoBookingIn in;
	char		canon[OKNO_CANONICAL_MAXLEN + 1];
	size_t		len;

	okno_parse_payload(PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0), &in);
	len = okno_canonical_write(canon, in.resource_id, in.starts_us, in.ends_us);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(canon, (int) len));
}

/*
 * okno_fingerprint(payload jsonb) RETURNS text
 */
Datum
okno_fingerprint(PG_FUNCTION_ARGS)
{
	OknoBookingIn in;
	char		hex[OKNO_FINGERPRINT_LEN + 1];

	okno_parse_payload(PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0), &in);
	okno_fingerprint_hex(&in, hex);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(hex, OKNO_FINGERPRINT_LEN));
}
