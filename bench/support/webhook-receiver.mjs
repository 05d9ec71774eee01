/**
 * The receiving end of `npm run bench:webhooks`, a process of its own (so the bench's load never
 * delays it, and "the receiver is down" is this process gone: connections refused):
 * `node webhook-receiver.mjs PORT SECRET`. Each request is answered 204 at once and kept with the
 * time it arrived; on `collect N` (a line on stdin) every kept request is verified with the
 * reference implementation (standardwebhooks) and reported, one JSON line each on stdout — the
 * webhook-id, the endpoint (the path), the event type, the task, the task's status-change time
 * (`data.lastUpdatedAt`), when the request arrived, or why it does not verify — then
 * `{"collected":N}`. `crash N` does the same after it stops answering (a request that comes
 * meanwhile gets its connection closed, unanswered), then the process kills itself. The first
 * line is `{"listening":PORT}`.
 *
 * Verifying when asked rather than per request keeps the signature checks (a receiver's own work,
 * on another host in a real deployment) out of the two cores the measured cluster runs on, during
 * a throughput phase; every request is still verified before the bench counts it.
 */
import { createServer } from "node:http";
import { createInterface } from "node:readline";
import { Webhook } from "standardwebhooks";

const [port, secret] = process.argv.slice(2);
const verifier = new Webhook(secret);
/** Requests answered and not yet reported. */
let kept = [];
/** After `crash`: nothing more is answered (what was is reported), then the process is gone. */
let crashing = false;

const server = createServer((req, res) => {
  if (crashing) {
    req.socket.destroy();
    return;
  }
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    if (crashing) {
      req.socket.destroy();
      return;
    }
    kept.push({ at: Date.now(), path: req.url, headers: req.headers, chunks });
    res.writeHead(204).end();
  });
});

function report(request) {
  const body = Buffer.concat(request.chunks).toString("utf8");
  const id = request.headers["webhook-id"];
  try {
    const event = verifier.verify(body, request.headers);
    return {
      id,
      path: request.path,
      type: event.type,
      taskId: event.data.taskId,
      changedAt: Date.parse(event.data.lastUpdatedAt),
      at: request.at,
    };
  } catch (error) {
    return { id, path: request.path, invalid: String(error), at: request.at };
  }
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const [command, n] = line.split(" ");
  if (command !== "collect" && command !== "crash") return;
  crashing ||= command === "crash";
  const batch = kept;
  kept = [];
  const text = `${[...batch.map((request) => JSON.stringify(report(request))), JSON.stringify({ collected: Number(n) })].join("\n")}\n`;
  // A crash: gone as a killed process is (connections refused), once the report is out.
  process.stdout.write(text, () => {
    if (crashing) process.kill(process.pid, "SIGKILL");
  });
});

server.keepAliveTimeout = 30_000;
server.listen(Number(port), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ listening: server.address().port })}\n`);
});
