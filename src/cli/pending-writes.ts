/**
 * The state directory's writes still under way in this process (journal lines, stored sessions),
 * so that a command that ends the process at once — one leaving a question unanswered — lets them
 * land first: a task whose creation never reached the journal loses its era, its session and its
 * tool name for every later command about it.
 */
const pending = new Set<Promise<unknown>>();

/** Tracks a write until it settles; returns it unchanged. */
export function trackWrite<T>(write: Promise<T>): Promise<T> {
  pending.add(write);
  void write.finally(() => pending.delete(write)).catch(() => {});
  return write;
}

/** Resolves once every tracked write has settled, those started meanwhile included. */
export async function writesSettled(): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}
