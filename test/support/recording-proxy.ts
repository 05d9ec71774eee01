import { createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Recorder } from "./recorder.js";

/** One HTTP request as it reached the proxy. */
export interface Passed {
  method: string;
  sessionId: string | undefined;
}

/**
 * A plain HTTP proxy in front of one server, for tests that need to see which HTTP requests
 * separate processes (CLI runs) made: every request is forwarded untouched and recorded.
 */
export async function startRecordingProxy(target: URL): Promise<{ url: URL; passed: Recorder<Passed>; close(): Promise<void> }> {
  const passed = new Recorder<Passed>();
  const server = createServer((req, res) => {
    // On arrival: a stream the client aborts before the server answers still counts as asked for.
    passed.push({ method: req.method ?? "GET", sessionId: sessionOf(req.headers) });
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // An SSE stream's headers go on at once, as the server sent them, not with its first event.
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}${target.pathname}`),
    passed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sessionOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers["mcp-session-id"];
  return typeof value === "string" ? value : undefined;
}
