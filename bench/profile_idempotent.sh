# bench/profile_idempotent.sh: sourced by `tools/bench profile-idempotent`
# (the cluster is up and the benchmark database set up).  Where scenario
# 8's time goes, one call per transaction: perf record -g on the backend of
# each loop of bench/idempotent.sql (okno_idempotent with the SQL handler,
# the BEGIN ATOMIC one and the PL/pgSQL one, the PL/pgSQL baseline, the
# handlers alone, the replays, the empty loop), CALLS calls after WARM
# warm-up calls, as scenario 8 runs them (synchronous_commit off).
#
# bench/profile_idempotent.py turns each `perf script` into a per-call
# breakdown; the report is OUT/PROFILE.md.  postgres is Debian's stripped
# build with frame pointers: exported functions resolve, static ones show as
# addresses and count for their nearest named caller.

PROFILE_HZ=${BENCH_PROFILE_HZ:-4999}
PROFILE_KINDS=${BENCH_PROFILE_KINDS:-"empty okno_sql okno_sql_atomic okno_plpgsql plpgsql handler_sql handler_sql_atomic handler_plpgsql okno_replay plpgsql_replay"}

# the call of each kind (set and scope filled in), as scenario 8's s8_tx
profile_call() {	# profile_call KIND SET SCOPE
	case $1 in
	empty) echo "CALL bench.tx_empty($2, '$3')" ;;
	okno_sql | okno_replay) echo "CALL bench.tx_okno($2, '$3', 'bench.pay_sql(jsonb)')" ;;
	okno_sql_atomic) echo "CALL bench.tx_okno($2, '$3', 'bench.pay_sql_atomic(jsonb)')" ;;
	okno_plpgsql) echo "CALL bench.tx_okno($2, '$3', 'bench.pay_plpgsql(jsonb)')" ;;
	handler_sql_atomic) echo "CALL bench.tx_handler($2, '$3', 'bench.pay_sql_atomic(jsonb)')" ;;
	plpgsql | plpgsql_replay) echo "CALL bench.tx_plpgsql($2, '$3')" ;;
	handler_sql) echo "CALL bench.tx_handler($2, '$3', 'bench.pay_sql(jsonb)')" ;;
	handler_plpgsql) echo "CALL bench.tx_handler($2, '$3', 'bench.pay_plpgsql(jsonb)')" ;;
	esac
}

profile_kind() {	# profile_kind KIND
	local kind=$1 sc wsc pid perf_pid psql_pid res
	case $kind in
	*_replay) sc=stored wsc=stored ;;
	*) sc=p$kind wsc=pw$kind ;;
	esac
	say "profile: $kind, $CALLS calls, one per transaction"
	# (the WAL written by the timed loop: the insert position before and after)
	PGAPPNAME=okno-profile PGOPTIONS="-c synchronous_commit=off" "${PSQL[@]}" -At -F $'\t' \
		-c "$(profile_call "$kind" 22 "$wsc")" -c "SELECT pg_sleep(2)" -c "SELECT pg_current_wal_insert_lsn()" \
		-c "$(profile_call "$kind" 21 "$sc")" -c "SELECT pg_current_wal_insert_lsn()" >"$OUT/$kind.out" &
	psql_pid=$!
	pid=
	for _ in $(seq 600); do
		pid=$(q "SELECT pid FROM pg_stat_activity WHERE application_name = 'okno-profile' AND query LIKE '%pg_sleep%'")
		[ -n "$pid" ] && break
		sleep 0.05
	done
	[ -n "$pid" ] || die "no backend to profile"
	perf record -F "$PROFILE_HZ" -g -p "$pid" -o "$OUT/$kind.perf.data" >"$OUT/$kind.perf.log" 2>&1 &
	perf_pid=$!
	wait "$psql_pid" || die "the $kind loop failed"
	kill -INT "$perf_pid" 2>/dev/null || true
	wait "$perf_pid" 2>/dev/null || true
	# kind calls cpu_ns wall_ns wal_lsn_before wal_lsn_after
	res=$(tail -n 2 "$OUT/$kind.out" | head -n 1)
	printf '%s\t%s\t%s\t%s\n' "$kind" "$res" "$(tail -n 3 "$OUT/$kind.out" | head -n 1)" \
		"$(tail -n 1 "$OUT/$kind.out")" >>"$OUT/profile_meta.tsv"
	perf script -i "$OUT/$kind.perf.data" 2>/dev/null >"$OUT/$kind.perf.txt"
	rm -f "$OUT/$kind.perf.data"
	case $sc in
	p*) "${PSQL[@]}" -c "CALL bench.idem_forget('$sc')" -c "CALL bench.idem_forget('$wsc')" \
		-c "VACUUM bench.payments, okno_key, plp.idem_keys" ;;
	esac
}

profile_idempotent_all() {
	local kind
	command -v perf >/dev/null || die "perf is missing (apt-get install linux-perf)"
	{
		printf 'okno_so\t%s\n' "$(md5sum "$($PG_CONFIG --pkglibdir)/okno.so" | cut -c1-12)"
		printf 'hz\t%s\n' "$PROFILE_HZ"
		printf 'git\t%s\n' "$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo '+changes')"
		printf 'postgres\t%s\n' "$(q 'SELECT version()')"
	} >>"$OUT/profile_meta.tsv"
	"${PSQL[@]}" -c "SELECT bench.make_idem_args(21, $CALLS)" -c "SELECT bench.make_idem_args(22, $WARM)" \
		-c "CALL bench.idem_store(21, 'stored')" -c "CALL bench.idem_store(22, 'stored')" \
		-c "TRUNCATE bench.payments" -c "VACUUM ANALYZE bench.idem_args, bench.payments, okno_key, plp.idem_keys" >/dev/null
	for kind in $PROFILE_KINDS; do
		profile_kind "$kind"
	done
	python3 bench/profile_idempotent.py "$OUT"
	say "profile: $OUT/PROFILE.md"
}
