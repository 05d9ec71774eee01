/** The one outbound-safety function (design: "Outbound safety in one place"), against real HTTP servers. */
import { afterEach, describe, expect, it } from "vitest";
import { addressPolicy } from "../../src/runtime/outbound/address-policy.js";
import { ConnectionPool } from "../../src/runtime/outbound/connection-pool.js";
import { displayUrl, outboundPost } from "../../src/runtime/outbound/outbound-post.js";
import { httpReceiver, type HttpReceiver } from "../support/http-receiver.js";

const receivers: HttpReceiver[] = [];
async function receiver(): Promise<HttpReceiver> {
  const created = await httpReceiver();
  receivers.push(created);
  return created;
}
const pools: ConnectionPool[] = [];
function pool(): ConnectionPool {
  const created = new ConnectionPool();
  pools.push(created);
  return created;
}
afterEach(async () => {
  for (const open of pools.splice(0)) open.close();
  for (const open of receivers.splice(0)) await open.close();
});

const post = { headers: { "content-type": "application/json" }, body: '{"hello":1}' };

describe("address policy", () => {
  const policy = addressPolicy();
  it.each([
    ["127.0.0.1", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "RFC 1918"],
    ["172.16.0.1", "RFC 1918"],
    ["192.168.1.1", "RFC 1918"],
    ["100.64.0.1", "CGNAT"],
    ["fd12::1", "ULA"],
    ["169.254.10.10", "link-local"],
    ["fe80::1", "link-local"],
    ["169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
  ])("refuses %s (%s)", (address, kind) => {
    expect(policy.refusal(address)).toContain(kind);
  });

  it("lets public addresses through", () => {
    expect(policy.refusal("93.184.216.34")).toBeNull();
    expect(policy.refusal("2606:2800:220:1::1")).toBeNull();
  });

  it("lets through an address or CIDR the operator allow-listed, and nothing beside it", () => {
    const allowing = addressPolicy(["127.0.0.1", "10.0.0.0/24"]);
    expect(allowing.refusal("127.0.0.1")).toBeNull();
    expect(allowing.refusal("10.0.0.77")).toBeNull();
    expect(allowing.refusal("10.0.1.1")).toContain("RFC 1918");
    expect(allowing.refusal("127.0.0.2")).toContain("loopback");
  });

  it("gives an address the same verdict every time it is asked, each policy its own, past the addresses it keeps", () => {
    const strict = addressPolicy();
    const allowing = addressPolicy(["127.0.0.1"]);
    for (let round = 0; round < 2; round++) {
      expect(strict.refusal("127.0.0.1")).toContain("loopback");
      expect(allowing.refusal("127.0.0.1")).toBeNull();
      expect(strict.refusal("::ffff:127.0.0.1")).toContain("loopback");
    }
    // More addresses than one policy keeps verdicts for: each still judged as the first time.
    for (let i = 0; i < 600; i++) expect(strict.refusal(`10.1.${i >> 8}.${i & 255}`)).toContain("RFC 1918");
    expect(strict.refusal("127.0.0.1")).toContain("loopback");
    expect(strict.refusal("93.184.216.34")).toBeNull();
  });

  it("rejects an allow-list entry that is not an address or CIDR", () => {
    expect(() => addressPolicy(["example.com"])).toThrow(/not an IP address or CIDR/);
    expect(() => addressPolicy(["10.0.0.0/33"])).toThrow(/not an IP address or CIDR/);
  });
});

describe("outboundPost", () => {
  it("refuses a name that resolves to 127.0.0.1, and sends nothing", async () => {
    const target = await receiver();
    const result = await outboundPost(`http://localhost:${target.port}/hook`, post, addressPolicy());
    expect(result.outcome).toBe("refused");
    expect(result).toMatchObject({ reason: expect.stringContaining("loopback") });
    expect(target.received).toHaveLength(0);
  });

  it("refuses 127.0.0.1 as a literal too", async () => {
    const target = await receiver();
    expect(await outboundPost(target.url, post, addressPolicy())).toMatchObject({ outcome: "refused" });
    expect(target.received).toHaveLength(0);
  });

  it("calls a name resolving to 127.0.0.1 when the operator allow-lists it, connecting to the checked address", async () => {
    const target = await receiver();
    const result = await outboundPost(`http://localhost:${target.port}/hook`, post, addressPolicy(["127.0.0.1"]));
    expect(result).toMatchObject({ outcome: "answered", status: 204, address: "127.0.0.1" });
    expect(target.received[0]).toMatchObject({ method: "POST", url: "/hook", body: '{"hello":1}' });
  });

  it("connects to the address that was checked, whatever the name would resolve to a second time", async () => {
    const target = await receiver();
    let lookups = 0;
    const result = await outboundPost(`http://hooks.example.test:${target.port}/hook`, post, addressPolicy(["127.0.0.1"]), {}, async () => {
      lookups++;
      return ["127.0.0.1"];
    });
    expect(result).toMatchObject({ outcome: "answered", status: 204 });
    expect(lookups).toBe(1);
    expect(target.received[0]?.headers.host).toBe(`hooks.example.test:${target.port}`);
  });

  it("skips a forbidden address the name also resolves to and uses the allowed one", async () => {
    const target = await receiver();
    const result = await outboundPost(`http://two.example.test:${target.port}/hook`, post, addressPolicy(["127.0.0.1"]), {}, async () => [
      "169.254.169.254",
      "127.0.0.1",
    ]);
    expect(result).toMatchObject({ outcome: "answered", address: "127.0.0.1" });
  });

  it("does not follow a redirect: the 302 is the answer", async () => {
    const target = await receiver();
    const elsewhere = await receiver();
    target.answer((_request, response) => response.writeHead(302, { location: elsewhere.url }).end());
    const result = await outboundPost(target.url, post, addressPolicy(["127.0.0.1"]));
    expect(result).toMatchObject({ outcome: "answered", status: 302 });
    expect(elsewhere.received).toHaveLength(0);
  });

  it("gives up on a receiver that takes 10 s to answer", async () => {
    const target = await receiver();
    target.answer((_request, response) => void setTimeout(() => response.writeHead(200).end(), 10_000).unref());
    const started = Date.now();
    const result = await outboundPost(target.url, post, addressPolicy(["127.0.0.1"]), { responseTimeoutMs: 500 });
    expect(result).toMatchObject({ outcome: "timeout" });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("reads no more than the limit of a huge response body", async () => {
    const target = await receiver();
    target.answer((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(64 * 1024);
      let sent = 0;
      const more = (): void => {
        while (sent < 1000 && response.write(chunk)) sent++;
        if (sent < 1000) response.once("drain", more);
        else response.end();
      };
      more();
    });
    const result = await outboundPost(target.url, post, addressPolicy(["127.0.0.1"]), { maxResponseBytes: 4096 });
    expect(result).toMatchObject({ outcome: "answered", status: 200, truncated: true });
    expect(result.outcome === "answered" && result.body.length).toBe(4096);
  });

  it("reports a closed port as a network failure", async () => {
    const target = await receiver();
    const url = target.url;
    await target.close();
    receivers.splice(0);
    expect(await outboundPost(url, post, addressPolicy(["127.0.0.1"]))).toMatchObject({ outcome: "network" });
  });

  it("calls only http and https URLs, without credentials", async () => {
    expect(await outboundPost("file:///etc/passwd", post, addressPolicy())).toMatchObject({ outcome: "refused" });
    expect(await outboundPost("http://user:pw@93.184.216.34/", post, addressPolicy())).toMatchObject({ outcome: "refused" });
  });

  it("shows a URL without its query, fragment or credentials", () => {
    expect(displayUrl("https://u:p@hooks.example.com:8443/in?token=secret#x")).toBe("https://hooks.example.com:8443/in");
  });
});

describe("outboundPost with a connection pool", () => {
  const allowLoopback = addressPolicy(["127.0.0.1"]);

  it("sends consecutive requests to one checked address over one kept connection, resolving the name each time", async () => {
    const target = await receiver();
    const connections = pool();
    let lookups = 0;
    const resolve = async (): Promise<string[]> => {
      lookups++;
      return ["127.0.0.1"];
    };
    for (let i = 0; i < 5; i++) {
      const result = await outboundPost(`http://hooks.example.test:${target.port}/hook`, post, allowLoopback, {}, resolve, connections);
      expect(result).toMatchObject({ outcome: "answered", status: 204, address: "127.0.0.1" });
    }
    expect(target.received).toHaveLength(5);
    expect(target.connections()).toBe(1);
    expect(lookups).toBe(5);
  });

  it("refuses a name that now resolves to a forbidden address, though a kept connection to its old address is open", async () => {
    const target = await receiver();
    const connections = pool();
    let answer = ["127.0.0.1"];
    const resolve = async (): Promise<string[]> => answer;
    const url = `http://rebind.example.test:${target.port}/hook`;
    expect(await outboundPost(url, post, allowLoopback, {}, resolve, connections)).toMatchObject({ outcome: "answered", status: 204 });
    answer = ["169.254.169.254"];
    const refused = await outboundPost(url, post, allowLoopback, {}, resolve, connections);
    expect(refused).toMatchObject({ outcome: "refused", reason: expect.stringContaining("cloud metadata") });
    answer = ["10.0.0.7"];
    expect(await outboundPost(url, post, allowLoopback, {}, resolve, connections)).toMatchObject({ outcome: "refused" });
    expect(target.received).toHaveLength(1);
  });

  it("opens a new connection when the receiver closed the kept one while it was idle", async () => {
    const target = await receiver();
    const connections = pool();
    expect(await outboundPost(target.url, post, allowLoopback, {}, undefined, connections)).toMatchObject({ outcome: "answered" });
    target.closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await outboundPost(target.url, post, allowLoopback, {}, undefined, connections)).toMatchObject({
      outcome: "answered",
      status: 204,
    });
    expect(target.connections()).toBe(2);
  });

  it("sends once more on a new connection when a kept one is reset as the request arrives, and reports the answer, not a failure", async () => {
    const target = await receiver();
    const connections = pool();
    const requestsOn = new WeakMap<object, number>();
    target.answer((_request, response) => {
      const socket = response.socket;
      if (socket === null) return;
      const count = (requestsOn.get(socket) ?? 0) + 1;
      requestsOn.set(socket, count);
      // The second request on a connection meets a receiver that has just dropped it.
      if (count === 2) socket.resetAndDestroy();
      else response.writeHead(204).end();
    });
    expect(await outboundPost(target.url, post, allowLoopback, {}, undefined, connections)).toMatchObject({ outcome: "answered" });
    const again = await outboundPost(target.url, post, allowLoopback, {}, undefined, connections);
    expect(again).toMatchObject({ outcome: "answered", status: 204 });
    expect(target.connections()).toBe(2);
  });

  it("does not keep a connection whose response was cut at the size limit", async () => {
    const target = await receiver();
    const connections = pool();
    // The body is still being sent when the limit cuts it: the connection holds unread bytes. (A
    // response that had arrived whole, however long, would leave a clean connection behind.)
    target.answer((_request, response) => {
      response.writeHead(200).write("x".repeat(10_000));
      setTimeout(() => response.end("x"), 300).unref();
    });
    const cut = await outboundPost(target.url, post, allowLoopback, { maxResponseBytes: 100 }, undefined, connections);
    expect(cut).toMatchObject({ outcome: "answered", truncated: true });
    target.answer((_request, response) => response.writeHead(204).end());
    expect(await outboundPost(target.url, post, allowLoopback, {}, undefined, connections)).toMatchObject({
      outcome: "answered",
      status: 204,
    });
    expect(target.connections()).toBe(2);
  });

  it("keeps agents for a bounded number of destinations, closing the idle connections of the one dropped", async () => {
    const first = await receiver();
    const second = await receiver();
    const connections = new ConnectionPool({ maxDestinations: 1 });
    pools.push(connections);
    await outboundPost(first.url, post, allowLoopback, {}, undefined, connections);
    await outboundPost(second.url, post, allowLoopback, {}, undefined, connections);
    await outboundPost(first.url, post, allowLoopback, {}, undefined, connections);
    expect(first.connections()).toBe(2);
    expect(second.connections()).toBe(1);
  });
});
