#!/usr/bin/env bash
# Makes sure the PostgreSQL named by PARLEY_TEST_DATABASE_URL answers before
# the tests run: starts the local cluster when it is down and we are root.
# With CI=true a database that cannot be reached fails the run.
set -euo pipefail
url="${PARLEY_TEST_DATABASE_URL:-}"
if [ -z "$url" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "test-services: CI=true but PARLEY_TEST_DATABASE_URL is unset; the PostgreSQL store suite must run in CI" >&2
    exit 1
  fi
  echo "test-services: PARLEY_TEST_DATABASE_URL unset: store tests run on SQLite only" >&2
  exit 0
fi
hostport=$(printf '%s' "$url" | sed -E 's#^[a-z]+://([^@/]*@)?([^/?]*).*#\2#')
host=${hostport%%:*}; port=${hostport##*:}; [ "$port" = "$hostport" ] && port=5432
up() { (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; }
if up; then exit 0; fi
if [ "$(id -u)" -eq 0 ] && command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
  echo "test-services: starting the local PostgreSQL cluster" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n1)" main start || true
  for _ in $(seq 50); do up && exit 0; sleep 0.2; done
fi
echo "test-services: PostgreSQL at $host:$port does not answer (PARLEY_TEST_DATABASE_URL)" >&2
exit 1
