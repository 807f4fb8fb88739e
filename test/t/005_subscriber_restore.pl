
# Copyright (c) 2026, the okno authors
#
# 005_subscriber_restore: a dump with subscribers restored into another
# cluster.  A subscriber's position is a snapshot of the cluster it was
# taken in; the other cluster's transaction ids are unrelated (here: far
# lower, so that its new events would look old to the restored snapshot).
# okno_subscriber keeps the system identifier of the snapshot's cluster, and
# the first drain in the other one copies every event since the
# subscription that the subscriber has no state for and had not copied:
# one whose transaction the restored snapshot does not see finished (an
# xid of the source, as the restored created_xid is), or one that began
# after the last copy (every event written in the target).  Events handed
# out as they were copied have no state.  So after the restore the
# subscriber gets the events it had not copied yet (one of a transaction
# that began before the last copy and committed after it) and the new one,
# not those it had delivered, nor the one from before it subscribed.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $a = PostgreSQL::Test::Cluster->new('source');
$a->init;
$a->append_conf('postgresql.conf', 'max_prepared_transactions = 2');
$a->start;

my $b = PostgreSQL::Test::Cluster->new('target');
$b->init;
$b->start;

sub book
{
	my ($node, $db, $key, $day) = @_;
	return $node->safe_psql($db,
		"SELECT okno_create_booking(1, '$key', jsonb_build_object('resource_id', 1,"
		  . " 'starts_at', '2026-12-${day}T10:00:00Z', 'ends_at', '2026-12-${day}T11:00:00Z')) ->> 'id'");
}

$a->safe_psql(
	'postgres', q{
CREATE EXTENSION okno CASCADE;
DO $$ BEGIN PERFORM okno_create_tables(); END $$;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
});
book($a, 'postgres', 'k0', '10');	# before the subscription

# the source cluster's transaction ids run far ahead of the target's
$a->safe_psql('postgres', join('', map { "SELECT pg_current_xact_id();\n" } 1 .. 3000));
$a->safe_psql('postgres', "SELECT okno_subscribe('journal')");
book($a, 'postgres', 'k1', '11');
book($a, 'postgres', 'k2', '12');
# an event of a transaction that begins before the last copy and commits
# after it (prepared, so that it stays open without a session)
$a->safe_psql('postgres',
	"BEGIN; INSERT INTO outbox (id, kind, payload) VALUES (gen_random_uuid(), 'booking_created',"
	  . " '{\"booking_id\": 40}'); PREPARE TRANSACTION 'late'");
is( $a->safe_psql(
		'postgres',
		"SELECT string_agg(payload ->> 'booking_id', ',' ORDER BY event_id) FROM okno_drain(10, 'journal')"),
	'2,3',
	'journal gets the two bookings made after it subscribed');
$a->safe_psql('postgres', "COMMIT PREPARED 'late'");
book($a, 'postgres', 'k3', '13');	# not copied when the dump is taken

cmp_ok(
	$a->safe_psql('postgres',
		"SELECT pg_snapshot_xmin(copied_snapshot)::text::bigint FROM okno_subscriber"),
	'>',
	$b->safe_psql('postgres', 'SELECT pg_current_xact_id()::text::bigint') + 2000,
	"the source's snapshot is far ahead of the target's transaction ids");

my $dump = $a->basedir . '/okno.dump';
command_ok([ 'pg_dump', '-Fc', '-d', $a->connstr('postgres'), '-f', $dump ],
	'pg_dump');
$b->safe_psql('postgres', 'CREATE DATABASE restored');
command_ok([ 'pg_restore', '-d', $b->connstr('restored'), $dump ],
	'pg_restore into another cluster');

isnt(
	$b->safe_psql('restored', 'SELECT copied_system FROM okno_subscriber'),
	$b->safe_psql('restored', 'SELECT system_identifier FROM pg_control_system()'),
	'the restored snapshot names the source cluster');
book($b, 'restored', 'k4', '14');	# written in the target cluster
# before the first drain the snapshot is still the source's: a failure
# report cannot judge an event without a row by it, and writes none
my ($ret, $out, $err) = $b->psql('restored',
	"SELECT okno_record_failure((SELECT id FROM outbox WHERE payload ->> 'booking_id' = '2'), 'down', 'journal')");
like($err, qr/does not exist/, 'a failure report before the first drain after the restore is event_missing');
is( $b->safe_psql(
		'restored',
		"SELECT string_agg(payload ->> 'booking_id', ',' ORDER BY (payload ->> 'booking_id')::int)"
		  . " FROM okno_drain(10, 'journal')"),
	'4,5,40',
	'journal gets the events it had not copied and the new one; not those it had, nor the one from before it subscribed');
is( $b->safe_psql('restored',
		'SELECT copied_system = system_identifier FROM okno_subscriber, pg_control_system()'),
	't',
	'its snapshot is now of this cluster');
book($b, 'restored', 'k5', '15');
is( $b->safe_psql(
		'restored',
		"SELECT string_agg(payload ->> 'booking_id', ',' ORDER BY event_id) FROM okno_drain(10, 'journal')"),
	'6',
	'and it goes on from there');
is($b->safe_psql('restored', "SELECT count(*) FROM okno_drain(10, 'journal')"),
	'0', 'each event once');
# the late event names no booking: the test's own, removed before the check
$b->safe_psql('restored', q{
DELETE FROM okno_delivery WHERE event_id IN (SELECT id FROM outbox WHERE payload ->> 'booking_id' = '40');
DELETE FROM outbox WHERE payload ->> 'booking_id' = '40';
});
is($b->safe_psql('restored', q{SELECT string_agg(problem || ': ' || detail, '; ') FROM okno_verify()}),
	'', 'okno_verify() is empty');

done_testing();
