/*-------------------------------------------------------------------------
 *
 * result.c
 *	  Judging a result: what the caller does next.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/result.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

/* SQL_UNREADABLE, with what made it so in r->unreadable */
static SqlStatus
unreadable(Relay *r, PGresult *res, const char *msg, const char *state)
{
	r->unreadable.encoding = (state != NULL);
	if (state != NULL)
		snprintf(r->unreadable.why, sizeof(r->unreadable.why), "%s (SQLSTATE %s)", msg, state);
	else
		snprintf(r->unreadable.why, sizeof(r->unreadable.why), "%s", msg);
	PQclear(res);
	return SQL_UNREADABLE;
}

/*
 * Judge a result; frees it unless it is SQL_OK.  A lost connection (and
 * a read-only server: another connection may find the primary) and a
 * transient error (serialization failure, deadlock, cancel, out of
 * resources) are the caller's to handle; anything else is fatal (exit 3).
 */
SqlStatus
check_result(Relay *r, PGresult *res, ExecStatusType want, const char *what)
{
	return check_answer(r, res, want, what, false);
}

/*
 * check_result, and with may_be_unreadable SQL_UNREADABLE for an answer
 * the relay could not read, the server being fine: a value with no UTF-8
 * form (in a database of another encoding), or an error of libpq's own
 * with the connection up and in a known state ("out of memory for query
 * result").  Only the statements that read events ask for it: their
 * callers take the events one at a time (batch.c).
 */
SqlStatus
check_answer(Relay *r, PGresult *res, ExecStatusType want, const char *what,
			 bool may_be_unreadable)
{
	const char *state;
	const char *msg;
	char		buf[1100];

	if (res != NULL && PQresultStatus(res) == want)
		return SQL_OK;

	state = (res != NULL) ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	msg = (res != NULL) ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	if (msg == NULL && res != NULL && PQresultErrorMessage(res)[0] != '\0')
		msg = PQresultErrorMessage(res);
	if (msg == NULL)
		msg = PQerrorMessage(r->conn);
	snprintf(buf, sizeof(buf), "%s", one_line(msg));

	if (may_be_unreadable && state != NULL &&
		(strcmp(state, "22P05") == 0 || strcmp(state, "22021") == 0))
		return unreadable(r, res, buf, state);
	if (may_be_unreadable && state == NULL && res != NULL &&
		PQresultStatus(res) == PGRES_FATAL_ERROR &&
		PQstatus(r->conn) == CONNECTION_OK && !r->server_closing &&
		(PQtransactionStatus(r->conn) == PQTRANS_IDLE ||
		 PQtransactionStatus(r->conn) == PQTRANS_INTRANS ||
		 PQtransactionStatus(r->conn) == PQTRANS_INERROR))
		return unreadable(r, res, buf, NULL);

	if (PQstatus(r->conn) == CONNECTION_BAD ||
		(state == NULL && (res == NULL || PQresultStatus(res) == PGRES_FATAL_ERROR)) ||
		(state != NULL && (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0)))
	{
		relay_log("lost the connection to the server (%s): %s", what, buf);
		PQclear(res);
		return SQL_LOST;
	}
	if (state != NULL && strcmp(state, "25006") == 0)
	{
		/*
		 * A read-only server (a standby after a failover,
		 * default_transaction_read_only): not on this connection, ever;
		 * connect again, so that a --dbname of several hosts with
		 * target_session_attrs=read-write finds the primary.  --once gives
		 * up when the new connection is read-only too.
		 */
		relay_log("%s failed: the server is read-only (SQLSTATE 25006): connecting again"
				  " (a --dbname with several hosts and target_session_attrs=read-write finds the primary)",
				  what);
		PQclear(res);
		if (r->opts.once && ++r->pace.read_only >= 2)
			relay_fatal(EXIT_SERVER, "the server is still read-only after connecting again: nothing can be delivered");
		return SQL_LOST;
	}
	if (state != NULL &&
		(strncmp(state, "40", 2) == 0 ||	/* serialization, deadlock */
		 strncmp(state, "53", 2) == 0 ||	/* insufficient resources */
		 strcmp(state, "57014") == 0 || /* query canceled */
		 strcmp(state, "55P03") == 0))	/* lock not available */
	{
		relay_log("%s failed, will retry: %s (SQLSTATE %s)", what, buf, state);
		PQclear(res);
		return SQL_RETRY;
	}
	if (state != NULL)
		relay_log("%s failed: %s (SQLSTATE %s)", what, buf, state);
	else if (res != NULL && PQresultStatus(res) != PGRES_FATAL_ERROR)
		relay_log("%s: unexpected result %s", what, PQresStatus(PQresultStatus(res)));
	else
		relay_log("%s failed: %s", what, buf);
	PQclear(res);
	PQfinish(r->conn);
	r->conn = NULL;
	exit(EXIT_SERVER);
}
