// Preloaded into a measured server (`node --expose-gc --import <this file> …`): on SIGUSR2, two
// full garbage collections, then one line on stderr with the process's memory as it is left:
// `heap-after-gc {"rss":…,"heapUsed":…,"external":…,"arrayBuffers":…}`. Nothing else changes.
if (typeof globalThis.gc !== "function") throw new Error("heap-on-signal.mjs needs node --expose-gc");
process.on("SIGUSR2", () => {
  globalThis.gc();
  globalThis.gc();
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  process.stderr.write(`heap-after-gc ${JSON.stringify({ rss, heapUsed, external, arrayBuffers })}\n`);
});
