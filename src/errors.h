/*-------------------------------------------------------------------------
 *
 * errors.h
 *	  okno's SQLSTATEs and the one helper that raises each domain error.
 *
 * Every domain error okno raises goes through one of these helpers, so the
 * SQLSTATE, the message and the shape of the DETAIL are defined once, in
 * errors.c.  The README maps the SQLSTATEs to HTTP statuses.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_ERRORS_H
#define OKNO_ERRORS_H

#include "postgres.h"

#include "okno.h"
#include "compat.h"

#define ERRCODE_OKNO_INVALID_KEY		MAKE_SQLSTATE('O','K','B','0','1')
#define ERRCODE_OKNO_INVALID_PAYLOAD	MAKE_SQLSTATE('O','K','B','0','2')
#define ERRCODE_OKNO_RESOURCE_MISSING	MAKE_SQLSTATE('O','K','B','0','3')
#define ERRCODE_OKNO_KEY_REUSED			MAKE_SQLSTATE('O','K','B','0','4')
#define ERRCODE_OKNO_SLOT_BUSY			MAKE_SQLSTATE('O','K','B','0','5')
#define ERRCODE_OKNO_ACTOR_MISSING		MAKE_SQLSTATE('O','K','B','0','6')
#define ERRCODE_OKNO_BOOKING_MISSING	MAKE_SQLSTATE('O','K','B','0','7')
#define ERRCODE_OKNO_EVENT_MISSING		MAKE_SQLSTATE('O','K','B','0','8')
#define ERRCODE_OKNO_SUBSCRIBER_MISSING	MAKE_SQLSTATE('O','K','B','0','9')
#define ERRCODE_OKNO_TABLES_UNFIT		MAKE_SQLSTATE('O','K','B','1','0')

/* The constraint whose violation is slot_busy; set on the error. */
#define OKNO_OVERLAP_CONSTRAINT "bookings_no_overlap"

pg_noreturn extern void okno_error_invalid_key(const char *detail);
pg_noreturn extern void okno_error_invalid_payload(const char *detail);
pg_noreturn extern void okno_error_resource_missing(int32 resource_id);
pg_noreturn extern void okno_error_key_reused(int32 actor, const char *key);
pg_noreturn extern void okno_error_slot_busy(int32 resource_id, const char *schema);
pg_noreturn extern void okno_error_actor_missing(int32 actor, bool isnull);
pg_noreturn extern void okno_error_booking_missing(int64 booking_id, bool isnull);
pg_noreturn extern void okno_error_event_missing(const char *event_id);
pg_noreturn extern void okno_error_subscriber_missing(const char *name);
pg_noreturn extern void okno_error_concurrent_request(int32 actor, const char *key);
pg_noreturn extern void okno_error_tables_unfit(const char *schema, const char *detail,
												bool missing);
pg_noreturn extern void okno_error_not_stored(OknoRel rel, const char *what);
pg_noreturn extern void okno_error_instead_rule(OknoRel rel, const char *what);

#endif							/* OKNO_ERRORS_H */
