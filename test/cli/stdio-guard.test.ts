/** The stdio line guard: sound lines pass whole, however stdin cuts them; the rest is answered. */
import { describe, expect, it } from "vitest";
import { StdioGuard } from "../../src/cli/stdio-guard.js";

async function run(chunks: Buffer[], maxLineBytes = 1024): Promise<{ passed: string; answered: string[] }> {
  const answered: string[] = [];
  const guard = new StdioGuard((line) => answered.push(line), maxLineBytes);
  let passed = "";
  guard.on("data", (chunk: Buffer) => (passed += chunk.toString("utf8")));
  const ended = new Promise((resolve) => guard.on("end", resolve));
  for (const chunk of chunks) guard.write(chunk);
  guard.end();
  await ended;
  return { passed, answered };
}

describe("the stdio line guard", () => {
  it("passes a message cut inside a multi-byte character, and a CRLF line, whole", async () => {
    const message = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"é🙂"}}}\r\n');
    const cut = message.indexOf(0xf0) + 2;
    const { passed, answered } = await run([message.subarray(0, cut), message.subarray(cut)]);
    expect(passed).toBe(`${message.toString("utf8").trimEnd()}\n`);
    expect(answered).toEqual([]);
  });

  it("passes a last line that has no newline when stdin ends", async () => {
    const { passed } = await run([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}')]);
    expect(passed).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  });

  it("drops blank lines without an answer", async () => {
    expect(await run([Buffer.from("\n  \n\r\n")])).toEqual({ passed: "", answered: [] });
  });

  it("refuses a line over the limit once, wherever its chunks end, and reads the next line", async () => {
    const long = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${"x".repeat(2000)}"}}`;
    const { passed, answered } = await run([
      Buffer.from(long.slice(0, 700)),
      Buffer.from(long.slice(700, 1500)),
      Buffer.from(`${long.slice(1500)}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n`),
    ]);
    expect(answered.map((line) => JSON.parse(line) as unknown)).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: message larger than 1024 bytes" } },
    ]);
    expect(passed).toBe('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  });
});
