#!/usr/bin/env bash
# Installs the Debian packages Parley's run and tests need, when missing.
# As root it runs apt-get; otherwise it prints the command to run. With
# CI=true anything still missing fails the run: CI never silently skips.
#
# Usage: scripts/deps.sh [LIST...]: the package lists to satisfy, default
# scripts/packages.txt (what `make test` needs); `make bench` adds
# scripts/bench-packages.txt (what only the benchmarks use).
#
# Then the Go programs the tests run (scripts/go-tools.txt) are built with
# `go install` into bin/tools, where the tests look for them; a program is
# rebuilt when its version in the list changes.
set -euo pipefail
cd "$(dirname "$0")/.."

need_go="1.26"
if ! command -v go >/dev/null; then
  echo "deps: Go $need_go or newer is required (https://go.dev/dl/)" >&2
  exit 1
fi
have_go=$(go env GOVERSION | sed 's/^go//')
if [ "$(printf '%s\n%s\n' "$need_go" "$have_go" | sort -V | head -n1)" != "$need_go" ]; then
  echo "deps: Go $need_go or newer is required, found $have_go" >&2
  exit 1
fi

# One package a line: "package check", where check shows the package is
# installed: a command (looked up in PATH), or an absolute path to a file
# the package installs (for packages of data or libraries, which have no
# command); no check means a command named as the package. '#' starts a
# comment.
lists=("$@")
[ ${#lists[@]} -eq 0 ] && lists=(scripts/packages.txt)
installed() {
  case "$1" in
    /*) [ -e "$1" ] ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}
missing=()
for list in "${lists[@]}"; do
  while read -r pkg check _; do
    [ -z "${pkg:-}" ] || [ "${pkg#\#}" != "$pkg" ] && continue
    installed "${check:-$pkg}" || missing+=("$pkg")
  done < "$list"
done

# Go tools: "name module/path@version" a line, installed into bin/tools.
tools_dir="$PWD/bin/tools"
tools_failed=()
while read -r name pkg _; do
  [ -z "${name:-}" ] || [ "${name#\#}" != "$name" ] && continue
  stamp="$tools_dir/.$name.version"
  if [ -x "$tools_dir/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkg" ]; then
    continue
  fi
  echo "deps: building $name ($pkg) into bin/tools (the first build takes a few minutes)" >&2
  if GOBIN="$tools_dir" CGO_ENABLED=0 go install -trimpath -ldflags="-s -w" "$pkg"; then
    echo "$pkg" >"$stamp"
  else
    tools_failed+=("$name")
  fi
done < scripts/go-tools.txt
if [ ${#tools_failed[@]} -gt 0 ]; then
  echo "deps: could not build Go tools: ${tools_failed[*]} (scripts/go-tools.txt)" >&2
  if [ "${CI:-}" = "true" ]; then
    exit 1
  fi
  echo "deps: continuing; tests that need them will skip, saying what is missing" >&2
fi

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "deps: missing Debian packages: ${missing[*]}" >&2
echo "deps: install them with: sudo apt-get install -y ${missing[*]}" >&2
if [ "${CI:-}" = "true" ]; then
  exit 1
fi
echo "deps: continuing; tests that need them will fail or say what is missing" >&2
