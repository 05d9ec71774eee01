/**
 * The OpenTelemetry SDK costs nothing when tracing is off: a `mcp-tasks serve` that runs a task
 * without any OTEL_* variable loads no `@opentelemetry/sdk-*` or exporter module (only the API,
 * whose calls are no-ops), and the same run with an OTLP endpoint set does load them — so the
 * recorder would see them if they were loaded.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, CliProcess, cliEnv, killAll, REPO_ROOT } from "../support/cli-process.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import { statelessResult } from "../support/stateless-client.js";

const RECORDER = fileURLToPath(new URL("../support/load-recorder/recorder.mjs", import.meta.url));
const SDK_MODULE = /\/node_modules\/@opentelemetry\/(sdk-|exporter-|otlp-|resources\/)/;

let dir: string;
let receiver: OtlpReceiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-otel-load-"));
  receiver = await OtlpReceiver.start();
});

afterEach(async () => {
  await killAll();
});

afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Serves, runs one tool call, stops; returns every module the server process resolved. */
async function modulesOfARun(env: Record<string, string>): Promise<string[]> {
  const log = join(dir, `loaded-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(log, "");
  const child = spawn(process.execPath, ["--import", RECORDER, BIN, "serve", "--demo", "--store", "memory", "--port", "0"], {
    cwd: REPO_ROOT,
    env: cliEnv({ ...env, LOADED_LOG: log }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const server = CliProcess.of(child);
  const url = await server.url();
  expect(await statelessResult(url, "tools/call", { name: "echo", arguments: { text: "hi" } })).toMatchObject({
    content: [{ type: "text", text: "hi" }],
  });
  await server.kill("SIGTERM");
  return readFileSync(log, "utf8").split("\n").filter(Boolean);
}

describe("the OpenTelemetry SDK is loaded only when the environment asks for it", { timeout: 60_000 }, () => {
  it("tracing off: a serve that answers a call loads no @opentelemetry/sdk-*, exporter or resources module", async () => {
    const loaded = await modulesOfARun({});
    expect(loaded.some((line) => line.includes("/src/mcp/tracing/operation-span.ts"))).toBe(true);
    expect(loaded.filter((line) => SDK_MODULE.test(line))).toEqual([]);
  });

  it("tracing on (OTEL_EXPORTER_OTLP_ENDPOINT): the same run loads the Node SDK and the OTLP exporter", async () => {
    const loaded = await modulesOfARun({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" });
    expect(loaded.some((line) => line.includes("/node_modules/@opentelemetry/sdk-node/"))).toBe(true);
    expect(loaded.some((line) => line.includes("/node_modules/@opentelemetry/exporter-trace-otlp-proto/"))).toBe(true);
  });
});
