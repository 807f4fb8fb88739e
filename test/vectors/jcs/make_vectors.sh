#!/usr/bin/env bash
# test/vectors/jcs/make_vectors.sh: (re)write numbers.tsv and documents.tsv
# beside this script with make_vectors.mjs.  The npm package it needs
# (canonicalize, pinned in package.json and package-lock.json) is installed
# into a temporary directory outside the repository, which is removed
# afterwards; nothing is left in the work tree but the two .tsv files.
# Needs node (20 or later) and npm, and the npm registry.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/okno-jcs-vectors.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cp "$here/package.json" "$here/package-lock.json" "$here/make_vectors.mjs" "$tmp/"
(cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts >/dev/null)
node "$tmp/make_vectors.mjs" "$here"
