import { defineConfig } from "vitest/config";

// The container lane (`npm run test:containers`, run by .ci/run): the Dockerfile and compose.yaml
// built and run with podman (test/containers/). Apart from `npm test` since it needs root, podman,
// runc and debootstrap, and minutes: the first run on a machine makes the stand-in base images.
// One file at a time: both build the same image, the second from podman's layer cache.
export default defineConfig({
  test: {
    include: ["test/containers/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 25 * 60_000,
  },
});
