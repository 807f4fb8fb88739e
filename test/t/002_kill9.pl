
# Copyright (c) 2026, the okno authors
#
# 002_kill9: a backend killed with SIGKILL in the middle of a booking leaves
# nothing behind.
#
# Three backends are parked at three points of one request and killed with
# kill -9; each time the postmaster, seeing a child die abnormally,
# terminates every other backend, runs crash recovery and accepts
# connections again (restart_after_crash = on):
#
#   (a) inside okno_create_booking, waiting for the request's advisory lock
#       (another session holds the very lock the course's SQL takes);
#   (a2) inside okno_create_booking after it inserted the booking, waiting
#       to insert its idempotency row (another session inserted the same key
#       without the lock and has not committed);
#   (b) after okno_create_booking returned its card, in the still open
#       transaction, waiting for another advisory lock before COMMIT.
#
# After each recovery: no booking, key or event of the killed request is
# visible, the other data is unchanged, okno_verify() is empty, and the same
# key then books successfully.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('kill9');
$node->init;
# PostgreSQL::Test::Cluster turns it off; a killed backend must make the
# postmaster reinitialise, not stop.
$node->append_conf('postgresql.conf', "restart_after_crash = on");
$node->start;

my @sessions;    # every psql started here, killed at exit if still running

END
{
	foreach my $s (@sessions)
	{
		eval { $s->{h}->kill_kill if $s->{h}->pumpable; };
	}
}

sub payload
{
	my ($resource, $day, $hour) = @_;
	return sprintf(
		'{"resource_id":%d,"starts_at":"2026-12-%02dT%02d:00:00+03:00","ends_at":"2026-12-%02dT%02d:00:00+03:00"}',
		$resource, $day, $hour, $day, $hour + 1);
}

# A psql reading SQL from a string we append to, under its own
# application_name so that pg_stat_activity tells it apart.  Its timeout
# bounds every wait on it.
sub start_session
{
	my ($name) = @_;
	my $s = { name => $name, in => '', out => '', err => '' };
	$s->{timeout} =
	  IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	$s->{h} = IPC::Run::start(
		[
			'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr('postgres') . " application_name=$name"
		],
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err},
		$s->{timeout});
	push @sessions, $s;
	return $s;
}

# Send SQL and wait until its output matches a pattern; false on timeout
# or if psql exits first.
sub send_until
{
	my ($s, $sql, $until) = @_;
	$s->{in} .= $sql;
	$s->{timeout}->start($PostgreSQL::Test::Utils::timeout_default);
	my $ok = eval { pump_until($s->{h}, $s->{timeout}, \$s->{out}, $until) };
	diag("psql $s->{name}: $@") if $@;
	return $ok;
}

# Wait for a session's psql to exit and return its exit status.  A psql
# idle between statements only notices that its connection is gone when it
# sends the next one: $probe gives it one.  (A psql that has exited must not
# be sent anything: IPC::Run dies on the broken pipe.)
sub finish_session
{
	my ($s, $probe) = @_;
	$s->{in} .= "SELECT 'still connected';\n" if $probe;
	$s->{timeout}->start($PostgreSQL::Test::Utils::timeout_default);
	if (!eval { $s->{h}->finish; 1 })
	{
		diag("psql $s->{name} did not exit: $@");
		eval { $s->{h}->kill_kill; };
		return -1;
	}
	return $s->{h}->result(0);
}

sub q1
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

sub pid_of
{
	my ($name) = @_;
	return q1(
		"SELECT pid FROM pg_stat_activity WHERE application_name = '$name'");
}

sub postmaster_pid
{
	my $first = (split /\n/,
		slurp_file($node->data_dir . '/postmaster.pid'))[0];
	return $first;
}

# What must not change when a request is killed.
my $snapshot_sql = q{
SELECT (SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, resource_id, actor_id, starts_at, ends_at, status), ';' ORDER BY id) FROM bookings)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s', actor_id, request_key, response_body), ';' ORDER BY actor_id, request_key) FROM idempotency)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s', id, kind, payload, delivered_at IS NULL), ';' ORDER BY id) FROM outbox)
};

q1(q{
CREATE EXTENSION okno CASCADE;
DO $$ BEGIN PERFORM okno_create_tables(); END $$;
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('room'), ('hall');
});
q1("SELECT okno_create_booking(2, 'k-base', '" . payload(2, 1, 9) . "')");

my $pm_pid = postmaster_pid();

# Kill one backend with SIGKILL and wait for the postmaster to have
# reinitialised; checks the log and the postmaster.
sub kill_and_recover
{
	my ($label, $victim_pid, @others) = @_;
	my $offset = -s $node->logfile;

	is(kill('KILL', $victim_pid), 1, "$label: kill -9 of backend $victim_pid");

	my $ready = 0;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		if ($node->log_contains(
				qr/database system is ready to accept connections/, $offset))
		{
			$ready = 1;
			last;
		}
		usleep(100_000);
	}
	ok($ready, "$label: the server is ready again after crash recovery");
	my $log = slurp_file($node->logfile, $offset);
	like(
		$log,
		qr/(?:server process|client backend) \(PID $victim_pid\) was terminated by signal 9/,
		"$label: the postmaster saw the backend killed");
	like(
		$log,
		qr/all server processes terminated; reinitializing/,
		"$label: the postmaster terminated the other backends and reinitialized"
	);
	like(
		$log,
		qr/database system was not properly shut down; automatic recovery in progress/,
		"$label: crash recovery ran");
	is(postmaster_pid(), $pm_pid,
		"$label: the same postmaster is still running");
	ok($node->poll_query_until('postgres', 'SELECT 1', '1'),
		"$label: new connections are accepted");

	foreach my $s (@others)
	{
		my $rc = finish_session($s, 1);
		ok($rc == 2 || $rc == 3,
			"$label: session $s->{name} lost its connection (psql exit status $rc)");
		like(
			$s->{err},
			qr/terminating connection because of crash of another server process|server closed the connection unexpectedly|connection to server was lost/,
			"$label: session $s->{name} was told the connection is gone");
	}
	return;
}

# ------------------------------------------------------------------------
# (a) parked inside okno_create_booking, waiting for the request lock
{
	my $before = q1($snapshot_sql);
	my $holder = start_session('holder_a');
	ok( send_until(
			$holder,
			"BEGIN;\nSELECT pg_advisory_xact_lock(hashtextextended('1:k-parked', 0));\n\\echo locked\n",
			qr/locked/),
		'(a) another session holds the lock of actor 1, key k-parked');

	my $victim = start_session('victim_a');
	$victim->{in} .= "SELECT okno_create_booking(1, 'k-parked', '"
	  . payload(1, 1, 10) . "');\n";
	$victim->{h}->pump_nb;
	ok( $node->poll_query_until(
			'postgres', q{
SELECT count(*) FROM pg_stat_activity a
  JOIN pg_locks w ON w.pid = a.pid AND w.locktype = 'advisory' AND NOT w.granted
  JOIN pg_locks h ON h.locktype = 'advisory' AND h.granted
   AND (h.classid, h.objid, h.objsubid) = (w.classid, w.objid, w.objsubid)
  JOIN pg_stat_activity ha ON ha.pid = h.pid AND ha.application_name = 'holder_a'
 WHERE a.application_name = 'victim_a' AND a.wait_event_type = 'Lock'
   AND a.wait_event = 'advisory' AND a.query LIKE '%okno_create_booking%'},
			'1'),
		'(a) okno_create_booking waits for the lock the holder has');
	my $vpid = pid_of('victim_a');

	kill_and_recover('(a)', $vpid, $holder);
	my $rc = finish_session($victim, 0);
	is($rc, 2, '(a) the killed request\'s client lost its connection');
	like(
		$victim->{err},
		qr/server closed the connection unexpectedly/,
		'(a) psql was told the server closed the connection');
	is($victim->{out}, '', '(a) the killed request returned no card');

	is(q1($snapshot_sql), $before,
		'(a) bookings, keys and events are as before the request');
	is( q1(
			"SELECT count(*) FROM idempotency WHERE request_key = 'k-parked'"),
		'0',
		'(a) the key k-parked does not exist');
	is(q1('SELECT count(*) FROM okno_verify()'),
		'0', '(a) okno_verify() is empty');
	my $card = q1("SELECT okno_create_booking(1, 'k-parked', '"
		  . payload(1, 1, 10) . "')");
	like(
		$card,
		qr/"status": "confirmed".*"resource_id": 1/,
		'(a) the same key books afterwards');
	is( q1(
			"SELECT okno_create_booking(1, 'k-parked', '"
			  . payload(1, 1, 10) . "')"),
		$card,
		'(a) and replays its new card');
}

# ------------------------------------------------------------------------
# (a2) parked inside okno_create_booking after inserting the booking
{
	my $before = q1($snapshot_sql);
	my $rogue = start_session('rogue_a2');
	ok( send_until(
			$rogue,
			"BEGIN;\nINSERT INTO idempotency (actor_id, request_key, fingerprint, response_body) VALUES (1, 'k-deep', repeat('0', 64), '{}');\n\\echo inserted\n",
			qr/inserted/),
		'(a2) another session inserted key k-deep without committing');

	my $victim = start_session('victim_a2');
	$victim->{in} .= "SELECT okno_create_booking(1, 'k-deep', '"
	  . payload(1, 2, 10) . "');\n";
	$victim->{h}->pump_nb;
	ok( $node->poll_query_until(
			'postgres', q{
SELECT count(*) FROM pg_stat_activity
 WHERE application_name = 'victim_a2' AND wait_event_type = 'Lock'
   AND wait_event = 'transactionid' AND backend_xid IS NOT NULL},
			'1'),
		'(a2) okno_create_booking has written (it has an xid) and waits to insert its key'
	);
	is( q1(
			q{SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
 WHERE a.application_name = 'victim_a2' AND l.locktype = 'advisory' AND l.granted
   AND l.classid = 1869311599 AND l.objid = 1 AND l.objsubid = 3}),
		'1',
		'(a2) it holds the resource lock, taken just before the booking insert'
	);
	my $vpid = pid_of('victim_a2');

	kill_and_recover('(a2)', $vpid, $rogue);
	my $rc = finish_session($victim, 0);
	is($rc, 2, '(a2) the killed request\'s client lost its connection');
	like(
		$victim->{err},
		qr/server closed the connection unexpectedly/,
		'(a2) psql was told the server closed the connection');
	is($victim->{out}, '', '(a2) the killed request returned no card');

	is(q1($snapshot_sql), $before,
		'(a2) bookings, keys and events are as before the request');
	is( q1(
			q{SELECT count(*) FROM bookings WHERE resource_id = 1
  AND tstzrange(starts_at, ends_at) && tstzrange('2026-12-02T07:00:00Z', '2026-12-02T08:00:00Z')}
		),
		'0',
		'(a2) no booking holds the killed request\'s slot');
	is(q1('SELECT count(*) FROM okno_verify()'),
		'0', '(a2) okno_verify() is empty');
	my $card = q1("SELECT okno_create_booking(1, 'k-deep', '"
		  . payload(1, 2, 10) . "')");
	like(
		$card,
		qr/"status": "confirmed".*"resource_id": 1/,
		'(a2) the same key books the same slot afterwards');
}

# ------------------------------------------------------------------------
# (b) returned from okno_create_booking, transaction still open
{
	my $before = q1($snapshot_sql);
	my $holder = start_session('holder_b');
	ok( send_until(
			$holder, "BEGIN;\nSELECT pg_advisory_xact_lock(4242);\n\\echo locked\n",
			qr/locked/),
		'(b) another session holds advisory lock 4242');

	my $victim = start_session('victim_b');
	ok( send_until(
			$victim,
			"BEGIN;\nSELECT okno_create_booking(1, 'k-returned', '"
			  . payload(2, 3, 10)
			  . "');\nSELECT pg_advisory_xact_lock(4242);\nCOMMIT;\n",
			qr/"status": "confirmed"/),
		'(b) okno_create_booking returned a card inside the open transaction'
	);
	my ($card_id) = $victim->{out} =~ /"id": (\d+)/;
	ok( $node->poll_query_until(
			'postgres', q{
SELECT count(*) FROM pg_stat_activity
 WHERE application_name = 'victim_b' AND wait_event_type = 'Lock'
   AND wait_event = 'advisory' AND backend_xid IS NOT NULL
   AND query LIKE '%4242%'},
			'1'),
		'(b) the transaction waits for lock 4242 before its COMMIT');
	is(q1($snapshot_sql), $before,
		'(b) other sessions do not see the uncommitted booking');
	my $vpid = pid_of('victim_b');

	kill_and_recover('(b)', $vpid, $holder);
	my $rc = finish_session($victim, 0);
	is($rc, 2, '(b) the killed transaction\'s client lost its connection');
	like(
		$victim->{err},
		qr/server closed the connection unexpectedly/,
		'(b) psql was told the server closed the connection');

	is(q1($snapshot_sql), $before,
		'(b) bookings, keys and events are as before the transaction');
	is( q1(
			"SELECT count(*) FROM bookings WHERE id = $card_id"),
		'0',
		"(b) booking $card_id of the returned card does not exist");
	is( q1(
			"SELECT count(*) FROM outbox WHERE payload ->> 'booking_id' = '$card_id'"
		),
		'0',
		"(b) no event names booking $card_id");
	is( q1(
			"SELECT count(*) FROM idempotency WHERE request_key = 'k-returned'"),
		'0',
		'(b) the key k-returned does not exist');
	is(q1('SELECT count(*) FROM okno_verify()'),
		'0', '(b) okno_verify() is empty');
	my $card = q1("SELECT okno_create_booking(1, 'k-returned', '"
		  . payload(2, 3, 10) . "')");
	like(
		$card,
		qr/"status": "confirmed".*"resource_id": 2/,
		'(b) the same key books afterwards');
}

# ------------------------------------------------------------------------
is( q1(
		q{SELECT format('%s/%s/%s', (SELECT count(*) FROM bookings),
  (SELECT count(*) FROM idempotency), (SELECT count(*) FROM outbox))}),
	'4/4/4',
	'in the end: 4 bookings, 4 keys, 4 events (k-base and the three retried keys)'
);
is(q1('SELECT count(*) FROM okno_verify()'),
	'0', 'in the end okno_verify() is empty');

$node->stop;
done_testing();
