import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, it, type TestAPI } from "vitest";
import { httpSdkFixture, plainJsonFixture, type ConformanceFixture } from "../../support/conformance-fixtures.js";
import { inMemoryFixture, type FixtureOptions } from "../../support/in-memory-fixture.js";

/** The ways a request reaches the engine. */
export type PathName = "in-memory" | "http-local" | "http-shared" | "plain-json";

/** One way a request reaches the engine: starts the demo server and a requestor on that path. */
export interface ConformancePath {
  name: PathName;
  start(options?: FixtureOptions, capabilities?: ClientCapabilities): Promise<ConformanceFixture>;
}

/**
 * The fallback for hosts without tasks off: this suite checks 2025-11-25's own rules (T-TOOL-4,
 * T-META-1…) with clients that declare no `tasks` capability, which the fallback would serve
 * differently (test/mcp/fallback covers it). A test may still switch it on in its options.
 */
const strict = (options: FixtureOptions = {}): FixtureOptions => ({ backgroundAfterMs: null, ...options });

export const PATHS: Record<PathName, ConformancePath> = {
  // The SDK Client and our server joined by the SDK's InMemoryTransport.
  "in-memory": { name: "in-memory", start: (options, capabilities) => inMemoryFixture(strict(options), capabilities) },
  // serveHttp with Streamable HTTP sessions held by this process; the SDK's StreamableHTTPClientTransport.
  "http-local": { name: "http-local", start: (options, capabilities) => httpSdkFixture("local", strict(options), capabilities) },
  // serveHttp with signed (cluster-style) sessions, on one node: a memory store's secret signs
  // them and the local bus carries the GET stream's notifications (no lease store needed).
  "http-shared": { name: "http-shared", start: (options, capabilities) => httpSdkFixture("shared", strict(options), capabilities) },
  // Raw POSTs over fetch to a shared-sessions server, every task request answered as one JSON body.
  "plain-json": { name: "plain-json", start: (options, capabilities) => plainJsonFixture(strict(options), capabilities) },
};

/**
 * Paths whose requestor holds a stream the server writes to: status notifications and progress
 * reach it, and it answers the server's requests (elicitation, sampling). The plain-JSON client
 * only POSTs and reads each answer, so a test that needs any of that cannot apply to it.
 */
export const STREAMING: readonly PathName[] = ["in-memory", "http-local", "http-shared"];

/** `it` on the named paths; elsewhere the test is not registered (each call site says why). */
export function on(path: ConformancePath, paths: readonly PathName[]): TestAPI | ((name: string, fn: () => Promise<void>) => void) {
  return paths.includes(path.name) ? it : () => {};
}

/** Starts fixtures on `path` for the tests of one suite and closes each after its test. */
export function useFixture(
  path: ConformancePath,
): (options?: FixtureOptions, capabilities?: ClientCapabilities) => Promise<ConformanceFixture> {
  let started: ConformanceFixture[] = [];
  afterEach(async () => {
    const closing = started;
    started = [];
    for (const fixture of closing) await fixture.close();
  });
  return async (options, capabilities) => {
    const fixture = await path.start(options, capabilities);
    started.push(fixture);
    return fixture;
  };
}
