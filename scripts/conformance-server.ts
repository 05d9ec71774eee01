/**
 * `npm run conformance-server -- --port N [--store SPEC]`: a server with the official
 * conformance suite's fixture tools (requirements Appendix B) on Streamable HTTP at /mcp, both
 * eras on one endpoint. Public API only. Prints the URL once listening; stops on SIGINT/SIGTERM.
 */
import { parseArgs } from "node:util";
import { registerConformanceTools } from "../src/exports/demo.js";
import { serveHttp } from "../src/exports/http.js";
import { postgresStore } from "../src/exports/postgres.js";
import { createTaskServer, memoryStore, type TaskServerOptions } from "../src/exports/server.js";
import { sqliteStore } from "../src/exports/sqlite.js";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "3000" },
    host: { type: "string", default: "127.0.0.1" },
    store: { type: "string", default: "memory" },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port must be an integer 0..65535, not ${values.port}`);
  process.exit(2);
}

/** `memory`, `sqlite:PATH` (or a path ending .db), or `postgres://…` (one process: the in-process bus). */
function storeOf(spec: string): TaskServerOptions["store"] {
  if (spec === "memory") return memoryStore();
  if (spec.startsWith("postgres://") || spec.startsWith("postgresql://")) return postgresStore(spec);
  if (spec.startsWith("sqlite:")) return sqliteStore(spec.slice("sqlite:".length));
  if (spec.endsWith(".db")) return sqliteStore(spec);
  console.error(`--store must be memory, sqlite:PATH, PATH.db or postgres://…, not ${spec}`);
  process.exit(2);
}

// The fallback for hosts without tasks off: the suite checks the extension's own answer to a
// non-declaring client (-32021 for a required tool, X-CAP-6), which the fallback replaces with a
// plain CallToolResult (README "Hosts without tasks").
const app = registerConformanceTools(
  createTaskServer({ name: "mcp-tasks-conformance", version: "0.1.0", store: storeOf(values.store), backgroundAfterMs: null }),
);
// Its own stop below: the suites end it with a signal and want it gone at once, not drained.
const http = await serveHttp(app, { port, host: values.host, handleSignals: false });
console.log(http.url);

const stop = async (): Promise<void> => {
  await http.close();
  await app.close();
  process.exit(0);
};
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
