import { createServer } from "node:net";

/**
 * Rejects with the listen error (EADDRINUSE, EACCES…) when `host:port` cannot be bound right now;
 * resolves, the port released again, when it can. A serving command asks before it opens its
 * store, so a start refused for its port leaves no SQLite file behind. Port 0 always resolves.
 */
export function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}
