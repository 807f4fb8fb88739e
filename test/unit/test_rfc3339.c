/*-------------------------------------------------------------------------
 *
 * test_rfc3339.c
 *		Unit tests for the strict RFC 3339 parser and UTC formatter.
 *
 * Expected instants and texts in the tables below were computed
 * independently with Python's datetime module (rows whose local date lies in
 * year 0000, which Python cannot represent, were computed by hand from
 * 0001-01-01T00:00:00Z = -62135596800000000).  The exhaustive loops use a
 * separate, naive day-by-day calendar rather than the code under test.
 *
 * test/unit/test_rfc3339.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rfc3339.h"
#include "unit.h"

/* a value that no successful parse in these tests produces */
#define SENTINEL	INT64_C(0x5A5A5A5A5A5A5A5A)

typedef struct valid_case
{
	const char *input;
	int64_t		unix_us;
	const char *utc;			/* expected rfc3339_format_utc() output */
} valid_case;

typedef struct invalid_case
{
	const char *input;
	rfc3339_status status;
} invalid_case;

typedef struct format_case
{
	int64_t		unix_us;
	const char *text;
} format_case;

static const valid_case valid_cases[] = {
	{"2026-12-01T07:00:00Z", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01t07:00:00Z", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01T07:00:00z", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01t07:00:00z", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01T10:00:00+03:00", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01T02:00:00-05:00", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01T07:00:00-00:00", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01T07:00:00+00:00", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01T07:00:00+23:59", INT64_C(1796022060000000), "2026-11-30T07:01:00Z"},
	{"2026-12-01T07:00:00-23:59", INT64_C(1796194740000000), "2026-12-02T06:59:00Z"},
	{"2026-12-01T05:30:00+05:30", INT64_C(1796083200000000), "2026-12-01T00:00:00Z"},
	{"1970-01-01T00:00:00Z", INT64_C(0), "1970-01-01T00:00:00Z"},
	{"1970-01-01T00:00:00.000001Z", INT64_C(1), "1970-01-01T00:00:00.000001Z"},
	{"1969-12-31T23:59:59.999999Z", INT64_C(-1), "1969-12-31T23:59:59.999999Z"},
	{"1970-01-01T01:00:00+01:00", INT64_C(0), "1970-01-01T00:00:00Z"},
	{"1969-12-31T19:00:00-05:00", INT64_C(0), "1970-01-01T00:00:00Z"},
	{"2000-01-01T00:00:00Z", INT64_C(946684800000000), "2000-01-01T00:00:00Z"},
	{"2000-02-29T12:00:00Z", INT64_C(951825600000000), "2000-02-29T12:00:00Z"},
	{"2024-02-29T23:59:59Z", INT64_C(1709251199000000), "2024-02-29T23:59:59Z"},
	{"1600-02-29T00:00:00Z", INT64_C(-11670998400000000), "1600-02-29T00:00:00Z"},
	{"2026-01-31T00:00:00Z", INT64_C(1769817600000000), "2026-01-31T00:00:00Z"},
	{"2026-03-31T00:00:00Z", INT64_C(1774915200000000), "2026-03-31T00:00:00Z"},
	{"2026-04-30T00:00:00Z", INT64_C(1777507200000000), "2026-04-30T00:00:00Z"},
	{"2026-06-30T00:00:00Z", INT64_C(1782777600000000), "2026-06-30T00:00:00Z"},
	{"2026-09-30T00:00:00Z", INT64_C(1790726400000000), "2026-09-30T00:00:00Z"},
	{"2026-11-30T00:00:00Z", INT64_C(1795996800000000), "2026-11-30T00:00:00Z"},
	{"2026-12-31T23:59:59Z", INT64_C(1798761599000000), "2026-12-31T23:59:59Z"},
	{"2026-02-28T23:59:59Z", INT64_C(1772323199000000), "2026-02-28T23:59:59Z"},
	{"2026-12-01T07:00:00.5Z", INT64_C(1796108400500000), "2026-12-01T07:00:00.500000Z"},
	{"2026-12-01T07:00:00.12Z", INT64_C(1796108400120000), "2026-12-01T07:00:00.120000Z"},
	{"2026-12-01T07:00:00.123Z", INT64_C(1796108400123000), "2026-12-01T07:00:00.123000Z"},
	{"2026-12-01T07:00:00.1234Z", INT64_C(1796108400123400), "2026-12-01T07:00:00.123400Z"},
	{"2026-12-01T07:00:00.12345Z", INT64_C(1796108400123450), "2026-12-01T07:00:00.123450Z"},
	{"2026-12-01T07:00:00.123456Z", INT64_C(1796108400123456), "2026-12-01T07:00:00.123456Z"},
	{"2026-12-01T07:00:00.000000Z", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01T07:00:00.0Z", INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{"2026-12-01T07:00:00.999999+01:00", INT64_C(1796104800999999), "2026-12-01T06:00:00.999999Z"},
	{"2026-12-31T23:59:59.999999-00:01", INT64_C(1798761659999999), "2027-01-01T00:00:59.999999Z"},
	{"2026-12-31T23:30:00-01:00", INT64_C(1798763400000000), "2027-01-01T00:30:00Z"},
	{"2027-01-01T00:30:00+01:00", INT64_C(1798759800000000), "2026-12-31T23:30:00Z"},
	{"1900-03-01T00:00:00Z", INT64_C(-2203891200000000), "1900-03-01T00:00:00Z"},
	{"1900-02-28T23:00:00-01:00", INT64_C(-2203891200000000), "1900-03-01T00:00:00Z"},
	{"0001-01-01T00:00:00Z", INT64_C(-62135596800000000), "0001-01-01T00:00:00Z"},
	{"0001-01-01T00:00:00-00:01", INT64_C(-62135596740000000), "0001-01-01T00:01:00Z"},
	{"0001-01-01T23:59:00+23:59", INT64_C(-62135596800000000), "0001-01-01T00:00:00Z"},
	{"0001-01-01T00:00:00.000001Z", INT64_C(-62135596799999999), "0001-01-01T00:00:00.000001Z"},
	{"9999-12-31T23:59:59.999999Z", INT64_C(253402300799999999), "9999-12-31T23:59:59.999999Z"},
	{"9999-12-31T23:59:59Z", INT64_C(253402300799000000), "9999-12-31T23:59:59Z"},
	{"9999-12-31T00:00:00-23:59", INT64_C(253402300740000000), "9999-12-31T23:59:00Z"},
	{"9999-12-31T00:00:59.999999-23:59", INT64_C(253402300799999999), "9999-12-31T23:59:59.999999Z"},
	{"9999-12-31T23:59:59.999999+00:01", INT64_C(253402300739999999), "9999-12-31T23:58:59.999999Z"},
	{"9999-12-31T23:59:59.999999+23:59", INT64_C(253402214459999999), "9999-12-31T00:00:59.999999Z"},
	{"1582-10-10T12:00:00Z", INT64_C(-12219681600000000), "1582-10-10T12:00:00Z"},
	{"1066-10-14T09:00:00+00:00", INT64_C(-28502722800000000), "1066-10-14T09:00:00Z"},
	{"2038-01-19T03:14:08Z", INT64_C(2147483648000000), "2038-01-19T03:14:08Z"},
	{"2038-01-19T03:14:07Z", INT64_C(2147483647000000), "2038-01-19T03:14:07Z"},
	{"1901-12-13T20:45:52Z", INT64_C(-2147483648000000), "1901-12-13T20:45:52Z"},
	{"1901-12-13T20:45:51Z", INT64_C(-2147483649000000), "1901-12-13T20:45:51Z"},
	/* local date in year 0000, UTC instant in 0001 (computed by hand) */
	{"0000-12-31T23:00:00-01:00", INT64_C(-62135596800000000), "0001-01-01T00:00:00Z"},
	{"0000-12-31T00:01:00-23:59", INT64_C(-62135596800000000), "0001-01-01T00:00:00Z"},
	{"0000-12-31T23:59:59.999999-00:01", INT64_C(-62135596740000001), "0001-01-01T00:00:59.999999Z"},
};

static const format_case format_cases[] = {
	{INT64_C(0), "1970-01-01T00:00:00Z"},
	{INT64_C(1), "1970-01-01T00:00:00.000001Z"},
	{INT64_C(-1), "1969-12-31T23:59:59.999999Z"},
	{INT64_C(500000), "1970-01-01T00:00:00.500000Z"},
	{INT64_C(-500000), "1969-12-31T23:59:59.500000Z"},
	{INT64_C(999999), "1970-01-01T00:00:00.999999Z"},
	{INT64_C(1000000), "1970-01-01T00:00:01Z"},
	{INT64_C(-1000000), "1969-12-31T23:59:59Z"},
	{INT64_C(86399999999), "1970-01-01T23:59:59.999999Z"},
	{INT64_C(86400000000), "1970-01-02T00:00:00Z"},
	{INT64_C(-86400000000), "1969-12-31T00:00:00Z"},
	{INT64_C(-86400000001), "1969-12-30T23:59:59.999999Z"},
	{INT64_C(946684800000000), "2000-01-01T00:00:00Z"},
	{INT64_C(-62135596800000000), "0001-01-01T00:00:00Z"},
	{INT64_C(253402300799999999), "9999-12-31T23:59:59.999999Z"},
	{INT64_C(-62135596799999999), "0001-01-01T00:00:00.000001Z"},
	{INT64_C(253402300799999998), "9999-12-31T23:59:59.999998Z"},
	{INT64_C(-62135596799000001), "0001-01-01T00:00:00.999999Z"},
	{INT64_C(253402300799000000), "9999-12-31T23:59:59Z"},
	{INT64_C(951782400000000), "2000-02-29T00:00:00Z"},
	{INT64_C(1796108400000000), "2026-12-01T07:00:00Z"},
	{INT64_C(81515992365055996), "4553-02-20T03:12:45.055996Z"},
	{INT64_C(72533296679088596), "4268-06-27T17:57:59.088596Z"},
	{INT64_C(33034252174439490), "3016-10-24T21:09:34.439490Z"},
	{INT64_C(-12997756740551035), "1558-02-13T00:00:59.448965Z"},
	{INT64_C(18748375060580135), "2564-02-11T01:57:40.580135Z"},
	{INT64_C(-40094679822403319), "0699-06-14T04:56:17.596681Z"},
	{INT64_C(199639652673924212), "8296-04-30T03:04:33.924212Z"},
	{INT64_C(38718871808776560), "3196-12-14T02:10:08.776560Z"},
	{INT64_C(113471670589980715), "5565-10-10T12:29:49.980715Z"},
	{INT64_C(32635007428831629), "3004-02-29T23:50:28.831629Z"},
	{INT64_C(248569625352348295), "9846-11-10T06:09:12.348295Z"},
	{INT64_C(165720957730080688), "7221-06-27T15:22:10.080688Z"},
	{INT64_C(207115958482540424), "8533-03-30T10:41:22.540424Z"},
	{INT64_C(-1093813969709618), "1935-05-05T02:47:10.290382Z"},
	{INT64_C(148022055746335032), "6660-08-19T05:42:26.335032Z"},
	{INT64_C(191569523898564912), "8040-08-05T20:38:18.564912Z"},
	{INT64_C(91065425930593844), "4855-09-30T23:38:50.593844Z"},
	{INT64_C(42660298967795335), "3321-11-07T11:02:47.795335Z"},
	{INT64_C(182327601839161831), "7747-09-25T04:03:59.161831Z"},
	{INT64_C(168475319322927477), "7308-10-08T19:48:42.927477Z"},
	{INT64_C(134252257927012301), "6224-04-14T13:52:07.012301Z"},
	{INT64_C(114382122401027971), "5594-08-17T03:46:41.027971Z"},
	{INT64_C(7240818758112044), "2199-06-14T18:32:38.112044Z"},
	{INT64_C(228758875220742147), "9219-01-30T04:00:20.742147Z"},
	{INT64_C(154424999218041877), "6863-07-14T09:06:58.041877Z"},
	{INT64_C(166845390496629969), "7257-02-12T21:48:16.629969Z"},
	{INT64_C(41993281980165737), "3300-09-18T08:33:00.165737Z"},
	{INT64_C(232359024414914425), "9333-03-01T13:26:54.914425Z"},
	{INT64_C(93400251440995727), "4929-09-26T10:17:20.995727Z"},
	{INT64_C(169952618927975325), "7355-08-02T04:48:47.975325Z"},
	{INT64_C(164913146649000000), "7195-11-21T23:24:09Z"},
	{INT64_C(66049150946000000), "4063-01-05T18:22:26Z"},
	{INT64_C(230470521065000000), "9273-04-26T21:11:05Z"},
	{INT64_C(58319354668000000), "3818-01-25T12:44:28Z"},
	{INT64_C(-656411939000000), "1949-03-14T15:21:01Z"},
	{INT64_C(225964308079000000), "9130-07-11T15:21:19Z"},
	{INT64_C(250153203285000000), "9897-01-14T16:54:45Z"},
	{INT64_C(227017524913000000), "9163-11-25T15:35:13Z"},
	{INT64_C(119089840905000000), "5743-10-22T15:21:45Z"},
	{INT64_C(114399651315000000), "5595-03-08T00:55:15Z"},
	{INT64_C(198596414391000000), "8263-04-09T14:39:51Z"},
	{INT64_C(455850956000000), "1984-06-12T01:15:56Z"},
	{INT64_C(72912285155000000), "4280-07-01T04:32:35Z"},
	{INT64_C(226723214352000000), "9154-07-29T06:39:12Z"},
	{INT64_C(185139884565000000), "7836-11-06T17:42:45Z"},
	{INT64_C(-75192305062205), "1967-08-14T17:14:54.937795Z"},
	{INT64_C(-655912714053322), "1949-03-20T10:01:25.946678Z"},
	{INT64_C(-1672858980697695), "1916-12-28T04:56:59.302305Z"},
	{INT64_C(-1976977873989372), "1907-05-10T07:28:46.010628Z"},
	{INT64_C(-804215906382133), "1944-07-07T22:41:33.617867Z"},
	{INT64_C(-1939263979305387), "1908-07-19T19:33:40.694613Z"},
	{INT64_C(-134435899330648), "1965-09-28T00:41:40.669352Z"},
	{INT64_C(-730042483306676), "1946-11-13T10:25:16.693324Z"},
	{INT64_C(-1243552326992722), "1930-08-06T00:47:53.007278Z"},
	{INT64_C(-2039935679518060), "1905-05-11T15:12:00.481940Z"},
};

static const invalid_case invalid_cases[] = {
	/* grammar violations */
	{"", RFC3339_SYNTAX},
	{"2026-12-01 07:00:00Z", RFC3339_SYNTAX},
	{" 2026-12-01T07:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00Z ", RFC3339_SYNTAX},
	{"\t2026-12-01T07:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00Z\n", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00 ", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00ZZ", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00Zx", RFC3339_SYNTAX},
	{"2026-12-01t07:00:00Zz", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00z+01:00", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+01:00x", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+01:00Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+01:00:00", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00.", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00.Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00.+01:00", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00.-1Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00,5Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00.1.2Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00.12a4Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00Z", RFC3339_SYNTAX},
	{"2026-12-01T07Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+0100", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+01", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+1:00", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+01:0", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00-", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+:", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00 +01:00", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00 Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00UTC", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00GMT", RFC3339_SYNTAX},
	{"26-12-01T07:00:00Z", RFC3339_SYNTAX},
	{"02026-12-01T07:00:00Z", RFC3339_SYNTAX},
	{"+2026-12-01T07:00:00Z", RFC3339_SYNTAX},
	{"-2026-12-01T07:00:00Z", RFC3339_SYNTAX},
	{"2026-1-01T07:00:00Z", RFC3339_SYNTAX},
	{"2026-12-1T07:00:00Z", RFC3339_SYNTAX},
	{"2026-12- 1T07:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01T7:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01T 7:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01T-7:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01T07:0:00Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:0Z", RFC3339_SYNTAX},
	{"2026/12/01T07:00:00Z", RFC3339_SYNTAX},
	{"20261201T070000Z", RFC3339_SYNTAX},
	{"2026-12-01T07.00.00Z", RFC3339_SYNTAX},
	{"2026-12-01X07:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01_07:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01TT07:00:00Z", RFC3339_SYNTAX},
	{"2026-12-01", RFC3339_SYNTAX},
	{"2026-12-01T", RFC3339_SYNTAX},
	{"T07:00:00Z", RFC3339_SYNTAX},
	{"07:00:00Z", RFC3339_SYNTAX},
	{"Z", RFC3339_SYNTAX},
	/* syntax is checked before the values */
	{"2026-13-01T07:00Z", RFC3339_SYNTAX},
	{"2026-12-01 25:00:00Z", RFC3339_SYNTAX},
	/* non-ASCII digits, dashes, letters and spaces (UTF-8) */
	{"\xef\xbc\x92" "026-12-01T07:00:00Z", RFC3339_SYNTAX},	/* fullwidth 2 */
	{"2026-12-0\xd9\xa1" "T07:00:00Z", RFC3339_SYNTAX},	/* Arabic-Indic 1 */
	{"2026-12-01T0\xc2\xb9" ":00:00Z", RFC3339_SYNTAX},	/* superscript 1 */
	{"2026-12-01T07:00:00.\xd9\xa1" "Z", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00+0\xd9\xa1" ":00", RFC3339_SYNTAX},
	{"2026-12-01T07:00:00\xef\xbc\xba", RFC3339_SYNTAX},	/* fullwidth Z */
	{"2026\xe2\x80\x90" "12-01T07:00:00Z", RFC3339_SYNTAX},	/* hyphen */
	{"2026-12-01T07:00:00\xe2\x88\x92" "01:00", RFC3339_SYNTAX},	/* minus */
	{"2026-12-01T07:00:00Z\xc2\xa0", RFC3339_SYNTAX},	/* NBSP */
	{"\xef\xbb\xbf" "2026-12-01T07:00:00Z", RFC3339_SYNTAX},	/* BOM */
	{"2026-12-01\xc2\xa0" "07:00:00Z", RFC3339_SYNTAX},
	/* offset missing */
	{"2026-12-01T10:00:00", RFC3339_NO_OFFSET},
	{"2026-12-01t10:00:00", RFC3339_NO_OFFSET},
	{"2026-12-01T10:00:00.5", RFC3339_NO_OFFSET},
	{"2026-12-01T10:00:00.123456", RFC3339_NO_OFFSET},
	{"2026-02-30T10:00:00", RFC3339_NO_OFFSET},
	{"2026-12-01T10:00:60", RFC3339_NO_OFFSET},
	/* too many fractional digits */
	{"2026-12-01T07:00:00.1234567Z", RFC3339_FRACTION_TOO_LONG},
	{"2026-12-01T07:00:00.0000000Z", RFC3339_FRACTION_TOO_LONG},
	{"2026-12-01T07:00:00.123456789Z", RFC3339_FRACTION_TOO_LONG},
	{"2026-12-01T07:00:00.1234567+01:00", RFC3339_FRACTION_TOO_LONG},
	{"2026-12-01T07:00:00.1234567", RFC3339_FRACTION_TOO_LONG},
	{"2026-12-01T07:00:00.99999999999999999999999999999999Z", RFC3339_FRACTION_TOO_LONG},
	/* no such date */
	{"2026-02-29T00:00:00Z", RFC3339_BAD_DATE},
	{"2023-02-29T00:00:00Z", RFC3339_BAD_DATE},
	{"1900-02-29T00:00:00Z", RFC3339_BAD_DATE},
	{"2100-02-29T00:00:00Z", RFC3339_BAD_DATE},
	{"0001-02-29T00:00:00Z", RFC3339_BAD_DATE},
	{"2024-02-30T00:00:00Z", RFC3339_BAD_DATE},
	{"2000-02-30T00:00:00Z", RFC3339_BAD_DATE},
	{"0000-02-30T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-04-31T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-06-31T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-09-31T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-11-31T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-01-32T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-12-32T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-00-01T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-13-01T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-99-01T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-12-00T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-12-99T00:00:00Z", RFC3339_BAD_DATE},
	{"0000-00-00T00:00:00Z", RFC3339_BAD_DATE},
	{"2026-02-30T25:00:00Z", RFC3339_BAD_DATE},
	{"2026-13-01T10:00:00+24:00", RFC3339_BAD_DATE},
	/* no such time of day */
	{"2026-12-01T24:00:00Z", RFC3339_BAD_TIME},
	{"2026-12-01T25:00:00Z", RFC3339_BAD_TIME},
	{"2026-12-01T99:00:00Z", RFC3339_BAD_TIME},
	{"2026-12-01T23:60:00Z", RFC3339_BAD_TIME},
	{"2026-12-01T23:99:00Z", RFC3339_BAD_TIME},
	{"2026-12-01T23:59:61Z", RFC3339_BAD_TIME},
	{"2026-12-01T23:59:99Z", RFC3339_BAD_TIME},
	{"2026-12-01T24:00:60Z", RFC3339_BAD_TIME},
	{"2026-12-01T23:60:60Z", RFC3339_BAD_TIME},
	{"2026-12-01T24:00:00+24:00", RFC3339_BAD_TIME},
	/* leap seconds */
	{"2026-12-31T23:59:60Z", RFC3339_LEAP_SECOND},
	{"2016-12-31T23:59:60Z", RFC3339_LEAP_SECOND},
	{"2026-12-01T10:00:60+01:00", RFC3339_LEAP_SECOND},
	{"2026-12-01T10:00:60.5Z", RFC3339_LEAP_SECOND},
	{"2026-12-01T10:00:60+24:00", RFC3339_LEAP_SECOND},
	/* offset out of range */
	{"2026-12-01T07:00:00+24:00", RFC3339_BAD_OFFSET},
	{"2026-12-01T07:00:00-24:00", RFC3339_BAD_OFFSET},
	{"2026-12-01T07:00:00+05:60", RFC3339_BAD_OFFSET},
	{"2026-12-01T07:00:00-05:60", RFC3339_BAD_OFFSET},
	{"2026-12-01T07:00:00+23:60", RFC3339_BAD_OFFSET},
	{"2026-12-01T07:00:00+99:99", RFC3339_BAD_OFFSET},
	{"9999-12-31T23:59:59+24:00", RFC3339_BAD_OFFSET},
	/* UTC instant outside 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999Z */
	{"0000-01-01T00:00:00Z", RFC3339_OUT_OF_RANGE},
	{"0000-01-01T00:00:00-23:59", RFC3339_OUT_OF_RANGE},
	{"0000-02-29T00:00:00Z", RFC3339_OUT_OF_RANGE},	/* exists: 0000 is leap */
	{"0000-12-31T23:59:59Z", RFC3339_OUT_OF_RANGE},
	{"0000-12-31T23:59:59.999999Z", RFC3339_OUT_OF_RANGE},
	{"0000-12-31T23:00:00-00:59", RFC3339_OUT_OF_RANGE},
	{"0001-01-01T00:00:00+00:01", RFC3339_OUT_OF_RANGE},
	{"0001-01-01T00:00:00.999999+00:01", RFC3339_OUT_OF_RANGE},
	{"0001-01-01T23:58:59.999999+23:59", RFC3339_OUT_OF_RANGE},
	{"9999-12-31T23:30:00-01:00", RFC3339_OUT_OF_RANGE},
	{"9999-12-31T23:59:59.999999-00:01", RFC3339_OUT_OF_RANGE},
	{"9999-12-31T23:59:00-00:01", RFC3339_OUT_OF_RANGE},
	{"9999-12-31T00:01:00-23:59", RFC3339_OUT_OF_RANGE},
	{"9999-12-31T23:59:59-23:59", RFC3339_OUT_OF_RANGE},
};

#define lengthof(array) (sizeof(array) / sizeof((array)[0]))

static rfc3339_status
parse_cstr(const char *s, int64_t *unix_us)
{
	return rfc3339_parse(s, strlen(s), unix_us);
}

static bool
test_is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
test_days_in_month(int y, int m)
{
	switch (m)
	{
		case 2:
			return test_is_leap(y) ? 29 : 28;
		case 4:
		case 6:
		case 9:
		case 11:
			return 30;
		default:
			return 31;
	}
}

/* floor of x mod 1000000, independently of the formatter */
static int64_t
floor_mod_usec(int64_t x)
{
	int64_t		r = x % 1000000;

	return r < 0 ? r + 1000000 : r;
}

/* a small deterministic 64-bit generator (splitmix64) */
static uint64_t
next_random(uint64_t *seed)
{
	uint64_t	z = (*seed += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static void
test_constants(void)
{
	CHECK_I64_EQ(RFC3339_MIN_UNIX_US, INT64_C(-62135596800000000));
	CHECK_I64_EQ(RFC3339_MAX_UNIX_US, INT64_C(253402300799999999));
	CHECK(RFC3339_UTC_MAXLEN == 27);
	CHECK(strlen("9999-12-31T23:59:59.999999Z") == RFC3339_UTC_MAXLEN);
	CHECK(RFC3339_OK == 0);
}

static void
test_valid(void)
{
	size_t		i;

	for (i = 0; i < lengthof(valid_cases); i++)
	{
		const valid_case *c = &valid_cases[i];
		int64_t		got = SENTINEL;
		rfc3339_status st = parse_cstr(c->input, &got);
		char		buf[RFC3339_UTC_MAXLEN + 1];
		size_t		len;

		CHECK_MSG(st == RFC3339_OK, "\"%s\" gave status %d", c->input, (int) st);
		CHECK_MSG(got == c->unix_us, "\"%s\" gave %lld, expected %lld",
				  c->input, (long long) got, (long long) c->unix_us);

		/* format(parse(s)) is the UTC form */
		len = rfc3339_format_utc(got, buf);
		CHECK_MSG(strcmp(buf, c->utc) == 0 && len == strlen(c->utc),
				  "\"%s\" formatted as \"%s\", expected \"%s\"",
				  c->input, buf, c->utc);

		/* and the UTC form parses back to the same instant */
		got = SENTINEL;
		st = parse_cstr(c->utc, &got);
		CHECK_MSG(st == RFC3339_OK && got == c->unix_us,
				  "\"%s\" did not parse back (status %d)", c->utc, (int) st);
	}
}

static void
test_invalid(void)
{
	size_t		i;

	for (i = 0; i < lengthof(invalid_cases); i++)
	{
		const invalid_case *c = &invalid_cases[i];
		int64_t		got = SENTINEL;
		rfc3339_status st = parse_cstr(c->input, &got);

		CHECK_MSG(st == c->status, "\"%s\" gave status %d, expected %d",
				  c->input, (int) st, (int) c->status);
		CHECK_MSG(got == SENTINEL, "\"%s\" changed the output on failure",
				  c->input);
	}
}

/*
 * Every proper prefix of a valid string is rejected; the prefixes that stop
 * right after the seconds or after 1 to 6 fractional digits lack only the
 * offset.  The prefix is passed both as a pointer into the longer string
 * (so it is not NUL-terminated) and as a copy followed by more digits.
 */
static void
test_truncated(void)
{
	static const char *full_strings[] = {
		"2026-12-01T10:00:00.123456+05:30",
		"2026-12-01t10:00:00z",
		"0001-01-01T00:00:00-00:01",
	};
	size_t		k;

	for (k = 0; k < lengthof(full_strings); k++)
	{
		const char *full = full_strings[k];
		size_t		full_len = strlen(full);
		size_t		n;
		int64_t		got = SENTINEL;

		CHECK_MSG(rfc3339_parse(full, full_len, &got) == RFC3339_OK,
				  "\"%s\" should be valid", full);

		for (n = 0; n < full_len; n++)
		{
			rfc3339_status expected;
			rfc3339_status st;
			char		padded[64];

			/* 19 = strlen("YYYY-MM-DDTHH:MM:SS"), then '.' and up to 6 digits */
			if (n == 19 || (full[19] == '.' && n >= 21 && n <= 26))
				expected = RFC3339_NO_OFFSET;
			else
				expected = RFC3339_SYNTAX;

			got = SENTINEL;
			st = rfc3339_parse(full, n, &got);
			CHECK_MSG(st == expected && got == SENTINEL,
					  "prefix %u of \"%s\" gave status %d, expected %d",
					  (unsigned) n, full, (int) st, (int) expected);

			memset(padded, '7', sizeof(padded));
			memcpy(padded, full, n);
			got = SENTINEL;
			st = rfc3339_parse(padded, n, &got);
			CHECK_MSG(st == expected && got == SENTINEL,
					  "padded prefix %u of \"%s\" gave status %d, expected %d",
					  (unsigned) n, full, (int) st, (int) expected);
		}
	}
}

static void
test_embedded_nul(void)
{
	static const char with_nul_inside[] = "2026-12-01T07:00:00\0Z";
	static const char with_nul_after[] = "2026-12-01T07:00:00Z\0";
	static const char nul_for_digit[] = "2026-12-01T07:00:0\0Z";
	static const char nul_in_fraction[] = "2026-12-01T07:00:00.1\0Z";
	int64_t		got = SENTINEL;

	/* sizeof - 1 drops only the literal's own terminator */
	CHECK(rfc3339_parse(with_nul_inside, sizeof(with_nul_inside) - 1, &got) == RFC3339_SYNTAX);
	CHECK(rfc3339_parse(with_nul_after, sizeof(with_nul_after) - 1, &got) == RFC3339_SYNTAX);
	CHECK(rfc3339_parse(nul_for_digit, sizeof(nul_for_digit) - 1, &got) == RFC3339_SYNTAX);
	CHECK(rfc3339_parse(nul_in_fraction, sizeof(nul_in_fraction) - 1, &got) == RFC3339_SYNTAX);
	CHECK(rfc3339_parse("\0", 1, &got) == RFC3339_SYNTAX);
	CHECK(got == SENTINEL);

	/* a length stopping before the NUL sees a valid string */
	CHECK(rfc3339_parse(with_nul_after, sizeof(with_nul_after) - 2, &got) == RFC3339_OK);
	CHECK_I64_EQ(got, INT64_C(1796108400000000));

	/* a zero length never reads the (NULL) pointer */
	CHECK(rfc3339_parse(NULL, 0, &got) == RFC3339_SYNTAX);
}

static void
test_detail(void)
{
	const char *expected[] = {
		"ok",
		"expected YYYY-MM-DDTHH:MM:SS[.ffffff] followed by Z or an offset +HH:MM or -HH:MM",
		"the offset (Z, +HH:MM or -HH:MM) is missing",
		"more than 6 fractional digits",
		"no such date",
		"no such time of day",
		"leap seconds are not accepted",
		"the offset is outside -23:59 to +23:59",
		"the instant in UTC is outside years 0001 to 9999",
	};
	int			i;
	int			j;

	CHECK(lengthof(expected) == (size_t) RFC3339_OUT_OF_RANGE + 1);
	for (i = 0; i <= (int) RFC3339_OUT_OF_RANGE; i++)
	{
		const char *d = rfc3339_status_detail((rfc3339_status) i);

		CHECK_MSG(d != NULL, "status %d", i);
		if (d == NULL)
			continue;
		CHECK_MSG(strcmp(d, expected[i]) == 0, "status %d: \"%s\"", i, d);
		CHECK_MSG(d[0] >= 'a' && d[0] <= 'z', "status %d: \"%s\"", i, d);
		CHECK_MSG(d[strlen(d) - 1] != '.', "status %d: \"%s\"", i, d);
		for (j = 0; j < i; j++)
			CHECK_MSG(strcmp(d, rfc3339_status_detail((rfc3339_status) j)) != 0,
					  "statuses %d and %d share a detail", i, j);
	}
	/* an impossible value still yields a string */
	CHECK(rfc3339_status_detail((rfc3339_status) 99) != NULL);
}

static void
test_format(void)
{
	size_t		i;
	char		buf[RFC3339_UTC_MAXLEN + 8];

	for (i = 0; i < lengthof(format_cases); i++)
	{
		const format_case *c = &format_cases[i];
		size_t		len;
		size_t		expected_len = floor_mod_usec(c->unix_us) != 0 ? 27 : 20;
		int64_t		got = SENTINEL;

		memset(buf, 'x', sizeof(buf));
		len = rfc3339_format_utc(c->unix_us, buf);
		CHECK_MSG(strcmp(buf, c->text) == 0, "%lld formatted as \"%s\", expected \"%s\"",
				  (long long) c->unix_us, buf, c->text);
		CHECK_MSG(len == expected_len && len == strlen(buf),
				  "%lld: length %u", (long long) c->unix_us, (unsigned) len);
		CHECK_MSG(buf[len + 1] == 'x', "%lld: wrote past the NUL",
				  (long long) c->unix_us);
		CHECK_MSG(parse_cstr(c->text, &got) == RFC3339_OK && got == c->unix_us,
				  "\"%s\" parsed as %lld", c->text, (long long) got);
	}

	/* named instants */
	rfc3339_format_utc(0, buf);
	CHECK_STR_EQ(buf, "1970-01-01T00:00:00Z");
	rfc3339_format_utc(INT64_C(946684800000000), buf);
	CHECK_STR_EQ(buf, "2000-01-01T00:00:00Z");
	rfc3339_format_utc(INT64_C(-62135596800000000), buf);
	CHECK_STR_EQ(buf, "0001-01-01T00:00:00Z");
	rfc3339_format_utc(INT64_C(253402300799999999), buf);
	CHECK_STR_EQ(buf, "9999-12-31T23:59:59.999999Z");
	rfc3339_format_utc(INT64_C(500000), buf);
	CHECK_STR_EQ(buf, "1970-01-01T00:00:00.500000Z");
	rfc3339_format_utc(INT64_C(1796108400000000), buf);
	CHECK_STR_EQ(buf, "2026-12-01T07:00:00Z");
	rfc3339_format_utc(INT64_C(1796108400000010), buf);
	CHECK_STR_EQ(buf, "2026-12-01T07:00:00.000010Z");

	/* the exact maximum length, NUL at buf[RFC3339_UTC_MAXLEN] */
	memset(buf, 'x', sizeof(buf));
	CHECK(rfc3339_format_utc(RFC3339_MAX_UNIX_US, buf) == RFC3339_UTC_MAXLEN);
	CHECK(buf[RFC3339_UTC_MAXLEN] == '\0');
	CHECK(buf[RFC3339_UTC_MAXLEN + 1] == 'x');

	/* out-of-range input is clamped rather than overrunning the buffer */
	memset(buf, 'x', sizeof(buf));
	CHECK(rfc3339_format_utc(INT64_MIN, buf) == 20);
	CHECK_STR_EQ(buf, "0001-01-01T00:00:00Z");
	CHECK(rfc3339_format_utc(INT64_MAX, buf) == RFC3339_UTC_MAXLEN);
	CHECK_STR_EQ(buf, "9999-12-31T23:59:59.999999Z");
	CHECK(buf[RFC3339_UTC_MAXLEN + 1] == 'x');
}

/*
 * parse(format(x)) == x for pseudo-random x over the whole range, with and
 * without a sub-second part; also format(x) sorts like x.
 */
static void
test_round_trip_random(void)
{
	uint64_t	seed = UINT64_C(20261201);
	uint64_t	span = (uint64_t) (RFC3339_MAX_UNIX_US - RFC3339_MIN_UNIX_US) + 1;
	int			n = 200000;
	int			failures = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		int64_t		x = RFC3339_MIN_UNIX_US + (int64_t) (next_random(&seed) % span);
		int64_t		y;
		int64_t		got = SENTINEL;
		char		bx[RFC3339_UTC_MAXLEN + 1];
		char		by[RFC3339_UTC_MAXLEN + 1];
		size_t		len;
		int			cmp;

		if (i % 2 == 1)
			x -= floor_mod_usec(x);	/* whole seconds */
		y = RFC3339_MIN_UNIX_US + (int64_t) (next_random(&seed) % span);

		len = rfc3339_format_utc(x, bx);
		rfc3339_format_utc(y, by);
		cmp = strcmp(bx, by);
		if (rfc3339_parse(bx, len, &got) != RFC3339_OK || got != x ||
			len != (floor_mod_usec(x) != 0 ? 27u : 20u) ||
			(x < y && cmp >= 0 && floor_mod_usec(x) != 0 && floor_mod_usec(y) != 0) ||
			(x == y && cmp != 0))
		{
			if (failures++ < 5)
				printf("round trip of %lld failed: \"%s\" -> %lld\n",
					   (long long) x, bx, (long long) got);
		}
	}
	CHECK_MSG(failures == 0, "%d of %d random round trips failed", failures, n);

	/* pre-1970 values specifically, around the epoch */
	failures = 0;
	for (i = 0; i < 100000; i++)
	{
		int64_t		x = -(int64_t) (next_random(&seed) % UINT64_C(4000000000000000));
		int64_t		got = SENTINEL;
		char		bx[RFC3339_UTC_MAXLEN + 1];

		if (rfc3339_parse(bx, rfc3339_format_utc(x, bx), &got) != RFC3339_OK ||
			got != x)
			failures++;
	}
	CHECK_MSG(failures == 0, "%d pre-1970 round trips failed", failures);

	/* every microsecond around the epoch and the range limits */
	failures = 0;
	for (i = -3000; i <= 3000; i++)
	{
		int64_t		xs[3];
		int			k;

		xs[0] = i;
		xs[1] = RFC3339_MIN_UNIX_US + 3000 + i;
		xs[2] = RFC3339_MAX_UNIX_US - 3000 + i;
		for (k = 0; k < 3; k++)
		{
			int64_t		got = SENTINEL;
			char		bx[RFC3339_UTC_MAXLEN + 1];

			if (rfc3339_parse(bx, rfc3339_format_utc(xs[k], bx), &got) != RFC3339_OK ||
				got != xs[k])
				failures++;
		}
	}
	CHECK_MSG(failures == 0, "%d near-boundary round trips failed", failures);
}

/*
 * Walk every day from 0001-01-01 to 9999-12-31 with a naive calendar and
 * check that formatting and parsing agree with it, at a varying time of day.
 */
static void
test_every_day(void)
{
	int			y = 1,
				m = 1,
				d = 1;
	int64_t		day = 0;
	int			failures = 0;

	for (;;)
	{
		int64_t		sec_of_day = (day * 7919) % 86400;
		int64_t		usec = (day * 104729) % 1000000;
		int64_t		x = RFC3339_MIN_UNIX_US +
			(day * 86400 + sec_of_day) * 1000000 + usec;
		char		expected[64];
		char		buf[RFC3339_UTC_MAXLEN + 1];
		int64_t		got = SENTINEL;

		if (usec != 0)
			snprintf(expected, sizeof(expected),
					 "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", y, m, d,
					 (int) (sec_of_day / 3600), (int) (sec_of_day / 60 % 60),
					 (int) (sec_of_day % 60), (int) usec);
		else
			snprintf(expected, sizeof(expected),
					 "%04d-%02d-%02dT%02d:%02d:%02dZ", y, m, d,
					 (int) (sec_of_day / 3600), (int) (sec_of_day / 60 % 60),
					 (int) (sec_of_day % 60));

		rfc3339_format_utc(x, buf);
		if (strcmp(buf, expected) != 0 ||
			parse_cstr(expected, &got) != RFC3339_OK || got != x)
		{
			if (failures++ < 5)
				printf("day %lld: \"%s\" vs expected \"%s\"\n",
					   (long long) day, buf, expected);
		}

		if (y == 9999 && m == 12 && d == 31)
			break;
		day++;
		if (++d > test_days_in_month(y, m))
		{
			d = 1;
			if (++m > 12)
			{
				m = 1;
				y++;
			}
		}
	}
	CHECK_MSG(failures == 0, "%d days disagree with the naive calendar", failures);
	/* Python: date(9999, 12, 31).toordinal() - 1 */
	CHECK_I64_EQ(day, 3652058);
	CHECK_I64_EQ(RFC3339_MIN_UNIX_US + (day + 1) * INT64_C(86400000000) - 1,
				 RFC3339_MAX_UNIX_US);
}

/*
 * For every month of every year 0000..9999, the last day is accepted (or,
 * in year 0000, out of range) and the day after it is not a date.
 */
static void
test_month_lengths(void)
{
	int			y;
	int			m;
	int			failures = 0;

	for (y = 0; y <= 9999; y++)
	{
		for (m = 1; m <= 12; m++)
		{
			char		s[32];
			int			dim = test_days_in_month(y, m);
			int64_t		got;
			rfc3339_status expected_last = (y == 0) ? RFC3339_OUT_OF_RANGE : RFC3339_OK;

			snprintf(s, sizeof(s), "%04d-%02d-%02dT12:00:00Z", y, m, dim);
			if (parse_cstr(s, &got) != expected_last)
			{
				if (failures++ < 5)
					printf("\"%s\" rejected\n", s);
			}
			snprintf(s, sizeof(s), "%04d-%02d-%02dT12:00:00Z", y, m, dim + 1);
			if (parse_cstr(s, &got) != RFC3339_BAD_DATE)
			{
				if (failures++ < 5)
					printf("\"%s\" accepted\n", s);
			}
		}
	}
	CHECK_MSG(failures == 0, "%d month-length failures", failures);
}

/* every hh:mm:ss and offset field value 00..99 gets the right status */
static void
test_field_ranges(void)
{
	int			v;
	int			failures = 0;

	for (v = 0; v <= 99; v++)
	{
		char		s[40];
		int64_t		got;

		snprintf(s, sizeof(s), "2026-12-01T%02d:00:00Z", v);
		if (parse_cstr(s, &got) != (v <= 23 ? RFC3339_OK : RFC3339_BAD_TIME))
			failures++;
		snprintf(s, sizeof(s), "2026-12-01T12:%02d:00Z", v);
		if (parse_cstr(s, &got) != (v <= 59 ? RFC3339_OK : RFC3339_BAD_TIME))
			failures++;
		snprintf(s, sizeof(s), "2026-12-01T12:00:%02dZ", v);
		if (parse_cstr(s, &got) != (v <= 59 ? RFC3339_OK :
									v == 60 ? RFC3339_LEAP_SECOND : RFC3339_BAD_TIME))
			failures++;
		snprintf(s, sizeof(s), "2026-12-01T12:00:00+%02d:00", v);
		if (parse_cstr(s, &got) != (v <= 23 ? RFC3339_OK : RFC3339_BAD_OFFSET))
			failures++;
		snprintf(s, sizeof(s), "2026-12-01T12:00:00-00:%02d", v);
		if (parse_cstr(s, &got) != (v <= 59 ? RFC3339_OK : RFC3339_BAD_OFFSET))
			failures++;
		snprintf(s, sizeof(s), "2026-%02d-01T12:00:00Z", v);
		if (parse_cstr(s, &got) != (v >= 1 && v <= 12 ? RFC3339_OK : RFC3339_BAD_DATE))
			failures++;
	}
	CHECK_MSG(failures == 0, "%d field-range failures", failures);
}

/* 1 to 6 fractional digits scale correctly; 7 to 9 are too many */
static void
test_fraction_digits(void)
{
	static const struct
	{
		const char *input;
		int64_t		usec;
	}			cases[] = {
		{"1970-01-01T00:00:00.1Z", 100000},
		{"1970-01-01T00:00:00.12Z", 120000},
		{"1970-01-01T00:00:00.123Z", 123000},
		{"1970-01-01T00:00:00.1234Z", 123400},
		{"1970-01-01T00:00:00.12345Z", 123450},
		{"1970-01-01T00:00:00.123456Z", 123456},
		{"1970-01-01T00:00:00.000001Z", 1},
		{"1970-01-01T00:00:00.000010Z", 10},
		{"1970-01-01T00:00:00.9Z", 900000},
		{"1970-01-01T00:00:00.09Z", 90000},
		{"1969-12-31T23:59:59.5Z", -500000},
		{"1969-12-31T23:59:59.000001Z", -999999},
	};
	size_t		i;
	int64_t		got;

	for (i = 0; i < lengthof(cases); i++)
	{
		got = SENTINEL;
		CHECK_MSG(parse_cstr(cases[i].input, &got) == RFC3339_OK &&
				  got == cases[i].usec, "\"%s\" gave %lld",
				  cases[i].input, (long long) got);
	}
	CHECK(parse_cstr("1970-01-01T00:00:00.1234567Z", &got) == RFC3339_FRACTION_TOO_LONG);
	CHECK(parse_cstr("1970-01-01T00:00:00.12345678Z", &got) == RFC3339_FRACTION_TOO_LONG);
	CHECK(parse_cstr("1970-01-01T00:00:00.123456789Z", &got) == RFC3339_FRACTION_TOO_LONG);
}

/*
 * The offset an instant was written with, and the instant written back at
 * that offset: what the course's service (Python's datetime under pydantic
 * 2) would have written.  Expected values from Python's datetime.
 */
typedef struct offset_case
{
	const char *input;
	int			offset;
	const char *course;
} offset_case;

static void
test_offset(void)
{
	static const offset_case cases[] = {
		{"2026-12-01T10:00:00+03:00", 180, "2026-12-01T10:00:00+03:00"},
		{"2026-12-01T07:00:00Z", 0, "2026-12-01T07:00:00Z"},
		{"2026-12-01T07:00:00z", 0, "2026-12-01T07:00:00Z"},
		{"2026-12-01t07:00:00+00:00", 0, "2026-12-01T07:00:00Z"},
		{"2026-12-01T07:00:00-00:00", 0, "2026-12-01T07:00:00Z"},
		{"2026-12-01T02:00:00-05:00", -300, "2026-12-01T02:00:00-05:00"},
		{"2026-12-01T07:00:00.5+05:30", 330, "2026-12-01T07:00:00.500000+05:30"},
		{"2026-12-01T07:00:00.000000+01:00", 60, "2026-12-01T07:00:00+01:00"},
		{"2026-12-01T00:30:00+23:59", 1439, "2026-12-01T00:30:00+23:59"},
		{"2026-12-01T23:30:00-23:59", -1439, "2026-12-01T23:30:00-23:59"},
		{"0001-01-01T00:00:00Z", 0, "0001-01-01T00:00:00Z"},
		{"0000-12-31T23:00:00-01:00", -60, "0000-12-31T23:00:00-01:00"},
		{"9999-12-31T23:59:59.999999Z", 0, "9999-12-31T23:59:59.999999Z"},
		{"2024-02-29T23:59:59.123456-00:01", -1, "2024-02-29T23:59:59.123456-00:01"},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		int64_t		got;
		int64_t		plain;
		int			offset = 12345;
		char		buf[RFC3339_OFFSET_MAXLEN + 1];
		size_t		n;

		CHECK_MSG(rfc3339_parse_offset(cases[i].input, strlen(cases[i].input), &got, &offset) == RFC3339_OK,
				  "%s does not parse", cases[i].input);
		CHECK_MSG(offset == cases[i].offset, "%s: offset %d", cases[i].input, offset);
		CHECK(rfc3339_parse(cases[i].input, strlen(cases[i].input), &plain) == RFC3339_OK && plain == got);
		n = rfc3339_format_offset(got, offset, buf);
		CHECK_MSG(strcmp(buf, cases[i].course) == 0 && n == strlen(buf) && n <= RFC3339_OFFSET_MAXLEN,
				  "%s: written as %s", cases[i].input, buf);
	}
	/* the longest form fits */
	{
		char		buf[RFC3339_OFFSET_MAXLEN + 1];

		CHECK(rfc3339_format_offset(INT64_C(1796108400123456), -1439, buf) == RFC3339_OFFSET_MAXLEN);
	}
}

int
main(void)
{
	test_constants();
	test_valid();
	test_invalid();
	test_truncated();
	test_embedded_nul();
	test_detail();
	test_format();
	test_fraction_digits();
	test_field_ranges();
	test_month_lengths();
	test_round_trip_random();
	test_every_day();
	test_offset();

	UNIT_DONE("test_rfc3339");
}
