import { writeHeapSnapshot } from "node:v8";
let n = 0;
process.on("SIGUSR2", () => {
  globalThis.gc();
  globalThis.gc();
  if (process.env.SNAP_DIR) writeHeapSnapshot(`${process.env.SNAP_DIR}/s${n++}.heapsnapshot`);
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  process.stderr.write(`heap-after-gc ${JSON.stringify({ rss, heapUsed, external, arrayBuffers })}\n`);
});
