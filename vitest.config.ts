import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { lanes } from "./test/lanes.js";

const shared = {
  testTimeout: 20_000,
  hookTimeout: 20_000,
};

// Two lanes, decided from each file's imports (test/lanes.ts): `unit` needs no external service
// and spawns no process (`npm run test:unit`); `integration` is the rest. `npm test` runs both.
const { unit, integration } = lanes(fileURLToPath(new URL(".", import.meta.url)));

export default defineConfig({
  test: {
    // Two cores: end-to-end suites spawn servers; keep parallelism modest so timings stay honest.
    maxWorkers: 2,
    projects: [
      { test: { ...shared, name: "unit", include: unit } },
      { test: { ...shared, name: "integration", include: integration } },
    ],
  },
});
