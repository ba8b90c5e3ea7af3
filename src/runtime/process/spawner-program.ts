// The process spawner's program (spawner.ts runs it): a few KB of Perl, which every Debian-based
// host has (perl-base is Essential) and which needs no build step. It follows runc's init: the
// child makes its own session, joins its cgroup, opens its stdio, changes user, then execs.
//
// Why Perl and not Node: the point of the spawner is a process with almost no memory to fork
// (~8 MB against the runtime service's ~70 MB heap), and a Node process is 40+ MB before it does
// anything. Why not C: the package ships no native code and needs no compiler to install.
//
// Protocol, on the spawner's stdin: frames `<byte length>\n<fields joined by NUL>`, the fields
//   id, file (absolute), cwd, uid ('' = unchanged), gid ('' = unchanged), stdout path, stderr path,
//   count of cgroup.procs files, those files, argc, argv..., the environment as KEY=VALUE...
// On its stdout, one line each: `S <id> <pid>` started (the program was exec'd), `F <id> <errno>`
// not started, `X <pid> <wait status>` a child exited. End of its stdin ends it, at once: what it
// started keeps running (and is reparented), as the runtime service's own children would be.

export const SPAWNER_TITLE = 'podvisor-spawner';

export const SPAWNER_PROGRAM = String.raw`
use strict;
use warnings;
use POSIX ();
use Fcntl ();

$0 = '${SPAWNER_TITLE}';
my $kids = 0;
my $spawner = $$;
# Deferred (safe) signal: it interrupts the select below, and the loop reaps.
$SIG{CHLD} = sub { };
my $in = '';

sub out {
  my ($s) = @_;
  while (length $s) {
    my $w = syswrite(STDOUT, $s);
    if (!defined $w) { next if $!{EINTR}; POSIX::_exit(0); }
    substr($s, 0, $w) = '';
  }
}

sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    $kids--;
    out("X $pid $?\n");
  }
}

# The child's code below is written to do little: every page a forked Perl writes is copied first,
# which is most of what a fork costs here; so no closures or objects are made after the fork.
my $unblocked = POSIX::SigSet->new();

sub fail {
  my ($ew) = @_;
  my $e = ($! + 0) || 5;
  syswrite($ew, "$e");
  POSIX::_exit(127);
}

# A raw descriptor (POSIX::open, not a Perl handle: one system call) onto fd.
sub onto {
  my ($ew, $path, $mode, $fd) = @_;
  my $n = POSIX::open($path, $mode);
  fail($ew) unless defined $n;
  fail($ew) unless defined POSIX::dup2($n, $fd);
  POSIX::close($n);
}

sub child {
  my ($ew, $file, $cwd, $uid, $gid, $outp, $errp, $procs, $argv, $env) = @_;
  # As libuv's child: no signal blocked; the exec resets the one handler (SIGCHLD) to its default.
  POSIX::sigprocmask(POSIX::SIG_SETMASK(), $unblocked);
  POSIX::setsid();
  # Into the container's cgroups before anything runs (a cgroup removed meanwhile: left outside).
  for my $f (@$procs) {
    my $p = POSIX::open($f, Fcntl::O_WRONLY());
    next unless defined $p;
    POSIX::write($p, "0\n", 2);
    POSIX::close($p);
  }
  onto($ew, '/dev/null', Fcntl::O_RDONLY(), 0);
  onto($ew, $outp, Fcntl::O_RDWR(), 1);
  onto($ew, $errp, Fcntl::O_RDWR(), 2);
  chdir($cwd) or fail($ew);
  if ($uid ne '' || $gid ne '') {
    # As libuv: supplementary groups dropped (to the primary group alone), then gid, then uid.
    my $g = $gid ne '' ? $gid : POSIX::getgid();
    $) = "$g $g";
    if ($gid ne '') { POSIX::setgid($gid) or fail($ew); }
    if ($uid ne '') { POSIX::setuid($uid) or fail($ew); }
  }
  %ENV = ();
  for my $kv (@$env) { my ($k, $v) = split /=/, $kv, 2; $ENV{$k} = $v; }
  # A spawner killed since the fork cannot report this start: run only while it can (holding the
  # output FIFOs from here on, a child that runs is found by them, see SpawnerLostError).
  POSIX::_exit(127) if getppid() != $spawner;
  { no warnings; exec { $file } @$argv; }
  fail($ew);
}

sub start {
  my ($id, $file, $cwd, $uid, $gid, $outp, $errp, $nprocs, @rest) = @_;
  my @procs = splice(@rest, 0, $nprocs);
  my $argc = shift @rest;
  my @argv = splice(@rest, 0, $argc);
  my ($er, $ew);
  if (!pipe($er, $ew)) { out("F $id " . ($! + 0) . "\n"); return; }
  my $pid = fork();
  if (!defined $pid) { my $e = $! + 0; close($er); close($ew); out("F $id $e\n"); return; }
  if ($pid == 0) {
    close($er);
    child($ew, $file, $cwd, $uid, $gid, $outp, $errp, \@procs, \@argv, \@rest);
  }
  $kids++;
  close($ew);
  # The pipe closes on exec (close-on-exec), or carries the errno that stopped the child.
  my $got = '';
  while (!defined sysread($er, $got, 16)) { last unless $!{EINTR}; }
  close($er);
  out($got eq '' ? "S $id $pid\n" : "F $id $got\n");
}

while (1) {
  reap();
  my $rin = '';
  vec($rin, 0, 1) = 1;
  # A child's SIGCHLD interrupts the select; the timeout only covers one that lands just before it.
  my $n = select(my $rout = $rin, undef, undef, $kids > 0 ? 1 : undef);
  next unless $n && $n > 0;
  my $r = sysread(STDIN, $in, 65536, length $in);
  if (!defined $r) { next if $!{EINTR} || $!{EAGAIN}; POSIX::_exit(0); }
  POSIX::_exit(0) if $r == 0;
  while ($in =~ /^(\d+)\n/) {
    my $len = $1;
    my $head = length($len) + 1;
    last if length($in) < $head + $len;
    my $payload = substr($in, $head, $len);
    substr($in, 0, $head + $len) = '';
    start(split(/\0/, $payload, -1));
  }
}
`;
