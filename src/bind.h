/*-------------------------------------------------------------------------
 *
 * bind.h
 *	  okno's five tables as a session found them (bind.c), and what the
 *	  binding learnt about them beside their OIDs.
 *
 * okno.c keeps one binding per backend and binds again after any
 * invalidation of the tables; the error translation (create.c) and the
 * owner's guard (owner.c) read it through okno_binding().
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_BIND_H
#define OKNO_BIND_H

#include "postgres.h"

#include "okno.h"

/* the constraints whose violations okno translates into its errors */
typedef enum OknoCon
{
	OKNO_CON_KEY_UNIQUE,		/* idempotency's primary key */
	OKNO_CON_BOOKING_ACTOR,		/* bookings (actor_id) -> actors */
	OKNO_CON_BOOKING_RESOURCE,	/* bookings (resource_id) -> resources */
	OKNO_CON_KEY_ACTOR,			/* idempotency (actor_id) -> actors */
	OKNO_NUM_CONS
} OknoCon;

typedef struct OknoBinding
{
	Oid			relid[OKNO_NUM_TABLES];
	Oid			owner[OKNO_NUM_TABLES];
	Oid			pkey_index[OKNO_NUM_TABLES];
	/* the constraints' names ("" where the table has none) */
	char		con_names[OKNO_NUM_CONS][NAMEDATALEN];
	/* a deferrable trigger on a table okno writes, "table.trigger" or "" */
	char		deferred[2 * NAMEDATALEN + 2];
} OknoBinding;

extern void okno_bind_tables(Oid nsp, const char *schema, const char *extversion,
							 OknoBinding *b);

/* okno.c: the binding in force (binding first if there is none) */
extern const OknoBinding *okno_binding(void);

#endif							/* OKNO_BIND_H */
