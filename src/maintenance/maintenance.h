/*-------------------------------------------------------------------------
 *
 * maintenance.h
 *	  The maintenance group: SQL functions beside the data's path, which
 *	  nothing else in okno calls.
 *
 * Owns: creating and preparing the application's tables (tables.c),
 * the event trigger that keeps the tables an older okno adopted when okno
 * is dropped (adopt.c), retention (purge.c), the consistency
 * check (verify.c) and the outbox's counts for the views (counts.c).
 *
 * May call: keys (a key's identity and okno.key_tombstone_age), base and
 * pure; it reads the tables itself rather than through the booking or
 * delivery groups.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_MAINTENANCE_H
#define OKNO_MAINTENANCE_H

#include "base/base.h"

#endif							/* OKNO_MAINTENANCE_H */
