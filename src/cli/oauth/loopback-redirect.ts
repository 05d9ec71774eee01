import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AuthenticationError } from "../authentication-error.js";

/** What the authorization server sent back to the redirect URI. */
export interface Callback {
  code: string;
}

const PAGE = (title: string, text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:system-ui;margin:3rem"><h1>${title}</h1><p>${text}</p></body>`;

/**
 * The redirect URI of a native app (RFC 8252 §7.3): an HTTP listener on the loopback address
 * 127.0.0.1 (not "localhost", §8.3), on a port the system picks unless a preferred one is free,
 * path /callback. It lives for one authorization: `expect(state)` resolves with the code of the
 * redirect that carries that state (anything else is refused: a request from another page must
 * not complete our flow, RFC 6749 §10.12), rejects on an `error` redirect or after the timeout.
 */
export class LoopbackRedirect {
  private server: Server | null = null;
  private waiting: { state: string; resolve(callback: Callback): void; reject(error: Error): void } | null = null;

  /** Listens; `preferredPort` (the one a stored registration names) when free, else any. */
  async start(preferredPort?: number): Promise<void> {
    if (this.server) return;
    const server = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://127.0.0.1");
      if (url.pathname !== "/callback") {
        response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
        return;
      }
      const waiting = this.waiting;
      const state = url.searchParams.get("state");
      if (waiting === null || state !== waiting.state) {
        response
          .writeHead(400, { "content-type": "text/html; charset=utf-8" })
          .end(PAGE("Not this sign-in", "This answer is for an authorization mcp-tasks is not waiting for."));
        return;
      }
      const error = url.searchParams.get("error");
      const code = url.searchParams.get("code");
      this.waiting = null;
      if (error !== null || code === null) {
        const description = url.searchParams.get("error_description");
        response
          .writeHead(400, { "content-type": "text/html; charset=utf-8" })
          .end(PAGE("Authorization failed", "mcp-tasks was not authorized. You can close this window."));
        waiting.reject(
          new AuthenticationError(
            `The authorization server refused: ${error ?? "no code in the redirect"}${description ? ` (${description})` : ""}`,
            401,
            undefined,
          ),
        );
        return;
      }
      response
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(PAGE("Signed in", "mcp-tasks is authorized. You can close this window and return to the terminal."));
      waiting.resolve({ code });
    });
    await listen(server, preferredPort).catch(() => listen(server, 0));
    this.server = server;
  }

  /** `http://127.0.0.1:<port>/callback`; only once started. */
  get redirectUrl(): string {
    if (!this.server) throw new Error("the loopback redirect is not listening");
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callback`;
  }

  get listening(): boolean {
    return this.server !== null;
  }

  /** The code of the redirect with `state`; started before the browser opens, so none is missed. */
  expect(state: string, timeoutMs: number): Promise<Callback> {
    return new Promise<Callback>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        reject(
          new AuthenticationError(
            `No authorization arrived within ${Math.round(timeoutMs / 1000)} s (the browser never came back to ${this.redirectUrl})`,
            401,
            undefined,
          ),
        );
      }, timeoutMs);
      this.waiting = {
        state,
        resolve: (callback) => {
          clearTimeout(timer);
          resolve(callback);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  /**
   * Stops listening. The browser's page is sent whole first: idle keep-alive connections are
   * closed at once, a busy one gets a second to finish before it is cut.
   */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const cut = setTimeout(() => server.closeAllConnections(), 1000);
    await closed;
    clearTimeout(cut);
  }
}

function listen(server: Server, port: number | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once("error", onError);
    server.listen(port ?? 0, "127.0.0.1", () => {
      server.off("error", onError);
      resolve();
    });
  });
}
