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

/*
 * Judge a result; frees it unless it is SQL_OK.  A lost connection and a
 * transient error (serialization failure, deadlock, cancel, read-only,
 * out of resources) are the caller's to handle; anything else is fatal
 * (exit 3).
 */
SqlStatus
check_result(Relay *r, PGresult *res, ExecStatusType want, const char *what)
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

	if (PQstatus(r->conn) == CONNECTION_BAD ||
		(state == NULL && (res == NULL || PQresultStatus(res) == PGRES_FATAL_ERROR)) ||
		(state != NULL && (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0)))
	{
		relay_log("lost the connection to the server (%s): %s", what, buf);
		PQclear(res);
		return SQL_LOST;
	}
	if (state != NULL &&
		(strncmp(state, "40", 2) == 0 ||	/* serialization, deadlock */
		 strncmp(state, "53", 2) == 0 ||	/* insufficient resources */
		 strcmp(state, "57014") == 0 || /* query canceled */
		 strcmp(state, "55P03") == 0 || /* lock not available */
		 strcmp(state, "25006") == 0))	/* read-only transaction */
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
