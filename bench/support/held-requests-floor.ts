/**
 * The floor of `npm run bench:waiters`: a bare `node:http` server that reads each POST, sends the
 * head of an SSE stream and holds the response open, storing and checking nothing. What one held
 * request costs it is what Node's HTTP server costs per waiting connection, below any MCP server.
 *
 *   node --import tsx bench/support/held-requests-floor.ts   (prints `listening on <url>`, serves until killed)
 */
import { createServer, type ServerResponse } from "node:http";

const held = new Set<ServerResponse>();
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    held.add(res);
    res.once("close", () => held.delete(res));
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  console.log(`listening on http://127.0.0.1:${address.port}/mcp`);
});
