/** outboundPost to https receivers: the certificate is checked against the URL's name (SNI) while the connection goes to the checked address. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSecureContext } from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { addressPolicy } from "../../src/runtime/outbound/address-policy.js";
import { ConnectionPool } from "../../src/runtime/outbound/connection-pool.js";
import { outboundPost } from "../../src/runtime/outbound/outbound-post.js";

const HOST = "hooks.example.test";

let certDir = "";
let key = "";
let cert = "";
beforeAll(() => {
  // Generated here rather than kept in the repository: a checked-in key would expire and invite reuse.
  certDir = mkdtempSync(join(tmpdir(), "outbound-https-"));
  const keyFile = join(certDir, "key.pem");
  const certFile = join(certDir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "1",
      "-subj",
      `/CN=${HOST}`,
      "-addext",
      `subjectAltName=DNS:${HOST}`,
    ],
    { stdio: "ignore" },
  );
  key = readFileSync(keyFile, "utf8");
  cert = readFileSync(certFile, "utf8");
});
afterAll(() => {
  if (certDir !== "") rmSync(certDir, { recursive: true, force: true });
});

interface HttpsReceiver {
  port: number;
  /** TCP connections accepted, handshake completed or not. */
  connections: () => number;
  /** The server names clients sent in their TLS handshakes (SNI), one per handshake that named one. */
  servernames: string[];
  /** Requests that reached the handler. */
  requests: () => number;
}

const servers: Server[] = [];
async function httpsReceiver(): Promise<HttpsReceiver> {
  const servernames: string[] = [];
  let connections = 0;
  let requests = 0;
  const context = createSecureContext({ key, cert });
  // SNICallback runs only when the client names a server, so an empty list means no SNI was sent.
  const server = createServer(
    {
      key,
      cert,
      SNICallback: (servername, done) => {
        servernames.push(servername);
        done(null, context);
      },
    },
    (_request, response) => {
      requests++;
      response.writeHead(204).end();
    },
  );
  server.on("connection", () => connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    servernames,
    requests: () => requests,
  };
}

const pools: ConnectionPool[] = [];
afterEach(async () => {
  for (const open of pools.splice(0)) open.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const post = { headers: { "content-type": "application/json" }, body: '{"hello":1}' };
const allowLoopback = addressPolicy(["127.0.0.1"]);

describe.each([
  { connections: "one connection per request", pool: (): ConnectionPool | undefined => undefined },
  {
    connections: "a connection pool",
    pool: (): ConnectionPool | undefined => {
      const created = new ConnectionPool();
      pools.push(created);
      return created;
    },
  },
])("outboundPost to https with $connections", ({ pool }) => {
  it("verifies an https receiver's certificate: one the system does not trust is a network failure, and nothing is posted", async () => {
    const target = await httpsReceiver();
    const result = await outboundPost(`https://${HOST}:${target.port}/hook`, post, allowLoopback, {}, async () => ["127.0.0.1"], pool());
    expect(result).toMatchObject({ outcome: "network", reason: expect.stringMatching(/certificate/i) });
    expect(target.requests()).toBe(0);
  });

  it("connects to the checked address and names the URL's host in the TLS handshake (SNI)", async () => {
    const target = await httpsReceiver();
    let lookups = 0;
    const result = await outboundPost(
      `https://${HOST}:${target.port}/hook`,
      post,
      allowLoopback,
      {},
      async () => {
        lookups++;
        return ["127.0.0.1"];
      },
      pool(),
    );
    // The self-signed certificate still fails verification; what matters is where the handshake went and what it named.
    expect(result).toMatchObject({ address: "127.0.0.1" });
    expect(lookups).toBe(1);
    expect(target.connections()).toBeGreaterThanOrEqual(1);
    expect(target.servernames).toEqual([HOST]);
  });

  it("refuses an https URL whose name resolves to a forbidden address, opening no connection", async () => {
    const target = await httpsReceiver();
    const result = await outboundPost(`https://${HOST}:${target.port}/hook`, post, allowLoopback, {}, async () => ["10.0.0.7"], pool());
    expect(result).toMatchObject({ outcome: "refused", reason: expect.stringContaining("10.0.0.7") });
    expect(target.connections()).toBe(0);
    expect(target.servernames).toEqual([]);
  });
});
