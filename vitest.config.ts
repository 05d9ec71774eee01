import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Two cores: end-to-end suites spawn servers; keep parallelism modest so timings stay honest.
    maxWorkers: 2,
  },
});
