/**
 * Wall-clock time in ms with a fraction, comparable with a server's `Date.now()` stamps (a task's
 * `lastUpdatedAt`). `performance.timeOrigin + performance.now()` is not: it is the monotonic clock
 * counted from the process's start, and drifts from the wall clock whenever the system clock is
 * stepped or slewed (time synchronisation on a virtual machine: once 1.9 s apart within a bench
 * run, which made every wake-up negative). `Date.now()` alone has whole milliseconds only, too
 * coarse for wake-ups of 1–2 ms. So the monotonic clock is re-anchored to the wall clock at the
 * edge of a millisecond tick, at most a second before each reading.
 */
export function wallNow(): number {
  const now = performance.now();
  if (now - anchoredAt > REANCHOR_MS) anchor();
  return now + offset;
}

const REANCHOR_MS = 1000;
let offset = 0;
let anchoredAt = Number.NEGATIVE_INFINITY;

function anchor(): void {
  const before = Date.now();
  let tick = before;
  // Wait (at most 1 ms) for the wall clock's next millisecond: at its edge it reads exactly `tick`.
  while (tick === before) tick = Date.now();
  const at = performance.now();
  offset = tick - at;
  anchoredAt = at;
}
