/**
 * The receiving end of `npm run bench:webhooks`, a process of its own (so the bench's load never
 * delays it, and "the receiver is down" is this process gone: connections refused):
 * `node webhook-receiver.mjs PORT SECRET`. Every request is verified with the reference
 * implementation (standardwebhooks) and answered 204 (401 when the signature does not hold); one
 * JSON line per request goes to stdout: the webhook-id, the endpoint (the path), the event type,
 * the task, the task's status-change time (`data.lastUpdatedAt`) and when the request arrived.
 * The first line is `{"listening":PORT}`.
 */
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

const [port, secret] = process.argv.slice(2);
const verifier = new Webhook(secret);

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const at = Date.now();
    const body = Buffer.concat(chunks).toString("utf8");
    let line;
    try {
      const event = verifier.verify(body, req.headers);
      line = {
        id: req.headers["webhook-id"],
        path: req.url,
        type: event.type,
        taskId: event.data.taskId,
        changedAt: Date.parse(event.data.lastUpdatedAt),
        at,
      };
      res.writeHead(204).end();
    } catch (error) {
      line = { id: req.headers["webhook-id"], path: req.url, invalid: String(error), at };
      res.writeHead(401).end();
    }
    process.stdout.write(`${JSON.stringify(line)}\n`);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(port), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ listening: server.address().port })}\n`);
});
