import Database from "better-sqlite3";

/**
 * Waits until the handler of task `id` has started, as the SQLite file of a server in another
 * process records it (the run queue's claim sets `started_at`). A test that kills the server to
 * interrupt a running task waits for this first: a task killed while still queued never ran, and
 * the next start simply runs it.
 */
export async function handlerStarted(file: string, id: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const db = new Database(file, { readonly: true });
    try {
      if (db.prepare<[string], { started_at: number | null }>("SELECT started_at FROM tasks WHERE id = ?").get(id)?.started_at != null)
        return;
    } finally {
      db.close();
    }
    if (Date.now() > deadline) throw new Error(`the handler of ${id} did not start within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
