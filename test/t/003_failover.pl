
# Copyright (c) 2026, the okno authors
#
# 003_failover: with synchronous streaming replication, a failover loses no
# acknowledged booking, no delivery and no failure record.
#
# A primary and a hot standby on this machine, the standby synchronous
# (synchronous_standby_names = its application_name, synchronous_commit =
# on).  On the primary: bookings (every acknowledged card kept), drains in
# committed transactions (the delivered event ids kept), one failed
# delivery (delayed for an hour), one parked event (okno.max_attempts = 1),
# a cancellation.  On the standby: okno_create_booking, okno_drain_once and
# okno_drain are refused with SQLSTATE 25006 and the standby stays up;
# okno_get_booking, okno_outbox_status and okno_verify work.  More bookings
# and a drain on the primary, then, without waiting for the standby to
# replay anything, the primary is stopped in immediate mode and the standby
# promoted.  On the new primary: every acknowledged key replays its card;
# the delivered events are delivered, the delayed one delayed, the parked
# one parked; okno_drain hands out exactly the pending due events (and so
# does okno-relay --once, when OKNO_RELAY names it); new bookings work;
# okno_verify() is empty.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use JSON::PP qw(decode_json);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# synchronous from here on: set on the primary only (the standby's
# configuration came from the backup before), so the promoted standby
# does not wait for a standby of its own
$primary->append_conf(
	'postgresql.conf', q{
synchronous_standby_names = 'standby'
synchronous_commit = on
});
$primary->reload;
ok( $primary->poll_query_until(
		'postgres',
		q{SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'},
		'sync'),
	'the standby replicates synchronously');
is($primary->safe_psql('postgres', 'SHOW synchronous_commit'),
	'on', 'synchronous_commit is on');

# ------------------------------------------------------------------------
sub payload
{
	my ($resource, $day, $hour) = @_;
	return sprintf(
		'{"resource_id":%d,"starts_at":"2026-12-%02dT%02d:00:00+03:00","ends_at":"2026-12-%02dT%02d:00:00+03:00"}',
		$resource, $day, $hour, $day, $hour + 1);
}

# SQLSTATE of a statement's error, or 'ok'
sub sqlstate
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		extra_params => [ '-v', 'VERBOSITY=sqlstate' ]);
	return 'ok' if $ret == 0;
	return $1 if $err =~ /\bERROR:\s+([0-9A-Z]{5})\b/;
	return "psql exit $ret: $err";
}

sub postmaster_pid
{
	my ($node) = @_;
	return (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
}

my %acked;    # key => { actor, payload, card, id }

sub create
{
	my ($actor, $key, $payload) = @_;
	my $card = $primary->safe_psql('postgres',
		"SELECT okno_create_booking($actor, '$key', '$payload')");
	my ($id) = $card =~ /"id": (\d+)/;
	$acked{$key} =
	  { actor => $actor, payload => $payload, card => $card, id => $id };
	return $card;
}

my @delivered;    # event ids whose drain committed

sub drain_committed
{
	my ($n) = @_;
	my $ids = $primary->safe_psql('postgres',
		"BEGIN;\nSELECT event_id FROM okno_drain($n);\nCOMMIT;");
	my @ids = split /\n/, $ids;
	push @delivered, @ids;
	return @ids;
}

# ------------------------------------------------------------------------
# the primary, part 1
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION okno CASCADE;
DO $$ BEGIN PERFORM okno_create_tables(); END $$;
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('room'), ('hall'), ('lab');
});
for my $i (1 .. 8)
{
	create(1 + $i % 2, "f$i", payload(1 + $i % 3, 1 + $i, 10));
}
is(sqlstate($primary, "SELECT okno_create_booking(2, 'f1', '" . payload(3, 20, 10) . "')"),
	'OKB04', 'primary: other data under an acknowledged key is key_reused');
is(sqlstate($primary, "SELECT okno_create_booking(2, 'f-busy', '" . payload(2, 2, 10) . "')"),
	'OKB05', 'primary: a taken slot is slot_busy');

is(scalar(drain_committed(3)), 3, 'primary: 3 events delivered');

# one failed delivery, retried in an hour: pending but delayed
my $delayed = $primary->safe_psql(
	'postgres', q{
SET okno.retry_base = '1h';
BEGIN;
SELECT event_id AS e FROM okno_drain(1) \gset
SELECT (okno_record_failure(:'e', 'recipient down')).attempts \gset f_
COMMIT;
\echo :e :f_attempts
});
like($delayed, qr/^[0-9a-f-]{36} 1$/, 'primary: a failure recorded for one event');
($delayed) = split / /, $delayed;

# one parked event
my $parked = $primary->safe_psql(
	'postgres', q{
SET okno.max_attempts = 1;
BEGIN;
SELECT event_id AS e FROM okno_drain(1) \gset
SELECT (okno_record_failure(:'e', 'bad payload')).parked_at IS NOT NULL AS p \gset
COMMIT;
\echo :e :p
});
like($parked, qr/^[0-9a-f-]{36} t$/, 'primary: one event parked');
($parked) = split / /, $parked;

like(
	$primary->safe_psql('postgres',
		"SELECT okno_cancel_booking($acked{f2}{actor}, $acked{f2}{id})"),
	qr/"status": "cancelled"/,
	'primary: booking f2 cancelled');

# ------------------------------------------------------------------------
# the hot standby
$primary->wait_for_catchup($standby, 'replay');
my $standby_pm = postmaster_pid($standby);
my $standby_log_offset = -s $standby->logfile;

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby: in recovery (hot standby)');
is(sqlstate($standby, "SELECT okno_create_booking(1, 'f-standby', '" . payload(3, 25, 10) . "')"),
	'25006', 'standby: okno_create_booking is refused with 25006');
is(sqlstate($standby, "SELECT okno_create_booking(1, 'f1', '$acked{f1}{payload}')"),
	'25006', 'standby: a replay too');
is(sqlstate($standby, 'SELECT * FROM okno_drain_once()'),
	'25006', 'standby: okno_drain_once is refused with 25006');
is(sqlstate($standby, 'SELECT * FROM okno_drain(10)'),
	'25006', 'standby: okno_drain is refused with 25006');
is($standby->safe_psql('postgres', 'SELECT 1'), '1',
	'standby: still accepts queries');
is(postmaster_pid($standby), $standby_pm,
	'standby: the same postmaster is running');
unlike(
	slurp_file($standby->logfile, $standby_log_offset),
	qr/terminated by signal|was terminated by exception|all server processes terminated/,
	'standby: no backend crashed');

is($standby->safe_psql('postgres', "SELECT okno_get_booking($acked{f1}{actor}, $acked{f1}{id}) = '$acked{f1}{card}'::jsonb"),
	't', 'standby: okno_get_booking returns the card of f1');
like($standby->safe_psql('postgres', "SELECT okno_get_booking($acked{f2}{actor}, $acked{f2}{id})"),
	qr/"status": "cancelled"/, 'standby: okno_get_booking shows f2 cancelled');
my $status_sql = q{SELECT format('%s/%s/%s/%s', pending, due_now, delayed, parked) FROM okno_outbox_status};
is($standby->safe_psql('postgres', $status_sql),
	'5/4/1/1', 'standby: okno_outbox_status: 5 pending, 4 of them due, 1 delayed, 1 parked');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM okno_verify()'),
	'0', 'standby: okno_verify() is empty');

# ------------------------------------------------------------------------
# the primary, part 2: acknowledged, then the primary dies at once
for my $i (9 .. 11)
{
	create(1 + $i % 2, "f$i", payload(1 + $i % 3, 1 + $i, 10));
}
is(scalar(drain_committed(2)), 2, 'primary: 2 more events delivered');

my $outbox_sql = q{SELECT string_agg(format('%s/%s/%s/%s/%s/%s/%s', id, kind, payload,
  delivered_at IS NULL, parked_at IS NULL, attempts, last_error), ';' ORDER BY id) FROM outbox};
my $outbox_before = $primary->safe_psql('postgres', $outbox_sql);
my $due_before = $primary->safe_psql(
	'postgres', q{
SELECT string_agg(id || ' ' || kind || ' ' || payload, E'\n' ORDER BY id) FROM outbox
 WHERE delivered_at IS NULL AND parked_at IS NULL
   AND (available_at IS NULL OR available_at <= now())});

$primary->stop('immediate');
$standby->promote;
ok( $standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
	'the standby is promoted');

# ------------------------------------------------------------------------
# the new primary
my $new = $standby;

my $bad = 0;
foreach my $key (sort keys %acked)
{
	my $a = $acked{$key};
	my $replay = $new->safe_psql('postgres',
		"SELECT okno_create_booking($a->{actor}, '$key', '$a->{payload}')");
	if ($replay ne $a->{card})
	{
		diag("key $key: acknowledged $a->{card}, replayed $replay");
		$bad++;
	}
}
is($bad, 0,
	'new primary: all ' . scalar(keys %acked) . ' acknowledged keys replay their cards');
is( $new->safe_psql(
		'postgres',
		q{SELECT string_agg(actor_id || ':' || request_key, ' ' ORDER BY request_key) FROM idempotency}),
	join(' ', map { "$acked{$_}{actor}:$_" } sort keys %acked),
	'new primary: exactly the acknowledged keys exist');
is($new->safe_psql('postgres', $outbox_sql),
	$outbox_before, 'new primary: the outbox is as the primary acknowledged it');
is( $new->safe_psql(
		'postgres',
		q{SELECT string_agg(id::text, ' ' ORDER BY id) FROM outbox WHERE delivered_at IS NOT NULL}),
	join(' ', sort @delivered),
	'new primary: exactly the ' . scalar(@delivered) . ' events whose drain committed are delivered');
is( $new->safe_psql(
		'postgres',
		"SELECT format('%s/%s/%s/%s', delivered_at IS NULL AND parked_at IS NULL, attempts, last_error, available_at > now() + interval '20 minutes') FROM outbox WHERE id = '$delayed'"
	),
	't/1/recipient down/t',
	'new primary: the failed event is still pending, delayed, with its attempt and error');
is( $new->safe_psql(
		'postgres',
		"SELECT format('%s/%s/%s', delivered_at IS NULL AND parked_at IS NOT NULL, attempts, last_error) FROM outbox WHERE id = '$parked'"
	),
	't/1/bad payload',
	'new primary: the parked event is still parked');
is($new->safe_psql('postgres', $status_sql),
	'6/5/1/1', 'new primary: okno_outbox_status: 6 pending, 5 due, 1 delayed, 1 parked');

# what the drain must hand out: the pending, due events, in id order
my @due = split /\n/, $due_before;
is(scalar(@due), 5, 'the primary had 5 pending due events when it died');
my $expected_due = join("\n", map { (split / /, $_)[0] } @due);
ok(!grep({ my $id = (split / /, $_)[0]; grep { $_ eq $id } @delivered, $delayed, $parked } @due),
	'none of them was delivered, delayed or parked');
is( $new->safe_psql(
		'postgres', "BEGIN;\nSELECT event_id || ' ' || kind || ' ' || payload || ' ' || attempts FROM okno_drain(100);\nROLLBACK;"
	),
	join("\n", map { "$_ 0" } @due),
	'new primary: okno_drain hands out exactly the pending due events (rolled back)');

my $relay_ran = 0;
SKIP:
{
	my $relay = $ENV{OKNO_RELAY};
	skip 'okno-relay is not available (OKNO_RELAY unset)', 4
	  unless defined $relay && -x $relay;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[ $relay, '--once', '--dbname', $new->connstr('postgres') ],
		'<', '/dev/null', '>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	ok($ok, 'okno-relay --once exits 0') or diag("stderr: $err");
	$relay_ran = 1;
	my @lines = split /\n/, $out;
	is(scalar(@lines), scalar(@due), 'okno-relay printed one line per due event');
	my @got = map {
		my $e = eval { decode_json($_) } // {};
		join(' ',
			$e->{event_id} // '-',
			$e->{kind} // '-',
			defined $e->{payload} && ref $e->{payload} eq 'HASH'
			? join(',', map { "$_=$e->{payload}{$_}" } sort keys %{ $e->{payload} })
			: '-',
			$e->{attempts} // '-',
			join(',', sort keys %$e))
	} @lines;
	my @want = map {
		my ($id, $kind, $payload) = split / /, $_, 3;
		my $p = decode_json($payload);
		join(' ',
			$id, $kind,
			join(',', map { "$_=$p->{$_}" } sort keys %$p),
			0, 'attempts,event_id,kind,payload')
	} @due;
	is_deeply(\@got, \@want,
		'okno-relay printed exactly the pending due events, in order, as JSON lines');
	is($new->safe_psql('postgres', $status_sql),
		'1/0/1/1', 'after okno-relay: nothing due, the delayed and the parked event remain');
}

is( $new->safe_psql(
		'postgres', "BEGIN;\nSELECT event_id FROM okno_drain(100);\nCOMMIT;"),
	$relay_ran ? '' : $expected_due,
	$relay_ran
	? 'new primary: then okno_drain has nothing left'
	: 'new primary: okno_drain delivers the pending due events');
is($new->safe_psql('postgres', $status_sql),
	'1/0/1/1', 'new primary: the delayed and the parked event remain');

# new bookings
my $max_id = (sort { $b <=> $a } map { $_->{id} } values %acked)[0];
my $card = $new->safe_psql('postgres',
	"SELECT okno_create_booking(1, 'after-failover', '" . payload(1, 28, 10) . "')");
my ($new_id) = $card =~ /"id": (\d+)/;
ok(defined $new_id && $new_id > $max_id,
	"new primary: a new booking gets a new id ($new_id > $max_id)");
is( $new->safe_psql(
		'postgres',
		"SELECT okno_create_booking(1, 'after-failover', '" . payload(1, 28, 10) . "')"),
	$card,
	'new primary: and replays');
is( $new->safe_psql(
		'postgres', "BEGIN;\nSELECT kind || ' ' || payload FROM okno_drain_once();\nCOMMIT;"),
	"booking_created {\"booking_id\": $new_id}",
	'new primary: its event is the one due event');
is(sqlstate($new, "SELECT okno_create_booking(2, 'f-busy', '" . payload(2, 2, 10) . "')"),
	'OKB05', 'new primary: an acknowledged booking still holds its slot');
is($new->safe_psql('postgres', 'SELECT count(*) FROM okno_verify()'),
	'0', 'new primary: okno_verify() is empty');

$new->stop;
done_testing();
