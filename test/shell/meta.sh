#!/usr/bin/env bash
# meta: META.json follows the PGXN Meta Spec 1.0.0 in what PGXN checks
# (required keys and their forms), names the control file's version, and
# points at files that exist; the Makefile generates the current version's
# install script from sql/okno.sql and installs every script once; `make
# dist` builds the archive PGXN expects, and make in it the install script.
# Prints one "ok - ..." or "not ok - ..." line per check.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

python3 - <<'PY'
import json, os, re

def check(desc, cond, why=""):
    print(("ok - " if cond else "not ok - ") + desc)
    if not cond and why:
        print("#   " + why)

try:
    meta = json.load(open("META.json"))
    check("META.json is valid JSON", True)
except Exception as e:
    check("META.json is valid JSON", False, str(e))
    raise SystemExit(0)

control = open("okno.control").read()
m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
default_version = m.group(1) if m else None

semver = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z-]+)?$")
required = ["name", "abstract", "version", "maintainer", "license", "provides", "meta-spec"]
check("the required keys are present", all(k in meta for k in required),
      "missing: %s" % [k for k in required if k not in meta])
check("name is okno", meta.get("name") == "okno")
check("abstract is a non-empty string", isinstance(meta.get("abstract"), str) and meta["abstract"].strip() != "")
check("version is a semantic version", isinstance(meta.get("version"), str) and bool(semver.match(meta["version"])))
check("version equals the control file's default_version (%s)" % default_version,
      meta.get("version") == default_version, "META.json has %r" % meta.get("version"))
maint = meta.get("maintainer")
check("maintainer is a string or a non-empty list of strings",
      isinstance(maint, str) or (isinstance(maint, list) and maint and all(isinstance(x, str) for x in maint)))
licenses = {"agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd", "gfdl_1_2",
            "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit", "mozilla_1_0", "mozilla_1_1",
            "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay", "sun", "zlib", "open_source",
            "restricted", "unrestricted", "unknown"}
lic = meta.get("license")
check("license is a PGXN license string", (isinstance(lic, str) and lic in licenses) or isinstance(lic, dict))
check("LICENSE file exists for the postgresql license", lic != "postgresql" or os.path.exists("LICENSE"))
spec = meta.get("meta-spec", {})
check("meta-spec version is 1.0.0", isinstance(spec, dict) and spec.get("version") == "1.0.0")
prov = meta.get("provides", {})
check("provides names the okno extension", isinstance(prov, dict) and "okno" in prov)
okno = prov.get("okno", {}) if isinstance(prov, dict) else {}
check("provides.okno.version equals the distribution version", okno.get("version") == meta.get("version"))
check("provides.okno.file points at an existing file", isinstance(okno.get("file"), str) and os.path.isfile(okno["file"]),
      "file: %r" % okno.get("file"))
check("provides.okno.file is sql/okno.sql, the editable source of the current version's install script",
      okno.get("file") == "sql/okno.sql", "file: %r" % okno.get("file"))
check("provides.okno.docfile points at an existing file",
      "docfile" not in okno or os.path.isfile(okno["docfile"]))
check("release_status, if given, is stable, testing or unstable",
      meta.get("release_status", "stable") in ("stable", "testing", "unstable"))
pre = meta.get("prereqs", {})
ok = isinstance(pre, dict)
for phase, rels in (pre.items() if ok else []):
    ok = ok and phase in ("configure", "build", "test", "runtime", "develop") and isinstance(rels, dict)
    for rel, mods in (rels.items() if isinstance(rels, dict) else []):
        ok = ok and rel in ("requires", "recommends", "suggests", "conflicts") and isinstance(mods, dict)
check("prereqs use the spec's phases and relationships", ok)
check("prereqs require PostgreSQL and btree_gist at runtime",
      "PostgreSQL" in pre.get("runtime", {}).get("requires", {}) and "btree_gist" in pre.get("runtime", {}).get("requires", {}))
check("CHANGELOG.md has an entry for this version",
      os.path.exists("CHANGELOG.md") and ("## %s" % default_version) in open("CHANGELOG.md").read())
PY

version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" okno.control)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say() {	# say CONDITION-EXIT-STATUS DESCRIPTION
	if [ "$1" -eq 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fi
}
# a Makefile variable as make expands it (PGXS or not)
makevar() {
	make -s --no-print-directory --eval 'print-%: ; @echo $($*)' "print-$1" 2>/dev/null
}

# The current version's install script sql/okno--VERSION.sql is generated
# from sql/okno.sql (DATA_built); DATA installs the rest as they are.
built=$(makevar DATA_built)
[ "$built" = "sql/okno--$version.sql" ]
say $? "the Makefile generates sql/okno--$version.sql (DATA_built: $built)"
data=" $(makevar DATA) "
case "$data" in *" sql/okno--$version.sql "*) false ;; esac
say $? "DATA does not name the generated sql/okno--$version.sql (it would be installed twice)"
missing=
for f in sql/okno--*.sql; do
	[ "$f" = "sql/okno--$version.sql" ] && continue
	case "$data" in *" $f "*) ;; *) missing="$missing $f" ;; esac
done
[ -z "$missing" ]
say $? "DATA names every other sql/okno--*.sql, the frozen full scripts and the update scripts${missing:+ (missing:$missing)}"

# No older version's full script is installed, so no role can install an
# older version (docs/RELEASING.md): DATA is the update scripts, and
# make install removes the full scripts an earlier make install left
olds=
for f in $data; do
	case "$f" in sql/okno--*--*.sql) ;; *) olds="$olds $f" ;; esac
done
[ -z "$olds" ]
say $? "DATA installs update scripts only, no older version's full script${olds:+ (it has:$olds)}"
stage=$work/stage
extdir=$stage$(makevar datadir)/extension
mkdir -p "$extdir"
touch "$extdir/okno--0.5.0.sql" "$extdir/okno--0.2.0.sql" "$extdir/okno--0.6.0--0.7.0.sql" "$extdir/other--1.0.sql"
if make -s install DESTDIR="$stage" >/dev/null 2>&1; then
	[ ! -e "$extdir/okno--0.5.0.sql" ] && [ ! -e "$extdir/okno--0.2.0.sql" ] &&
		[ -e "$extdir/okno--0.6.0--0.7.0.sql" ] && [ -e "$extdir/okno--$version.sql" ] &&
		[ -e "$extdir/other--1.0.sql" ]
	say $? "make install removes the full scripts of older versions an earlier make install left, and nothing else"
else
	echo "not ok - make install into a staging directory failed"
fi

# PostgreSQL 15's pg_regress (REGRESS_OPTS=--inputdir=test, output in .)
# reads sql/NAME.sql in place of test/sql/NAME.sql when it exists.
shadowed=
for t in $(makevar REGRESS) $(makevar REGRESS_HISTORY); do
	[ -e "sql/$t.sql" ] && shadowed="$shadowed sql/$t.sql"
done
[ -z "$shadowed" ]
say $? "no regress test is shadowed by a file of the same name under sql/${shadowed:+ (shadowed by:$shadowed)}"

# make dist: a zip of the committed tree with the version prefix; PGXN's
# build (make) generates the install script from it
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	! git ls-files --error-unmatch "sql/okno--$version.sql" >/dev/null 2>&1
	say $? "git does not track the generated sql/okno--$version.sql"
	git check-ignore -q --no-index "sql/okno--$version.sql"
	say $? ".gitignore lists the generated sql/okno--$version.sql"
	git archive --format zip --prefix="okno-$version/" -o "$work/okno-$version.zip" HEAD
	list=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$work/okno-$version.zip")
	for f in META.json okno.control Makefile README.md sql/okno.sql; do
		printf '%s\n' "$list" | grep -qx "okno-$version/$f"
		say $? "the dist archive holds okno-$version/$f"
	done
	! printf '%s\n' "$list" | grep -qx "okno-$version/sql/okno--$version.sql"
	say $? "the dist archive does not hold the generated sql/okno--$version.sql"
	! printf '%s\n' "$list" | grep -qv "^okno-$version/"
	say $? "every file in the dist archive is under okno-$version/"
	# make in the unpacked archive: the source with its first line naming
	# the version's file, the rest byte for byte
	python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
		"$work/okno-$version.zip" "$work/x"
	d=$work/x/okno-$version
	{ make -s -C "$d" "sql/okno--$version.sql" &&
		[ "$(head -n 1 "$d/sql/okno--$version.sql")" = "/* okno--$version.sql: $(head -n 1 "$d/sql/okno.sql" | sed 's|^/\* okno\.sql: ||')" ] &&
		cmp -s <(tail -n +2 "$d/sql/okno.sql") <(tail -n +2 "$d/sql/okno--$version.sql"); } >/dev/null 2>&1
	say $? "make in the unpacked dist archive generates sql/okno--$version.sql from sql/okno.sql"
else
	echo "ok - the dist archive check needs a git checkout # skip"
fi
