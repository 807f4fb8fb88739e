/*-------------------------------------------------------------------------
 *
 * json.c
 *	  The JSON line of an event.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/json.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "relay.h"

/* a JSON string literal; bytes >= 0x80 (UTF-8) pass unchanged */
static void
buf_append_json_string(LineBuffer *buf, const char *s)
{
	const unsigned char *p;
	char		esc[8];

	buf_append(buf, "\"", 1);
	for (p = (const unsigned char *) s; *p != '\0'; p++)
	{
		switch (*p)
		{
			case '"':
				buf_append(buf, "\\\"", 2);
				break;
			case '\\':
				buf_append(buf, "\\\\", 2);
				break;
			case '\n':
				buf_append(buf, "\\n", 2);
				break;
			case '\r':
				buf_append(buf, "\\r", 2);
				break;
			case '\t':
				buf_append(buf, "\\t", 2);
				break;
			case '\b':
				buf_append(buf, "\\b", 2);
				break;
			case '\f':
				buf_append(buf, "\\f", 2);
				break;
			default:
				if (*p < 0x20)
				{
					snprintf(esc, sizeof(esc), "\\u%04x", (unsigned int) *p);
					buf_append(buf, esc, 6);
				}
				else
					buf_append(buf, (const char *) p, 1);
				break;
		}
	}
	buf_append(buf, "\"", 1);
}

/*
 * jsonb's text without the blanks PostgreSQL puts after ':' and ','.
 * Blanks inside strings stay; jsonb escapes every control character in a
 * string, so a raw blank outside one is always a separator.
 */
static void
buf_append_compact_json(LineBuffer *buf, const char *s)
{
	const char *p;
	const char *run = s;
	bool		in_string = false;

	for (p = s; *p != '\0'; p++)
	{
		if (in_string)
		{
			if (*p == '\\' && p[1] != '\0')
				p++;
			else if (*p == '"')
				in_string = false;
		}
		else if (*p == '"')
			in_string = true;
		else if (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		{
			buf_append(buf, run, p - run);
			run = p + 1;
		}
	}
	buf_append(buf, run, p - run);
}

/* {"event_id":"...","kind":"...","payload":{...},"attempts":N}\n */
void
build_line(LineBuffer *buf, const RelayEvent *ev)
{
	buf->len = 0;
	buf_append(buf, "{\"event_id\":", 12);
	buf_append_json_string(buf, ev->id);
	buf_append(buf, ",\"kind\":", 8);
	if (ev->kind != NULL)
		buf_append_json_string(buf, ev->kind);
	else
		buf_append(buf, "null", 4);
	buf_append(buf, ",\"payload\":", 11);
	if (ev->payload != NULL)
		buf_append_compact_json(buf, ev->payload);
	else
		buf_append(buf, "null", 4);
	buf_append(buf, ",\"attempts\":", 12);
	if (ev->attempts != NULL)
		buf_append(buf, ev->attempts, strlen(ev->attempts));
	else
		buf_append(buf, "null", 4);
	buf_append(buf, "}\n", 2);
}
