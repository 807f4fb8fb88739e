# okno: idempotent bookings and a transactional outbox inside PostgreSQL.
#
#   make && sudo make install      build and install into the PostgreSQL that
#                                  pg_config names (PG_CONFIG=... to choose)
#   make test                      the whole suite on a throwaway cluster
#   make test-citus                okno on a throwaway Citus cluster (root)
#   make demo                      the course scenario on a throwaway cluster
#   make demo-adopt                okno in a database the course built, likewise
#   make unit                      the pure-C unit tests (no server needed)
#   make installcheck              regress + isolation against a running server
#                                  (PGHOST, PGPORT, PGUSER as usual)

EXTENSION    = okno
EXTVERSION   = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" okno.control)

MODULE_big   = okno
OBJS = \
	src/okno.o \
	src/pure/rfc3339.o \
	src/pure/booking_form.o \
	src/pure/uuid7.o \
	src/pure/jcs.o \
	src/pure/jcs_number.o \
	src/pure/name_rule.o \
	src/pure/bucket.o \
	src/base/schema.o \
	src/base/bind.o \
	src/base/owner.o \
	src/base/errors.o \
	src/base/relation.o \
	src/base/citus.o \
	src/base/direct.o \
	src/base/unixtime.o \
	src/base/digest.o \
	src/keys/key_args.o \
	src/keys/key_lock.o \
	src/keys/contract.o \
	src/keys/tombstone.o \
	src/keys/key_table.o \
	src/keys/claim.o \
	src/keys/handler.o \
	src/keys/canonical_json.o \
	src/keys/idempotent.o \
	src/booking/payload.o \
	src/booking/fingerprint.o \
	src/booking/lock.o \
	src/booking/response.o \
	src/booking/key_lookup.o \
	src/booking/sql_write.o \
	src/booking/direct_tables.o \
	src/booking/direct_xact.o \
	src/booking/direct_write.o \
	src/booking/create.o \
	src/booking/get_cancel.o \
	src/outbox/event.o \
	src/outbox/wake.o \
	src/outbox/emit.o \
	src/outbox/event_bucket.o \
	src/outbox/shards.o \
	src/outbox/fan_out.o \
	src/delivery/drain.o \
	src/delivery/drain_outbox.o \
	src/delivery/drain_buckets.o \
	src/delivery/drain_subscriber.o \
	src/delivery/handout.o \
	src/delivery/wait.o \
	src/delivery/subscriber.o \
	src/delivery/routine.o \
	src/delivery/failure.o \
	src/delivery/deadletter.o \
	src/maintenance/tables.o \
	src/maintenance/prepare.o \
	src/maintenance/adopt.o \
	src/maintenance/purge.o \
	src/maintenance/purge_cluster.o \
	src/maintenance/purge_walk.o \
	src/maintenance/verify.o \
	src/maintenance/counts.o

# the groups' headers are included by path from src/ (src/okno.c)
# (override: a PG_CPPFLAGS given on the command line, tools/sanitize, keeps it)
override PG_CPPFLAGS += -I$(srcdir)/src

# The current version's install script is generated from its one editable
# source, sql/okno.sql (docs/RELEASING.md); DATA is what is installed as it
# is: every update script.  No older version's full script is installed,
# so no role can install an older version (the upgrade tests bring their
# own, test/upgrade/base, into a test installation of their own).
DATA_built   = sql/okno--$(EXTVERSION).sql
DATA         = $(wildcard sql/okno--*--*.sql)

# pg_regress: inputs in test/sql, expected output in expected/
REGRESS      = setup scenario key_rule payload_rules vectors create settings \
               drain drain_hint drain_batch drain_read failures cancel purge status verify prepared \
               error_catalogue shadowing roles direct create_as_insert wait order subscribers \
               idempotent tombstones emit course_vectors course_tables binding \
               other_schema distribute trusted
REGRESS_OPTS = --inputdir=test

# pg_regress suites of updates from every earlier version: they install
# older versions, whose full scripts only a test installation has
# (tools/run's history cluster; `make installcheck` leaves them out)
REGRESS_HISTORY = upgrade upgrade_paths upgrade_trusted

# pg_isolation_regress: specs in test/specs, expected output in expected/
ISOLATION    = same_key_read_committed same_key_repeatable_read slot_race \
               drainers drain_rollback course_lock purge_concurrent cancel_race \
               requeue_notify drain_cursor drain_hint_rollback wait_wake \
               order_drainers order_requeue subscriber_order subscriber_in_flight \
               subscriber_forget subscriber_unsubscribe subscriber_cut binding_sessions \
               idempotent_same_key key_claim emit_order
ISOLATION_OPTS = --inputdir=test --outputdir=.

EXTRA_CLEAN  = results output_iso regression.diffs regression.out \
               test/unit/*.o $(DATA_built)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

ifneq ($(wildcard $(PGXS)),)
include $(PGXS)
else
# Without the server headers only the bootstrap targets below work; they
# install what is missing (as root) before building.
all install installcheck:
	@echo "PGXS not found through '$(PG_CONFIG)': install the server headers," >&2
	@echo "    apt-get install postgresql-server-dev-15" >&2
	@echo "or run 'make test' / 'make demo' as root, which install them." >&2
	@exit 1
endif

# sql/okno--VERSION.sql is sql/okno.sql with its first line naming the
# version's file (/* okno.sql: ... */ becomes /* okno--VERSION.sql: ... */);
# VERSION is okno.control's default_version.  Outside PGXS too, so that
# tools and tests can make just this file.
$(DATA_built): sql/okno.sql
	@mkdir -p $(@D)
	sed '1s|^/\* okno\.sql: |/* okno--$(EXTVERSION).sql: |' $< >$@.tmp && mv $@.tmp $@

# `make install` removes the full scripts of older versions that an
# earlier `make install` left in the extension directory (okno 0.7.0 and
# before installed some): a version that can be installed at all can be
# installed by a role that is not a superuser (okno is trusted), and only
# the current one is safe to install (docs/RELEASING.md).  Update scripts
# stay: they take an existing install forward.
install: remove-old-scripts
remove-old-scripts:
	@for f in '$(DESTDIR)$(datadir)/$(datamoduledir)'/$(EXTENSION)--*.sql; do \
		case "$${f##*/}" in \
		$(EXTENSION)--*--*.sql | $(EXTENSION)--$(EXTVERSION).sql) ;; \
		*) [ ! -e "$$f" ] || { rm -f "$$f" && echo "removed $$f (an older version's full script)"; } ;; \
		esac; \
	done

# PGXS does not track header dependencies unless PostgreSQL was configured
# with --enable-depend: rebuild every object when a header changes.
$(OBJS): $(wildcard src/*.h src/*/*.h)

# okno-relay, the delivery worker (a libpq client program)
-include relay/relay.mk

.PHONY: test test-all test-citus demo demo-adopt unit tap dist example fuzz sanitize bench remove-old-scripts

# The full suite, on a throwaway cluster; the last line is "N passed, N failed".
test:
	@tools/run test

# The server-dependent suites on each PostgreSQL that Debian ships, each in
# a cached Debian root (PG_VERSIONS, default "15 17 18"), then a major
# upgrade from 15; one summary line per version, the total last.  Root only.
test-all:
	@tools/test-all

# okno on a Citus cluster (a coordinator and two workers, throwaway, as
# the postgres user): Citus built once from the vendored archive and
# installed, then the suites of test/citus on the coordinator and on a
# worker; the last line is "N passed, N failed".  Root only (the build's
# Debian packages, installing Citus); CITUS_INSTALL_OKNO=0 leaves the
# installed okno as it is.
test-citus:
	@tools/citus test

# The course scenario, step by step, on a throwaway cluster.
demo:
	@tools/run demo

# okno in a database the course's migrations and service filled: the tables
# stay the course's.
demo-adopt:
	@tools/run demo-adopt

unit:
	@$(MAKE) -s -C test/unit

# The course's FastAPI service on okno, live on 127.0.0.1:8000 (Ctrl-C stops it).
example:
	@tools/example

# libFuzzer on the pure C parts, FUZZ_SECONDS (60) per target.
fuzz:
	@$(MAKE) -s -C test/fuzz run

# The regress and isolation suites against an ASan/UBSan build of okno.
sanitize:
	@tools/sanitize

# Benchmarks side by side with their baselines (docs/BENCHMARKS.md);
# BENCH_QUICK=1 for a two-minute run.
bench:
	@tools/bench

# The PGXN distribution: okno-VERSION.zip of the committed tree.
dist:
	git archive --format zip --prefix=$(EXTENSION)-$(EXTVERSION)/ -o $(EXTENSION)-$(EXTVERSION).zip HEAD
	@echo "built $(EXTENSION)-$(EXTVERSION).zip"

# The crash, kill -9 and failover tests alone (needs okno installed).
tap:
	@tools/tap
