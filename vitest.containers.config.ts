import { defineConfig } from "vitest/config";

// The container lane (`npm run test:containers`, run by .ci/run): the Dockerfile and compose.yaml
// built and run with podman (test/containers/). Apart from `npm test` since it needs root, podman,
// runc and debootstrap, and minutes: the first run on a machine makes the stand-in base images.
// The images are built once, before the files run (test/containers/global-setup.ts); the files run
// one at a time, each with containers of its own.
export default defineConfig({
  test: {
    include: ["test/containers/**/*.test.ts"],
    globalSetup: ["test/containers/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 5 * 60_000,
  },
});
