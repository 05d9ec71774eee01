#!/usr/bin/env node
// The installed CLI: the compiled JavaScript in dist/ (built by `npm run build`, which `npm pack`
// runs). The repository's tests and `npm start` run the TypeScript sources (bin/mcp-tasks-dev.js).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const built = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(built))) {
  process.stderr.write("mcp-tasks: dist/ is missing; run `npm run build` (or use bin/mcp-tasks-dev.js in the repository)\n");
  process.exit(1);
}
await import(built.href);
