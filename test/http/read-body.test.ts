/**
 * Reading a request's body (src/http/read-body.ts) over a real node:http server: once read, the
 * body is let go, so a request held open afterwards for long (a waiting tasks/result) keeps no
 * listener nor buffer of it.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { readBody } from "../../src/http/read-body.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

it("leaves no data or end listener on a request once its body is read", async () => {
  const read = new Promise<{ body: string; req: IncomingMessage }>((resolve, reject) => {
    server = createServer((req, res) => {
      readBody(req, 1024).then((body) => {
        resolve({ body, req });
        res.end();
      }, reject);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server!.address() as AddressInfo;
  await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: '{"jsonrpc":"2.0"}' });
  const { body, req } = await read;
  expect(body).toBe('{"jsonrpc":"2.0"}');
  expect([req.listenerCount("data"), req.listenerCount("end")]).toEqual([0, 0]);
});
