#!/usr/bin/env bash
# examples/fastapi-booking/run_tests.sh
#
# Runs the example's tests (test_app.py, pytest with FastAPI's TestClient
# and one real uvicorn server) against the PostgreSQL server that libpq's
# environment names: PGHOST, PGPORT, PGUSER (a superuser: the tests create
# and drop their own database). okno must be installed in that server.
#
# Installs nothing. Needs Debian's python3 with python3-fastapi,
# python3-psycopg, python3-uvicorn, python3-httpx and python3-pytest.
#
# The last line is "N passed, N failed"; the exit status is non-zero when
# anything failed, the tests could not run, or they ran longer than
# OKNO_EXAMPLE_TEST_TIMEOUT seconds (default 300).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3   # Debian's python, whatever is first on PATH
limit=${OKNO_EXAMPLE_TEST_TIMEOUT:-300}

finish() {	# finish PASSED FAILED
	echo "$1 passed, $2 failed"
	[ "$2" -eq 0 ]
	exit $?
}

if ! "$PY" -c 'import fastapi, psycopg, uvicorn, httpx, pytest' 2>/dev/null; then
	echo "not ok - the example needs Debian's python3 packages:" >&2
	echo "    apt-get install -y python3-fastapi python3-psycopg python3-uvicorn python3-httpx python3-pytest" >&2
	finish 0 1
fi

unset DATABASE_URL PGDATABASE PGSERVICE
export OKNO_EXAMPLE_TEST_DB=okno_fastapi_$$
export PYTHONDONTWRITEBYTECODE=1

# The server is reachable and has okno to install.
if ! "$PY" - <<'EOF' >&2
import sys, psycopg
try:
    with psycopg.connect("dbname=postgres", connect_timeout=10) as c:
        if c.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'okno'").fetchone() is None:
            sys.exit("not ok - okno is not installed in this server (make install)")
except psycopg.Error as e:
    sys.exit(f"not ok - cannot connect (PGHOST, PGPORT, PGUSER): {e}")
EOF
then
	finish 0 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/okno-fastapi.XXXXXX")
trap 'rm -rf "$work"' EXIT

# timeout signals its whole process group, so a uvicorn started by the tests
# goes down with pytest.
cd "$here"
timeout -k 10 "$limit" "$PY" -m pytest -v -p no:cacheprovider \
	--junitxml="$work/junit.xml" test_app.py
rc=$?
[ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "not ok - the tests ran longer than ${limit}s" >&2

# If pytest died before its fixtures' teardown, drop what it left: the
# database, and the two roles of the least-privilege test.
"$PY" - <<'EOF' >&2 || true
import os, psycopg
db = os.environ["OKNO_EXAMPLE_TEST_DB"]
with psycopg.connect("dbname=postgres", autocommit=True, connect_timeout=10) as c:
    c.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    c.execute(f'DROP ROLE IF EXISTS "{db}_app", "{db}_relay"')
EOF

read -r passed failed < <("$PY" - "$work/junit.xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print(0, 0)
    sys.exit()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
n = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
print(n - bad - skipped, bad)
EOF
)
# A run that did not end cleanly counts at least one failure.
if [ $rc -ne 0 ] && [ "${failed:-0}" -eq 0 ]; then failed=1; fi
finish "${passed:-0}" "${failed:-1}"
