
# Copyright (c) 2026, the okno authors
#
# 004_logical_cdc: okno's outbox read by PostgreSQL's own logical
# replication, as a change-data-capture tool (Debezium's PostgreSQL
# connector, which reads the same pgoutput stream) would.
#
# A publisher (wal_level = logical) with okno publishes its outbox; a
# subscriber with okno's tables subscribes, and an ALWAYS trigger there
# numbers the events as they arrive.  On the publisher: bookings and a
# cancellation in autocommit, a create in a transaction prepared for
# two-phase commit and committed after later ones, a create that rolls back,
# a slot that is busy (no event), drains and a failure (updates of the
# outbox).  On the subscriber: every committed event arrives exactly once
# (none of the rolled-back one), in commit order (the prepared one after
# those committed before it, although its id is smaller), with its kind and
# payload as written; the updates (delivered_at, attempts) arrive too.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->append_conf('postgresql.conf', "max_prepared_transactions = 4\n");
$pub->start;

my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->start;

my $setup = q{
CREATE EXTENSION okno CASCADE;
DO $$ BEGIN PERFORM okno_create_tables(); END $$;
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('room'), ('hall');
};
$pub->safe_psql('postgres', $setup);
$sub->safe_psql('postgres', $setup);

$pub->safe_psql('postgres',
	'CREATE PUBLICATION okno_cdc FOR TABLE outbox');
$sub->safe_psql(
	'postgres', q{
CREATE TABLE arrivals (n bigserial PRIMARY KEY, event_id uuid NOT NULL, kind text NOT NULL);
CREATE FUNCTION note_arrival() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.arrivals (event_id, kind) VALUES (NEW.id, NEW.kind);  -- apply runs with an empty search_path
  RETURN NEW;
END $$;
CREATE TRIGGER note_arrival AFTER INSERT ON outbox
  FOR EACH ROW EXECUTE FUNCTION note_arrival();
-- triggers of a subscription's apply run only when ALWAYS
ALTER TABLE outbox ENABLE ALWAYS TRIGGER note_arrival;
});
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION okno_cdc CONNECTION '$connstr' PUBLICATION okno_cdc");
$sub->wait_for_subscription_sync($pub, 'okno_cdc');
pass('the subscriber subscribes to the outbox');

sub payload
{
	my ($resource, $hour) = @_;
	return sprintf(
		'{"resource_id":%d,"starts_at":"2030-01-01T%02d:00:00Z","ends_at":"2030-01-01T%02d:30:00Z"}',
		$resource, $hour, $hour);
}

sub create
{
	my ($key, $resource, $hour) = @_;
	return $pub->safe_psql('postgres',
		"SELECT okno_create_booking(1, '$key', '" . payload($resource, $hour) . "') ->> 'id'");
}

# the events of the publisher, by booking, in the order they were written
sub event_of
{
	my ($booking, $kind) = @_;
	return $pub->safe_psql('postgres',
		"SELECT id FROM outbox WHERE payload ->> 'booking_id' = '$booking' AND kind = '$kind'");
}

# a create prepared first (its event id is the smallest) and committed last
$pub->safe_psql(
	'postgres', q{
BEGIN;
SELECT okno_create_booking(2, 'prepared', '{"resource_id":2,"starts_at":"2030-01-02T10:00:00Z","ends_at":"2030-01-02T11:00:00Z"}');
PREPARE TRANSACTION 'okno_cdc';
});
my @expected;
my @bookings;
for my $i (1 .. 10)
{
	my $b = create("k$i", 1, $i);
	push @bookings, $b;
}
# a create that rolls back, and one whose slot is taken: no event
$pub->safe_psql(
	'postgres', q{
BEGIN;
SELECT okno_create_booking(1, 'rolled-back', '{"resource_id":1,"starts_at":"2030-01-03T10:00:00Z","ends_at":"2030-01-03T11:00:00Z"}');
ROLLBACK;
});
my ($ret) = $pub->psql('postgres',
	"SELECT okno_create_booking(2, 'busy', '" . payload(1, 1) . "')");
isnt($ret, 0, 'a create into a taken slot fails (and writes no event)');
my $cancelled = $bookings[2];
$pub->safe_psql('postgres', "SELECT okno_cancel_booking(1, $cancelled)");
$pub->safe_psql('postgres', "COMMIT PREPARED 'okno_cdc'");
my $prepared = $pub->safe_psql('postgres',
	"SELECT response_body ->> 'id' FROM idempotency WHERE request_key = 'prepared'");

push @expected, event_of($_, 'booking_created') for @bookings;
push @expected, event_of($cancelled, 'booking_cancelled');
push @expected, event_of($prepared, 'booking_created');

# deliveries and a failure: updates of the outbox rows
$pub->safe_psql('postgres', "BEGIN; SELECT count(*) FROM okno_drain(5); COMMIT;");
$pub->safe_psql(
	'postgres', q{
SET okno.retry_base = '1h';
BEGIN;
SELECT okno_record_failure(event_id, 'down') FROM okno_drain(1);
COMMIT;
});

$pub->wait_for_catchup('okno_cdc');

my $arrived = $sub->safe_psql('postgres', 'SELECT event_id FROM arrivals ORDER BY n');
is($arrived, join("\n", @expected),
	'every committed event arrives once, in commit order (the prepared one last)');
my $smallest = $pub->safe_psql('postgres', 'SELECT min(id::text) FROM outbox');
is(event_of($prepared, 'booking_created'), $smallest,
	'... though the prepared create has the smallest id');
is( $sub->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT event_id) FROM arrivals'),
	'12|12',
	'12 events, no duplicate, none of the rolled-back create');

my $rows = q{SELECT string_agg(format('%s %s %s %s %s %s', id, kind, payload, delivered_at IS NOT NULL,
                                      attempts, last_error), E'\n' ORDER BY id) FROM outbox};
is($sub->safe_psql('postgres', $rows), $pub->safe_psql('postgres', $rows),
	'kinds, payloads, deliveries and the failure are the same on both sides');

$sub->stop;
$pub->stop;
done_testing();
