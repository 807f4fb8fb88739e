# bench/profile.sh: sourced by `tools/bench profile` (the cluster is up and
# the benchmark database set up).  Where okno_create_booking's time goes:
#
#   1. perf record -g on one backend during a loop of CALLS creates in one
#      transaction (the CPU loop of scenario 1: per-call costs, no commit)
#   2. perf record -g on the backend of a 1-client pgbench run of
#      create_okno.sql (one create per transaction: adds parse/bind, commit,
#      WAL flush, NOTIFY at commit), synchronous_commit on and off
#
# bench/profile.py turns each `perf script` into a breakdown; the report is
# OUT/PROFILE.md.  postgres is Debian's stripped build with frame pointers:
# exported functions resolve, static ones show as addresses and count for
# their nearest named caller.

PROFILE_HZ=${BENCH_PROFILE_HZ:-4999}
PROFILE_SECS=${BENCH_PROFILE_SECONDS:-5}

backend_pid() {	# backend_pid APPLICATION_NAME
	local pid="" i
	for i in $(seq 100); do
		pid=$(q "SELECT pid FROM pg_stat_activity WHERE application_name = '$1' AND state = 'active' LIMIT 1")
		[ -n "$pid" ] && break
		sleep 0.05
	done
	echo "$pid"
}

profile_loop() {
	local pid perf_pid res
	say "profile 1: perf record -g during $CALLS okno creates in one transaction"
	PGAPPNAME=okno-profile "${PSQL[@]}" -At -F $'\t' >"$OUT/loop.out" <<-EOF &
	BEGIN; SELECT count(*) FROM bench.loop_okno(3) \g /dev/null
	ROLLBACK;
	SELECT pg_sleep(2) \g /dev/null
	BEGIN; SELECT calls, cpu_ns, wall_ns FROM bench.loop_okno(1); ROLLBACK;
	BEGIN; SELECT calls, cpu_ns, wall_ns FROM bench.loop_empty(1, 10); ROLLBACK;
	EOF
	local psql_pid=$!
	pid=$(backend_pid okno-profile)
	[ -n "$pid" ] || die "no backend to profile"
	# wait for the pg_sleep, then record until the session ends
	for _ in $(seq 400); do
		[ "$(q "SELECT query LIKE '%pg_sleep%' FROM pg_stat_activity WHERE pid = $pid")" = t ] && break
		sleep 0.05
	done
	perf record -F "$PROFILE_HZ" -g -p "$pid" -o "$OUT/loop.perf.data" >"$OUT/loop.perf.log" 2>&1 &
	perf_pid=$!
	wait "$psql_pid"
	kill -INT "$perf_pid" 2>/dev/null || true
	wait "$perf_pid" 2>/dev/null || true
	res=$(head -n 1 "$OUT/loop.out")
	perf script -i "$OUT/loop.perf.data" 2>/dev/null >"$OUT/loop.perf.txt"
	printf 'loop\t%s\n' "$res" >>"$OUT/profile_meta.tsv"
	printf 'loop_empty\t%s\n' "$(sed -n 2p "$OUT/loop.out")" >>"$OUT/profile_meta.tsv"
}

profile_pgbench() {	# profile_pgbench SYNC
	local sync=$1 pid perf_pid pgb_pid log secs=$((PROFILE_SECS + 2))
	say "profile 2: perf record -g on a 1-client pgbench create run, synchronous_commit $sync"
	RUN=$((RUN + 100))
	log=$OUT/pgbench-$sync.log
	PGAPPNAME=okno-profile-pgbench PGOPTIONS="-c synchronous_commit=$sync" \
		"$PGBIN/pgbench" -n -M prepared -c 1 -j 1 -T "$secs" -f bench/pgbench/create_okno.sql \
		-D run=$RUN -D seq=0 bench >"$log" 2>&1 &
	pgb_pid=$!
	pid=$(backend_pid okno-profile-pgbench)
	[ -n "$pid" ] || die "no pgbench backend to profile"
	sleep 1
	perf record -F "$PROFILE_HZ" -g -p "$pid" -o "$OUT/pgbench-$sync.perf.data" -- sleep "$PROFILE_SECS" \
		>"$OUT/pgbench-$sync.perf.log" 2>&1 || true
	wait "$pgb_pid" || true
	perf script -i "$OUT/pgbench-$sync.perf.data" 2>/dev/null >"$OUT/pgbench-$sync.perf.txt"
	printf 'pgbench_%s\t%s\t%s\n' "$sync" "$(sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p' "$log")" "$PROFILE_SECS" >>"$OUT/profile_meta.tsv"
}

profile_all() {
	command -v perf >/dev/null || die "perf is missing (apt-get install linux-perf)"
	printf 'okno_so\t%s\n' "$(md5sum "$($PG_CONFIG --pkglibdir)/okno.so" | cut -c1-12)" >>"$OUT/profile_meta.tsv"
	printf 'hz\t%s\n' "$PROFILE_HZ" >>"$OUT/profile_meta.tsv"
	printf 'git\t%s\n' "$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo '+changes')" >>"$OUT/profile_meta.tsv"
	profile_loop
	profile_pgbench on
	profile_pgbench off
	python3 bench/profile.py "$OUT"
	say "profile: $OUT/PROFILE.md"
}
