
# Copyright (c) 2026, the okno authors
#
# 001_crash_restart: bookings survive crashes of the whole server exactly as
# their clients saw them.
#
# Two clients (actors 1 and 2, one background bash loop each) call
# okno_create_booking, one psql per call, with a fixed pool of 40 keys each,
# following a seeded random plan: a key is mostly sent with its own payload
# (written in one of two equivalent forms: UTC or -05:00, keys in another
# order), sometimes with other data (key_reused when the key exists), and
# slots overlap within and between the clients (slot_busy).  Every call's
# outcome is logged: the card, the SQLSTATE of an error, or "unknown" (the
# connection failed or was lost).  Meanwhile the server is stopped in
# immediate mode (a crash: no shutdown checkpoint, crash recovery at the
# next start) 5 times at seeded random moments and started again.
#
# After each restart, with the clients paused, and once more at the end:
# okno_verify() is empty; every success of a key returned the same card, for
# the one payload the key was first stored with; every acknowledged key is
# stored with that card and replays it; a key whose every attempt ended in a
# domain error (OKB0x) does not exist; every stored key comes from a call
# that succeeded or whose outcome is unknown; no call got an error other
# than key_reused or slot_busy.
#
# OKNO_TAP_SEED changes the seed (default 20261201).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use JSON::PP qw(decode_json);
use Time::HiRes qw(usleep sleep);

my $seed = $ENV{OKNO_TAP_SEED} // 20261201;
srand($seed);
note("seed $seed");

my $CLIENTS = 2;      # actors 1 and 2
my $KEYS = 40;        # per client
my $RESOURCES = 8;
my $STEPS = 30;       # half-hour steps per resource
my $SLOTS = $RESOURCES * $STEPS;
my $PLAN = 4000;      # calls per client plan (repeated if it runs out)
my $CRASHES = 5;
my $CLIENT_LIMIT = 150;    # seconds: a client stops by itself after that

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# thousands of calls: log what matters for a crash, not every statement
$node->append_conf('postgresql.conf', "log_statement = none");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION okno CASCADE;
DO $$ BEGIN PERFORM okno_create_tables(); END $$;
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) SELECT 'r' || i FROM generate_series(1, 8) i;
});

# ------------------------------------------------------------------------
# Slots and payloads.  Slot s: resource 1 + s % 8, one hour starting at
# 06:00Z + 30 min * int(s / 4) on 2026-12-01: neighbouring slots of a
# resource overlap by half an hour.
sub slot_times
{
	my ($s) = @_;
	my $start = 6 * 60 + 30 * int($s / $RESOURCES);
	return (1 + $s % $RESOURCES, $start, $start + 60);
}

sub hhmm
{
	my ($m) = @_;
	return sprintf('%02d:%02d', int($m / 60), $m % 60);
}

# form 0: UTC, keys in one order; form 1: -05:00, keys in another order.
# Both have the same canonical form, so the same fingerprint.
sub payload
{
	my ($s, $form) = @_;
	my ($r, $start, $end) = slot_times($s);
	if ($form == 0)
	{
		return sprintf(
			'{"resource_id":%d,"starts_at":"2026-12-01T%s:00Z","ends_at":"2026-12-01T%s:00Z"}',
			$r, hhmm($start), hhmm($end));
	}
	return sprintf(
		'{"ends_at":"2026-12-01T%s:00-05:00","resource_id":%d,"starts_at":"2026-12-01T%s:00-05:00"}',
		hhmm($end - 300), $r, hhmm($start - 300));
}

# what the card of slot s must say
sub card_matches_slot
{
	my ($card, $s, $actor) = @_;
	my ($r, $start, $end) = slot_times($s);
	my $c = eval { decode_json($card) } or return 0;
	return
	     $c->{resource_id} eq $r
	  && $c->{actor_id} eq $actor
	  && $c->{starts_at} eq '2026-12-01T' . hhmm($start) . ':00Z'
	  && $c->{ends_at} eq '2026-12-01T' . hhmm($end) . ':00Z'
	  && $c->{status} eq 'confirmed'
	  && $c->{id} =~ /^[1-9][0-9]*$/
	  && keys %$c == 6;
}

# ------------------------------------------------------------------------
# The plans: key k of client c has three payloads (variants), variant 0 its
# usual one (70 % of the calls); for even k the two clients share variant
# 0's slot.
my @slotmap;
for my $c (0 .. $CLIENTS - 1)
{
	for my $k (0 .. $KEYS - 1)
	{
		for my $v (0 .. 2)
		{
			$slotmap[$c][$k][$v] = int(rand($SLOTS));
		}
	}
}
for my $k (grep { $_ % 2 == 0 } 0 .. $KEYS - 1)
{
	$slotmap[1][$k][0] = $slotmap[0][$k][0];
}

my $dir = PostgreSQL::Test::Utils::tempdir('clients');
my $ctl = "$dir/ctl";
mkdir $ctl or die "mkdir $ctl: $!";

for my $c (0 .. $CLIENTS - 1)
{
	open my $fh, '>', "$dir/plan$c" or die "plan: $!";
	for my $j (0 .. $PLAN - 1)
	{
		# the keys come into use one by one (one more every 10 calls), so
		# that first uses go on through all the crashes
		my $pool = 4 + int($j / 10);
		$pool = $KEYS if $pool > $KEYS;
		my $k = int(rand($pool));
		my $v = rand() < 0.7 ? 0 : 1 + int(rand(2));
		my $form = int(rand(2));
		my $s = $slotmap[$c][$k][$v];
		printf $fh "k%02d\t%d\t%d\t%s\n", $k, $s, $form, payload($s, $form);
	}
	close $fh;
}

# One client: a psql per call; logs "n key slot form rc stdout stderr".
# Before each call it honours $ctl/stop and $ctl/pause (it acknowledges a
# pause by writing the pause's generation to $ctl/ack.ACTOR).
my $client_sh = <<'EOF';
set -u
plan=$1 log=$2 ctl=$3 actor=$4 conn=$5 limit=$6
n=0
: >"$log"
while [ "$SECONDS" -lt "$limit" ]; do
	while IFS=$'\t' read -r key slot form payload; do
		[ -e "$ctl/stop" ] && exit 0
		[ "$SECONDS" -lt "$limit" ] || exit 0
		if [ -e "$ctl/pause" ]; then
			gen=$(cat "$ctl/pause")
			echo "$gen" >"$ctl/ack.$actor.tmp" && mv -f "$ctl/ack.$actor.tmp" "$ctl/ack.$actor"
			while [ -e "$ctl/pause" ] && [ ! -e "$ctl/stop" ] && [ "$SECONDS" -lt "$limit" ]; do
				sleep 0.02
			done
			continue
		fi
		out=$(psql -X -A -t -q -v ON_ERROR_STOP=1 -v VERBOSITY=sqlstate -d "$conn" \
			-c "SELECT okno_create_booking($actor, '$key', '$payload')" 2>"$ctl/err.$actor")
		rc=$?
		err=$(tr '\t\n' '  ' <"$ctl/err.$actor")
		printf '%d\t%s\t%s\t%s\t%d\t%s\t%s\n' "$n" "$key" "$slot" "$form" "$rc" "$out" "$err" >>"$log"
		n=$((n + 1))
		# no server: do not spin
		[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || sleep 0.05
	done <"$plan"
done
EOF
open my $sh, '>', "$dir/client.sh" or die "client.sh: $!";
print $sh $client_sh;
close $sh;

my $conn = $node->connstr('postgres')
  . " connect_timeout=5 options='-c statement_timeout=30s'";
my @clients;
for my $c (0 .. $CLIENTS - 1)
{
	my $actor = $c + 1;
	my $timeout = IPC::Run::timeout(600);
	my $h = IPC::Run::start(
		[
			'bash', "$dir/client.sh", "$dir/plan$c", "$dir/log$c",
			$ctl, $actor, $conn, $CLIENT_LIMIT
		],
		'<', '/dev/null', '>', "$dir/client$c.out", '2>&1', $timeout);
	push @clients, { h => $h, timeout => $timeout, actor => $actor };
}

END
{
	open my $fh, '>', "$ctl/stop" if defined $ctl && -d $ctl;
	foreach my $cl (@clients)
	{
		eval {
			$cl->{timeout}->start(10);
			$cl->{h}->finish;
		};
		eval { $cl->{h}->kill_kill; } if $@;
	}
}

# ------------------------------------------------------------------------
# Pausing the clients between checks.
my $pause_gen = 0;

sub pause_clients
{
	$pause_gen++;
	open my $fh, '>', "$ctl/pause.tmp" or die "pause: $!";
	print $fh "$pause_gen\n";
	close $fh;
	rename "$ctl/pause.tmp", "$ctl/pause" or die "pause: $!";
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	foreach my $cl (@clients)
	{
		my $ack = "$ctl/ack.$cl->{actor}";
		while (1)
		{
			if (-e $ack)
			{
				my $got = slurp_file($ack);
				chomp $got;
				last if $got eq $pause_gen;
			}
			return 0 if time > $deadline || !$cl->{h}->pumpable;
			usleep(20_000);
		}
	}
	return 1;
}

sub resume_clients
{
	unlink "$ctl/pause";
	return;
}

# ------------------------------------------------------------------------
# Reading the logs.
sub read_calls
{
	my @calls;
	foreach my $cl (@clients)
	{
		my $c = $cl->{actor} - 1;
		next unless -e "$dir/log$c";
		foreach my $line (split /\n/, slurp_file("$dir/log$c"))
		{
			my ($n, $key, $slot, $form, $rc, $out, $err) = split /\t/, $line,
			  7;
			next unless defined $rc;    # a line being written
			$out //= '';
			$err //= '';
			my $call = {
				actor => $cl->{actor},
				key => $key,
				slot => $slot,
				form => $form,
				rc => $rc,
				out => $out,
				err => $err
			};
			if ($rc == 0)
			{
				# success without a card would be a bug: reported as an
				# unexpected outcome
				$call->{outcome} = $out =~ /^\{.*\}$/ ? 'ok' : 'no card';
			}
			elsif ($err =~ /\bERROR:\s+([0-9A-Z]{5})\b/)
			{
				$call->{outcome} = $1;
			}
			else
			{
				$call->{outcome} = 'unknown';
			}
			push @calls, $call;
		}
	}
	return @calls;
}

# the domain errors these calls can meet; any other outcome but success and
# unknown is a failure
my %EXPECTED = (OKB04 => 'key_reused', OKB05 => 'slot_busy');

sub is_domain_error
{
	my ($outcome) = @_;
	return $outcome =~ /^OKB0[1-8]$/;
}

sub check_state
{
	my ($label) = @_;
	my @calls = read_calls();

	my %by_key;
	push @{ $by_key{"$_->{actor}:$_->{key}"} }, $_ foreach @calls;

	my (@card_problems, @unexpected, %acked, %domain_only, %maybe);
	foreach my $id (sort keys %by_key)
	{
		my @c = @{ $by_key{$id} };
		my @ok = grep { $_->{outcome} eq 'ok' } @c;
		my @unknown = grep { $_->{outcome} eq 'unknown' } @c;
		push @unexpected,
		  map { "$id: $_->{outcome} $_->{err}" }
		  grep { $_->{outcome} ne 'ok' && $_->{outcome} ne 'unknown'
			  && !$EXPECTED{ $_->{outcome} } } @c;
		if (@ok)
		{
			my %cards = map { $_->{out} => 1 } @ok;
			my %slots = map { $_->{slot} => 1 } @ok;
			push @card_problems,
			  "$id: " . scalar(keys %cards) . ' cards, '
			  . scalar(keys %slots) . ' payloads'
			  if keys %cards != 1 || keys %slots != 1;
			push @card_problems, "$id: card $ok[0]{out} is not slot $ok[0]{slot}"
			  unless card_matches_slot($ok[0]{out}, $ok[0]{slot},
				$ok[0]{actor});
			$acked{$id} = $ok[0];
		}
		elsif (!grep { !is_domain_error($_->{outcome}) } @c)
		{
			$domain_only{$id} = 1;
		}
		$maybe{$id} = 1 if @ok || @unknown;
	}

	is(scalar(@unexpected), 0,
		"$label: no call failed with an error other than key_reused or slot_busy"
	) or diag(join("\n", @unexpected[ 0 .. ($#unexpected > 9 ? 9 : $#unexpected) ]));
	is(scalar(@card_problems), 0,
		"$label: every success of a key returned one card, for one payload, matching it"
	) or diag(join("\n", @card_problems));

	# the database
	my %stored;
	foreach my $row (
		split /\n/,
		$node->safe_psql(
			'postgres',
			q{SELECT actor_id || ':' || request_key, response_body::text FROM idempotency}
		))
	{
		my ($id, $card) = split /\|/, $row, 2;
		$stored{$id} = $card;
	}
	my @missing = grep {
		!defined $stored{$_} || $stored{$_} ne $acked{$_}{out}
	} sort keys %acked;
	is(scalar(@missing), 0,
		"$label: all " . scalar(keys %acked) . ' acknowledged keys are stored with their cards')
	  or diag("missing or changed: @missing");
	my @from_nowhere = grep { !$maybe{$_} } sort keys %stored;
	is(scalar(@from_nowhere), 0,
		"$label: all " . scalar(keys %stored) . ' stored keys come from calls that succeeded or whose outcome is unknown')
	  or diag("stored without a call: @from_nowhere");
	my @domain_stored = grep { defined $stored{$_} } sort keys %domain_only;
	is(scalar(@domain_stored), 0,
		"$label: none of the " . scalar(keys %domain_only) . ' keys whose every attempt got a domain error exists')
	  or diag("stored although every attempt failed: @domain_stored");

	# every acknowledged key replays its card, its payload written in the
	# other form; one statement (so one transaction) per key, so that a key
	# that fails (lost, its slot since taken) is reported, not fatal
	if (%acked)
	{
		my $sql = join(
			"\n",
			map {
				my $a = $acked{$_};
				sprintf(
					"SELECT '%s', okno_create_booking(%d, '%s', '%s') = '%s'::jsonb;",
					$_, $a->{actor}, $a->{key},
					payload($a->{slot}, 1 - $a->{form}), $a->{out})
			} sort keys %acked);
		my ($ret, $out, $err) =
		  $node->psql('postgres', $sql, on_error_stop => 0);
		my @bad = grep { !/\|t$/ } split /\n/, $out;
		ok( $ret == 0 && $err eq '' && @bad == 0,
			"$label: the "
			  . scalar(keys %acked)
			  . ' acknowledged keys replay exactly their cards')
		  or diag("replays that differ: @bad\n$err");
	}
	else
	{
		fail("$label: no call has succeeded yet");
	}

	my $problems = $node->safe_psql('postgres',
		q{SELECT problem || ': ' || detail FROM okno_verify()});
	is($problems, '', "$label: okno_verify() is empty");
	return @calls;
}

# ------------------------------------------------------------------------
my $calls_before = 0;
for my $crash (1 .. $CRASHES)
{
	my $run = 1.5 + rand(2.0);
	my $down = rand(0.4);
	note(sprintf('crash %d after %.2f s, down for %.2f s', $crash, $run, $down));
	sleep($run);

	my $offset = -s $node->logfile;
	$node->stop('immediate');
	sleep($down);
	$node->start;
	ok( $node->log_contains(
			qr/database system was interrupted.*\n(?:.*\n)*.*automatic recovery in progress/,
			$offset),
		"crash $crash: the server was stopped in immediate mode and ran crash recovery"
	);
	# let the clients reconnect and go on for a moment
	sleep(0.3);

	ok(pause_clients(), "crash $crash: both clients paused");
	my @calls = check_state("after crash $crash");
	ok(@calls > $calls_before,
		"crash $crash: the clients made calls in this round ("
		  . (@calls - $calls_before) . ')');
	$calls_before = @calls;
	resume_clients();
}

# stop the clients, then the last check
sleep(0.5);
{
	open my $fh, '>', "$ctl/stop" or die "stop: $!";
}
my $stopped = 1;
foreach my $cl (@clients)
{
	$cl->{timeout}->start(30);
	$stopped = 0 unless eval { $cl->{h}->finish; 1 };
}
ok($stopped, 'both clients stopped');
my @calls = check_state('in the end');

my %n;
$n{ $_->{outcome} }++ foreach @calls;
my %seen;
my $replays = grep { $_->{outcome} eq 'ok' && $seen{"$_->{actor}:$_->{key}"}++ } @calls;
my $lost =
  grep { $_->{outcome} eq 'unknown' && $_->{err} =~ /server closed the connection unexpectedly/ }
  @calls;
note(
	sprintf(
		'%d calls: %d succeeded (%d of them replays), %d key_reused, %d slot_busy, %d unknown (%d lost in flight)',
		scalar(@calls), $n{ok} // 0, $replays, $n{OKB04} // 0, $n{OKB05} // 0,
		$n{unknown} // 0, $lost));
ok(($n{ok} // 0) > $replays && $replays > 0,
	'the run had first successes and replays');
ok(($n{OKB04} // 0) > 0, 'the run had key_reused errors');
ok(($n{OKB05} // 0) > 0, 'the run had slot_busy errors');
ok(($n{unknown} // 0) > 0, 'the run had calls of unknown outcome');

$node->stop;
done_testing();
