/*-------------------------------------------------------------------------
 *
 * canonical_json.c
 *	  The RFC 8785 (JSON Canonicalization Scheme) form of a jsonb value,
 *	  okno_canonical_json, and the fingerprint of an operation's request:
 *	  SHA-256 of that form.  (A booking's request has a form of its own,
 *	  okno_canonical: booking/fingerprint.c and pure/booking_form.c.)
 *
 * pure/jcs.c writes the form (object members sorted by their keys' UTF-16
 * code units, numbers as ECMAScript writes the nearest double, strings
 * with JCS's escapes); this file hands it the value, read from the jsonb
 * container as a tree whose strings point into the jsonb itself (in a
 * UTF-8 database) and whose numbers are numeric's text.  jsonb keeps
 * neither the input's key order nor its duplicates (the last one wins),
 * and a number outside IEEE 754 double's range is an error here (I-JSON),
 * never a silent rounding.
 *
 * The form is UTF-8 whatever the database's encoding: the fingerprint is
 * its SHA-256, and okno_canonical_json() returns it converted to the
 * database's encoding.  So in a database of another encoding two keys of
 * one object can differ there and be the same in Unicode (EUC_JP has
 * such pairs): a value RFC 8785 has no form for.  Each way the writer can
 * fail has its SQLSTATE: a number beyond double 22003, a number that is
 * not JSON number text 22P02 (jsonb holds none), a string that is not
 * UTF-8 22021 (SQL_ASCII), two keys the same in Unicode 22030.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "base/base.h"
#include "keys/keys.h"
#include "pure/jcs.h"

PG_FUNCTION_INFO_V1(okno_canonical_json);

/* the longest piece of a number shown in an error */
#define NUMBER_SHOWN 40

/* whether strings are UTF-8 as they are stored */
static bool
stored_as_utf8(void)
{
	int			enc = GetDatabaseEncoding();

	return enc == PG_UTF8 || enc == PG_SQL_ASCII;
}

/* a scalar of the jsonb as a jcs_value */
static void
scalar_value(const JsonbValue *jbv, jcs_value *out, bool utf8)
{
	memset(out, 0, sizeof(*out));
	switch (jbv->type)
	{
		case jbvNull:
			out->type = JCS_NULL;
			break;
		case jbvBool:
			out->type = jbv->val.boolean ? JCS_TRUE : JCS_FALSE;
			break;
		case jbvNumeric:
			{
				char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out,
																	   NumericGetDatum(jbv->val.numeric)));

				out->type = JCS_NUMBER;
				out->text = text;
				out->len = strlen(text);
			}
			break;
		case jbvString:
			out->type = JCS_STRING;
			if (utf8)
			{
				out->text = jbv->val.string.val;
				out->len = jbv->val.string.len;
			}
			else
			{
				out->text = pg_server_to_any(jbv->val.string.val, jbv->val.string.len, PG_UTF8);
				out->len = (out->text == jbv->val.string.val) ? (size_t) jbv->val.string.len : strlen(out->text);
			}
			break;
		default:
			elog(ERROR, "unexpected jsonb value type %d", (int) jbv->type);
	}
}

/*
 * The tree of the container it iterates over, whose BEGIN token (at
 * nesting depth 'depth') has just been read into *tok.
 */
static jcs_value *
build_container(JsonbIterator **it, JsonbValue *tok, bool is_object, bool utf8)
{
	jcs_value  *v = palloc0(sizeof(jcs_value));
	size_t		n = 0;
	JsonbIteratorToken r;
	JsonbValue	item;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();

	if (is_object)
	{
		v->type = JCS_OBJECT;
		v->count = tok->val.object.nPairs;
		v->members = v->count > 0 ? palloc(sizeof(jcs_member) * v->count) : NULL;
	}
	else
	{
		v->type = JCS_ARRAY;
		v->count = tok->val.array.nElems;
		v->items = v->count > 0 ? palloc(sizeof(jcs_value *) * v->count) : NULL;
	}

	while ((r = JsonbIteratorNext(it, &item, false)) != WJB_DONE)
	{
		jcs_value  *child;

		if (r == WJB_END_OBJECT || r == WJB_END_ARRAY)
			break;
		if (r == WJB_KEY)
		{
			jcs_value	key;

			if (n >= v->count)
				elog(ERROR, "jsonb object has more members than it says");
			scalar_value(&item, &key, utf8);
			v->members[n].key = key.text;
			v->members[n].keylen = key.len;
			continue;
		}
		if (r == WJB_BEGIN_OBJECT || r == WJB_BEGIN_ARRAY)
			child = build_container(it, &item, r == WJB_BEGIN_OBJECT, utf8);
		else
		{
			child = palloc(sizeof(jcs_value));
			scalar_value(&item, child, utf8);
		}
		if (n >= v->count)
			elog(ERROR, "jsonb container has more elements than it says");
		if (is_object)
			v->members[n++].value = child;
		else
			v->items[n++] = child;
	}
	if (n != v->count)
		elog(ERROR, "jsonb container has fewer elements than it says");
	return v;
}

static void
append_to_stringinfo(void *arg, const char *data, size_t len)
{
	appendBinaryStringInfo((StringInfo) arg, data, (int) len);
}

/*
 * Append the RFC 8785 form of value to out, in UTF-8.
 */
void
okno_canonical_json_text(Jsonb *value, StringInfo out)
{
	JsonbIterator *it = JsonbIteratorInit(&value->root);
	JsonbValue	tok;
	JsonbIteratorToken r;
	jcs_value  *tree;
	jcs_error	err;
	bool		utf8 = stored_as_utf8();

	r = JsonbIteratorNext(&it, &tok, false);
	if (r == WJB_BEGIN_ARRAY && tok.val.array.rawScalar)
	{
		/* a scalar at the top: the one element of a pseudo-array */
		r = JsonbIteratorNext(&it, &tok, false);
		if (r != WJB_ELEM)
			elog(ERROR, "unexpected jsonb token %d in a scalar", (int) r);
		tree = palloc(sizeof(jcs_value));
		scalar_value(&tok, tree, utf8);
	}
	else if (r == WJB_BEGIN_ARRAY || r == WJB_BEGIN_OBJECT)
		tree = build_container(&it, &tok, r == WJB_BEGIN_OBJECT, utf8);
	else
		elog(ERROR, "unexpected jsonb token %d at the top", (int) r);

	switch (jcs_write(tree, append_to_stringinfo, out, &err))
	{
		case JCS_ERR_NUMBER_RANGE:
			{
				const jcs_value *num = err.value;
				int			shown = num && num->len > NUMBER_SHOWN ? NUMBER_SHOWN : (num ? (int) num->len : 0);

				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("JSON number %.*s%s is out of range for RFC 8785",
								shown, num ? num->text : "", num && num->len > NUMBER_SHOWN ? "..." : ""),
						 errdetail("RFC 8785 writes numbers as IEEE 754 double-precision values: "
								   "a magnitude above 1.7976931348623157e+308, or a non-zero one that would round to 0, has none."),
						 errhint("Send such a number as a JSON string.")));
			}
			break;
		case JCS_ERR_NUMBER_SYNTAX:
			/* (numeric_out writes none such: every status has its error) */
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("JSON number %.*s is not RFC 8259 number text",
							err.value ? (int) Min(err.value->len, NUMBER_SHOWN) : 0,
							err.value ? err.value->text : "")));
			break;
		case JCS_ERR_UTF8:
			ereport(ERROR,
					(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
					 errmsg("JSON string is not valid UTF-8"),
					 errdetail("RFC 8785 canonicalizes Unicode text; this database's SQL_ASCII text may hold any bytes.")));
			break;
		case JCS_ERR_DUPLICATE_KEY:
			/*
			 * jsonb keeps one member per key, so two keys are equal only in
			 * Unicode: distinct in the database's encoding, they convert to
			 * the same text (EUC_JP's 0xA2E8 and 0xADFA are both U+2235)
			 */
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_JSON_OBJECT_KEY_VALUE),
					 errmsg("JSON object has two keys that are the same in Unicode: \"%s\"",
							err.key ? pg_any_to_server(err.key, (int) err.keylen, PG_UTF8) : ""),
					 errdetail("The keys differ in the database's encoding, %s, and convert to the same Unicode text; RFC 8785 canonicalizes Unicode text, where an object's keys are unique.",
							   GetDatabaseEncodingName()),
					 errhint("Use one of the two spellings of the key.")));
			break;
		case JCS_OK:
			break;
	}
}

/*
 * The fingerprint of an operation's request: SHA-256 of its RFC 8785 form.
 */
void
okno_request_fingerprint(Jsonb *request, uint8 fingerprint[OKNO_HASH_LEN])
{
	StringInfoData canon;

	initStringInfo(&canon);
	okno_canonical_json_text(request, &canon);
	okno_sha256(canon.data, canon.len, fingerprint);
	pfree(canon.data);
}

/*
 * okno_canonical_json(value jsonb) RETURNS text
 *
 * The RFC 8785 form of value; STRICT, IMMUTABLE.
 */
Datum
okno_canonical_json(PG_FUNCTION_ARGS)
{
	Jsonb	   *value = PG_GETARG_JSONB_P(0);
	StringInfoData canon;
	char	   *converted;

	initStringInfo(&canon);
	okno_canonical_json_text(value, &canon);
	if (stored_as_utf8())
		PG_RETURN_TEXT_P(cstring_to_text_with_len(canon.data, canon.len));
	converted = pg_any_to_server(canon.data, canon.len, PG_UTF8);
	PG_RETURN_TEXT_P(cstring_to_text(converted));
}
