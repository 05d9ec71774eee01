import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { lanes } from "./test/lanes.js";

const shared = {
  testTimeout: 20_000,
  hookTimeout: 20_000,
};

// Two lanes, decided from each file's imports (test/lanes.ts): `unit` needs no external service
// and spawns no process (`npm run test:unit`); `integration` is the rest. `npm test` runs both.
// test/containers/ is a lane of its own (vitest.containers.config.ts, `npm run test:containers`).
const lanesOf = lanes(fileURLToPath(new URL(".", import.meta.url)));
const outsideContainers = (files: string[]) => files.filter((file) => !file.startsWith("test/containers/"));
const unit = outsideContainers(lanesOf.unit);
const integration = outsideContainers(lanesOf.integration);

export default defineConfig({
  test: {
    // Two cores: end-to-end suites spawn servers; keep parallelism modest so timings stay honest.
    maxWorkers: 2,
    projects: [
      // No module isolation between unit files: each worker loads the SDK, zod and the engine once
      // instead of once per file (a third of the lane's time). A unit file leaves no global state
      // behind (a file that registers an OpenTelemetry provider disables it in its afterAll).
      { test: { ...shared, name: "unit", include: unit, isolate: false } },
      { test: { ...shared, name: "integration", include: integration } },
    ],
  },
});
