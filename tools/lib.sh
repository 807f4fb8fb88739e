# tools/lib.sh: the shell helpers okno's tools share (sourced, not run).
#
# tools/run, tools/tap, tools/sanitize, tools/example and tools/bench source
# it after setting PACKAGES (what they need from Debian).  PGVER (default 15,
# the host's) chooses the PostgreSQL they build and run against; tools/test-all
# runs them inside the Debian roots of 17 and 18 with PGVER set.
#
#   say MESSAGE...              "== MESSAGE" on stderr
#   as_pg COMMAND...            COMMAND as the postgres OS user when run as root
#                               (the server refuses to run as root)
#   ensure_packages WHO         install PACKAGES from Debian when root, else
#                               print the apt-get line; false if any is missing
#   build_and_install           build with -Wall -Wextra -Werror (PG_CFLAGS:
#                               not forced on a user's plain make) and install,
#                               each file replaced at once (install_staged)
#   install_staged              make install into a staging directory, then
#                               rename each file into place, one install at a
#                               time (flock on the library directory): a
#                               server of a run beside this one never loads a
#                               half-written okno.so; then removes the full
#                               scripts of older versions an earlier install
#                               left (make remove-old-scripts)
#   cluster_start NAME PORT [SETTING...]
#                               initdb and start a throwaway cluster in a new
#                               temporary directory, listening on its Unix
#                               socket only; sets TMPROOT, PGHOST, PGPORT,
#                               PGUSER, PGDATABASE.  CLUSTER_INITDB (default
#                               --no-sync) and CLUSTER_ENV (an environment
#                               assignment for the server) adjust it
#   cluster_stop RC             stop it and remove the directory; with a
#                               non-zero RC first print the server log's tail
#   copy_tree DEST              a copy of the checkout (tracked files, and new
#                               ones not ignored) at DEST
#   mount_root ROOT, umount_root ROOT
#                               /proc, /dev, /dev/pts and a /dev/shm of its
#                               own in a Debian root (tools/pgroot), for a
#                               server and its tests to run in it (root only)
#   root_run ROOT [NAME=VALUE...] COMMAND...
#                               COMMAND in that root, with those mounts in a
#                               mount namespace of its own (root only)

PGVER=${PGVER:-15}
PGBIN=/usr/lib/postgresql/$PGVER/bin
PG_CONFIG=$PGBIN/pg_config
export PG_CONFIG

say() { printf '== %s\n' "$*" >&2; }

as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

ensure_packages() {
	local who=$1 missing=() p
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "$who needs these Debian packages; as root (su -, or sudo where it is set up):" >&2
		echo "    apt-get update && apt-get install -y ${missing[*]}" >&2
		return 1
	fi
	say "installing ${missing[*]}"
	apt-get update -qq >&2 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

build_and_install() {
	local server
	server=$($PG_CONFIG --includedir-server)
	say "building okno for PostgreSQL $PGVER with -Wall -Wextra -Werror"
	# The server's headers are a system directory here so that -Wextra
	# judges okno's code, not PostgreSQL's.
	make -s PG_CONFIG="$PG_CONFIG" PG_CPPFLAGS="-isystem $server" \
		PG_CFLAGS="-Wall -Wextra -Werror" >&2 || return 1
	if [ -w "$($PG_CONFIG --pkglibdir)" ] && [ -w "$($PG_CONFIG --sharedir)/extension" ]; then
		install_staged >&2
	else
		echo "cannot write to $($PG_CONFIG --pkglibdir): run as root, or 'make install' as root first" >&2
		return 1
	fi
}

# make install writes okno.so in place (install(1) unlinks it and writes
# a new file): a backend of another run (make test in another clone) that
# loads it meanwhile can find it cut short.  So: install into a staging
# directory, then copy each file next to its place and rename it over the
# old one, which a backend sees whole, old or new.
install_staged() {
	local stage lib rc=0
	lib=$($PG_CONFIG --pkglibdir)
	stage=$(mktemp -d "${TMPDIR:-/tmp}/okno-install.XXXXXX") || return 1
	if make -s PG_CONFIG="$PG_CONFIG" install DESTDIR="$stage"; then
		# shellcheck disable=SC2016
		flock -w 600 "$lib" bash -c '
			cd "$1" && find . -type f | while read -r f; do
				d=/${f#./}
				mkdir -p "$(dirname "$d")" &&
					cp -p "$f" "$d.okno-install.$$" &&
					mv -f "$d.okno-install.$$" "$d" || exit 1
			done' bash "$stage" || rc=1
	else
		rc=1
	fi
	rm -rf "$stage"
	# and, as `make install` does, the full scripts of older versions that
	# an earlier install left there (only the current one may be
	# installable: docs/RELEASING.md); the staged install removed them from
	# the staging directory only
	[ $rc -ne 0 ] || make -s PG_CONFIG="$PG_CONFIG" remove-old-scripts || rc=1
	return $rc
}

cluster_start() {
	local name=$1 port=$2 opts s
	shift 2
	TMPROOT=$(mktemp -d "${TMPDIR:-/tmp}/okno-$name.XXXXXX")
	[ "$(id -u)" -eq 0 ] && chown postgres: "$TMPROOT"
	chmod 700 "$TMPROOT"
	export PGHOST=$TMPROOT PGPORT=$port PGUSER=postgres PGDATABASE=postgres
	unset PGPASSWORD PGSERVICE PGOPTIONS
	say "starting a throwaway PostgreSQL $PGVER cluster in $TMPROOT (socket only, port $PGPORT)"
	# shellcheck disable=SC2086
	as_pg "$PGBIN/initdb" -D "$TMPROOT/data" -U postgres -A trust -E UTF8 \
		--locale=C ${CLUSTER_INITDB---no-sync} >"$TMPROOT/initdb.log" 2>&1 ||
		{ cat "$TMPROOT/initdb.log" >&2; return 1; }
	opts="-c listen_addresses='' -c unix_socket_directories='$TMPROOT' -c port=$PGPORT"
	for s in "$@"; do opts="$opts -c $s"; done
	as_pg env ${CLUSTER_ENV:+"$CLUSTER_ENV"} "$PGBIN/pg_ctl" -D "$TMPROOT/data" \
		-l "$TMPROOT/server.log" -w -t 120 -o "$opts" start >/dev/null ||
		{ cat "$TMPROOT/server.log" >&2; return 1; }
}

cluster_stop() {
	local rc=${1:-0}
	if [ -n "${TMPROOT:-}" ] && [ -d "$TMPROOT/data" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$TMPROOT/data" -m fast -w stop >/dev/null 2>&1 || true
		if [ "$rc" -ne 0 ] && [ -f "$TMPROOT/server.log" ]; then
			echo "--- last lines of the server log" >&2
			tail -n 30 "$TMPROOT/server.log" >&2
		fi
	fi
	[ -n "${TMPROOT:-}" ] && rm -rf "$TMPROOT"
	TMPROOT=
}

# history_start PORT: a second throwaway cluster (HISTROOT, under TMPROOT)
# whose server can also install the older versions of okno, for the tests
# of updates from them.  No installed package ships those versions' full
# scripts (only the current version can be installed, docs/RELEASING.md),
# so the server runs from an installation of its own: a copy of the
# server's binaries at the same paths under HISTROOT/pg (PostgreSQL finds
# its share and lib directories relative to its binary, as tools/sanitize
# relies on too), their share and lib directories as trees of symbolic
# links to the installed ones (okno's library and scripts included), and
# the older full scripts of test/upgrade/base added to its extension
# directory.  HISTHOST and HISTPORT say where it listens.
history_start() {
	local port=$1 tree bindir sharedir libdir opts
	HISTROOT=$TMPROOT/history
	tree=$HISTROOT/pg
	bindir=$($PG_CONFIG --bindir)
	sharedir=$($PG_CONFIG --sharedir)
	libdir=$($PG_CONFIG --pkglibdir)
	mkdir -p "$tree$bindir" "$(dirname "$tree$sharedir")" "$(dirname "$tree$libdir")" || return 1
	cp -p "$bindir/postgres" "$bindir/pg_ctl" "$tree$bindir/" &&
		cp -rs "$sharedir" "$tree$sharedir" &&
		cp -rs "$libdir" "$tree$libdir" &&
		cp "$top"/test/upgrade/base/okno--*.sql "$tree$sharedir/extension/" || return 1
	[ "$(id -u)" -eq 0 ] && chown postgres: "$HISTROOT"
	as_pg "$PGBIN/initdb" -D "$HISTROOT/data" -U postgres -A trust -E UTF8 \
		--locale=C --no-sync >"$HISTROOT/initdb.log" 2>&1 ||
		{ cat "$HISTROOT/initdb.log" >&2; return 1; }
	opts="-c listen_addresses='' -c unix_socket_directories='$HISTROOT' -c port=$port -c fsync=off"
	as_pg "$tree$bindir/pg_ctl" -D "$HISTROOT/data" -l "$HISTROOT/server.log" -w -t 120 \
		-o "$opts" start >/dev/null || { cat "$HISTROOT/server.log" >&2; return 1; }
	HISTHOST=$HISTROOT
	HISTPORT=$port
}

history_stop() {
	[ -n "${HISTROOT:-}" ] && [ -d "$HISTROOT/data" ] &&
		as_pg "$HISTROOT/pg$($PG_CONFIG --bindir)/pg_ctl" -D "$HISTROOT/data" -m fast -w stop >/dev/null 2>&1
	HISTROOT=
	return 0
}

copy_tree() {
	rm -rf "$1"
	mkdir -p "$1"
	(cd "$top" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$1"
}

mount_root() {
	mountpoint -q "$1/proc" || mount -t proc proc "$1/proc"
	mountpoint -q "$1/dev" || mount --bind /dev "$1/dev"
	mountpoint -q "$1/dev/pts" || mount --bind /dev/pts "$1/dev/pts"
	mkdir -p "$1/dev/shm"
	mountpoint -q "$1/dev/shm" || mount -t tmpfs -o mode=1777 tmpfs "$1/dev/shm"
}

umount_root() {
	local m
	for m in dev/shm dev/pts dev proc; do
		mountpoint -q "$1/$m" && umount -l "$1/$m"
	done
	return 0
}

# root_run ROOT [NAME=VALUE...] COMMAND...: COMMAND in the Debian root ROOT
# (tools/pgroot) with a clean environment plus the NAME=VALUE given, after
# mount_root and with /sys read-only (lscpu needs it), but in a mount
# namespace of its own: another run in the same root ending meanwhile
# (tools/test-all unmounts its roots when it ends) cannot unmount /proc or
# /dev from under this one, and this one's mounts go when it ends (root only)
root_run() {
	local root=$1
	shift
	# shellcheck disable=SC2016
	unshare --mount --propagation private bash -c "$(declare -f mount_root)"'
		mount_root "$0" &&
		{ mountpoint -q "$0/sys" || mount -t sysfs -o ro sysfs "$0/sys"; } &&
		exec chroot "$0" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"' "$root" "$@"
}
