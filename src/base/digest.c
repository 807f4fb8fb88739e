/*-------------------------------------------------------------------------
 *
 * digest.c
 *	  SHA-256, through PostgreSQL's cryptohash API: the fingerprints of
 *	  requests and the identities of keys.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/cryptohash.h"
#include "common/sha2.h"

#include "base/base.h"

StaticAssertDecl(OKNO_SHA256_LEN == PG_SHA256_DIGEST_LENGTH,
				 "OKNO_SHA256_LEN is the length of a SHA-256 digest");

/*
 * The SHA-256 digest of len bytes at data, into digest.
 */
void
okno_sha256(const void *data, size_t len, uint8 digest[OKNO_SHA256_LEN])
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);

	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) data, len) < 0 ||
		pg_cryptohash_final(ctx, digest, OKNO_SHA256_LEN) < 0)
		elog(ERROR, "could not compute SHA-256: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
}

