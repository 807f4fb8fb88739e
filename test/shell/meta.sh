#!/usr/bin/env bash
# meta: META.json follows the PGXN Meta Spec 1.0.0 in what PGXN checks
# (required keys and their forms), names the control file's version, and
# points at files that exist; `make dist` builds the archive PGXN expects.
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
check("provides.okno.file is the install script of the current version",
      okno.get("file") == "sql/okno--%s.sql" % default_version)
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

# make dist: a zip of the committed tree with the version prefix
version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" okno.control)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git archive --format zip --prefix="okno-$version/" -o "$work/okno-$version.zip" HEAD
	list=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$work/okno-$version.zip")
	for f in META.json okno.control Makefile README.md "sql/okno--$version.sql"; do
		if printf '%s\n' "$list" | grep -qx "okno-$version/$f"; then
			echo "ok - the dist archive holds okno-$version/$f"
		else
			echo "not ok - the dist archive holds okno-$version/$f"
		fi
	done
	if printf '%s\n' "$list" | grep -qv "^okno-$version/"; then
		echo "not ok - every file in the dist archive is under okno-$version/"
	else
		echo "ok - every file in the dist archive is under okno-$version/"
	fi
else
	echo "ok - the dist archive check needs a git checkout # skip"
fi
