// Preloaded into a spawned CLI (`node --expose-gc --import <this file> …`): a full garbage
// collection every 20 ms, so an object held only weakly (Node 20's AbortSignal.timeout under
// AbortSignal.any) is collected long before a timer of a second or more would fire.
if (typeof globalThis.gc !== "function") throw new Error("force-gc.mjs needs node --expose-gc");
setInterval(() => globalThis.gc(), 20).unref();
