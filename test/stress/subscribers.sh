#!/usr/bin/env bash
# subscribers: named subscribers and the default one drained side by side
# under a concurrent load, every event counted per subscriber
# (test/stress/subscribers.py says what runs and what is checked).
#
# Runs against the cluster in PGHOST/PGPORT/PGUSER (as under tools/run).
#   OKNO_STRESS_SECONDS  duration (default 30)
#   OKNO_STRESS_SEED     the seed of every client's choices (default: random, printed)
set -u
here=$(cd "$(dirname "$0")" && pwd)
exec timeout --kill-after=30 $((${OKNO_STRESS_SECONDS:-30} + 400)) /usr/bin/python3 "$here/subscribers.py"
