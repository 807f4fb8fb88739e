/*-------------------------------------------------------------------------
 *
 * outbox.h
 *	  The outbox group: writing an event, and the wake-up its commit sends.
 *
 * Owns: a new event's id (UUID version 7), its row in outbox, the NOTIFY
 * and the setting okno.notify (event.c); waking the relays that wait in
 * okno_wait when the transaction that wrote or released an event commits,
 * the tags those waiters and prepared transactions hold (wake.c);
 * okno_emit, an event from any function (emit.c).  The
 * wait itself is delivery's (delivery/wait.c): it holds the tags this
 * group looks up, and nothing here calls it.
 *
 * May call: base and pure only.  The booking group writes its events
 * here, and delivery wakes waiters through it when it makes an event due
 * again.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_OUTBOX_H
#define OKNO_OUTBOX_H

#include "base/base.h"

#define OKNO_EVENT_BOOKING_CREATED		"booking_created"
#define OKNO_EVENT_BOOKING_CANCELLED	"booking_cancelled"
#define OKNO_NOTIFY_CHANNEL				"okno_outbox"

/* event.c */
extern void okno_outbox_init(void);
extern void okno_new_event_id(pg_uuid_t *id);
extern void okno_store_event(pg_uuid_t *id, const char *kind, Jsonb *payload);
extern void okno_insert_event(const char *kind, Jsonb *payload);
extern void okno_notify(void);

/* emit.c */
extern void okno_lock_order_key(const char *key, int len);

/* wake.c */
#define OKNO_WAIT_TAG_WAITERS	0
#define OKNO_WAIT_TAG_PREPARED	1
extern void okno_wake_init(void);
extern void okno_wait_tag(LOCKTAG *tag, uint32 which);
extern void okno_wake_at_commit(void);

#endif							/* OKNO_OUTBOX_H */
