/**
 * The floor of `npm run bench:serve`: a bare `node:http` server that answers the load client's
 * requests with canned JSON-RPC answers of the same shape and size as a task server's (a session
 * id for `initialize`, 202 for notifications, a task for `tools/call` and `tasks/get`), storing and
 * checking nothing. What it costs per request is what Node's HTTP server and the loopback network
 * cost on this machine, below any MCP server: no server can spend less than it.
 *
 *   node bench/support/bare-http-process.ts   (prints `listening on <url>`, serves until killed)
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

const SESSION_ID = randomUUID();

function task(id: string): string {
  const now = new Date().toISOString();
  return `{"taskId":"${id}","status":"working","createdAt":"${now}","lastUpdatedAt":"${now}","ttl":600000,"pollInterval":1000}`;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let message: { id?: number; method?: string; params?: { taskId?: string } };
    try {
      message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof message;
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    let result: string;
    if (message.method === "initialize") {
      result = `{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"serverInfo":{"name":"bare","version":"1.0.0"}}`;
      res.setHeader("mcp-session-id", SESSION_ID);
    } else if (message.method === "tasks/get") {
      result = task(message.params?.taskId ?? randomUUID());
    } else {
      result = `{"task":${task(randomUUID())}}`;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(`{"jsonrpc":"2.0","id":${message.id},"result":${result}}`);
  });
});

server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  process.stdout.write(`listening on http://127.0.0.1:${address.port}/mcp\n`);
});
