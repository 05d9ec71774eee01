/**
 * The host configurations of docs/hosts/examples/ work as written: each file parses in its host's
 * format, every stdio entry's command line starts and answers `initialize` (our server, or the
 * gateway in front of an existing stdio server), and every URL entry names the endpoint `serve`
 * listens on. `npx mcp-tasks …` stands for the installed CLI; here it runs the repository's dev bin.
 * The commands run in a directory inside the repository, so the upstream's `npx -y …` finds the
 * devDependency instead of downloading it.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { BIN, CliProcess, cliEnv, killAll, REPO_ROOT } from "../support/cli-process.js";
import { freePort } from "../support/free-port.js";

const EXAMPLES = join(REPO_ROOT, "docs", "hosts", "examples");

/** One server entry of a host configuration, whatever the host calls its fields. */
interface ServerEntry {
  command?: string;
  args?: string[];
  url?: string;
  type?: string;
}

/**
 * The part of TOML the Codex example uses: `[a.b]` tables and `key = value` lines whose values
 * are strings, numbers or arrays of strings (written as JSON would write them), and comments.
 */
function parseTomlSubset(text: string): Record<string, Record<string, unknown>> {
  const tables: Record<string, Record<string, unknown>> = {};
  let current: Record<string, unknown> | undefined;
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[([A-Za-z0-9_.-]+)\]$/.exec(line)?.[1];
    if (header !== undefined) {
      current = tables[header] = {};
      continue;
    }
    const pair = /^([A-Za-z0-9_-]+)\s*=\s*(.+)$/.exec(line);
    if (!pair || !current) throw new Error(`line ${index + 1} is not a table or a key = value pair: ${raw}`);
    current[pair[1] as string] = JSON.parse(pair[2] as string) as unknown;
  }
  return tables;
}

/** Each example file's server entries, by name, read the way its host reads it. */
function examples(): { file: string; servers: Record<string, ServerEntry> }[] {
  return readdirSync(EXAMPLES)
    .sort()
    .map((file) => {
      const text = readFileSync(join(EXAMPLES, file), "utf8");
      if (file.endsWith(".toml")) {
        const tables = parseTomlSubset(text);
        const servers = Object.fromEntries(
          Object.entries(tables)
            .filter(([name]) => name.startsWith("mcp_servers."))
            .map(([name, table]) => [name.slice("mcp_servers.".length), table as ServerEntry]),
        );
        return { file, servers };
      }
      const json = JSON.parse(text) as { servers?: Record<string, ServerEntry>; mcpServers?: Record<string, ServerEntry> };
      // VS Code's .vscode/mcp.json keeps servers under "servers"; the other hosts under "mcpServers".
      return { file, servers: (file.startsWith("vscode") ? json.servers : json.mcpServers) ?? {} };
    });
}

/** `npx mcp-tasks <args>` → the dev bin with the same arguments. */
function devCommand(entry: ServerEntry): { command: string; args: string[] } {
  const [first, ...rest] = entry.args ?? [];
  if (entry.command !== "npx" || first !== "mcp-tasks")
    throw new Error(`expected "npx mcp-tasks …", got ${entry.command} ${entry.args?.join(" ")}`);
  return { command: process.execPath, args: [BIN, ...rest] };
}

const scratch = join(REPO_ROOT, ".tmp");
mkdirSync(scratch, { recursive: true });
const workDirs: string[] = [];

afterEach(async () => {
  await killAll();
});

afterAll(() => {
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
});

describe("host configuration examples", { timeout: 120_000 }, () => {
  const files = examples();

  it("has an example for each documented host, each parsing with our server, its URL and a gateway", () => {
    expect(files.map((f) => f.file)).toEqual([
      "claude-code.mcp.json",
      "codex.config.toml",
      "cursor.mcp.json",
      "inspector.json",
      "vscode.mcp.json",
    ]);
    for (const { servers } of files) {
      expect(Object.keys(servers).sort()).toEqual(["files", "mcp-tasks", "mcp-tasks-http"]);
      expect(servers["files"]?.args).toContain("gateway");
      expect(servers["mcp-tasks"]?.args).toContain("serve");
    }
  });

  it("shows each example file whole on its host's page", () => {
    for (const { file } of files) {
      const page = readFileSync(join(REPO_ROOT, "docs", "hosts", `${file.split(".")[0] as string}.md`), "utf8");
      expect(page).toContain(readFileSync(join(EXAMPLES, file), "utf8").trimEnd());
    }
  });

  for (const { file, servers } of files) {
    for (const [name, entry] of Object.entries(servers)) {
      if (entry.command === undefined) continue;
      it(`${file}: "${name}" starts and answers initialize`, async () => {
        const cwd = mkdtempSync(join(scratch, "host-example-"));
        workDirs.push(cwd);
        const { command, args } = devCommand(entry);
        const transport = new StdioClientTransport({ command, args, cwd, env: cliEnv() as Record<string, string>, stderr: "pipe" });
        const client = new Client({ name: "host-example", version: "1.0.0" });
        try {
          await client.connect(transport);
          expect(client.getServerVersion()?.name).toBeTruthy();
          const { tools } = await client.listTools();
          // The demo's sleep on our server; server-filesystem's read_text_file through the gateway.
          expect(tools.map((t) => t.name)).toContain(name === "files" ? "read_text_file" : "sleep");
        } finally {
          await client.close();
        }
      });
    }
  }

  it("every URL entry names serve's endpoint, and that endpoint answers initialize", async () => {
    const urls = files.flatMap(({ servers }) => Object.values(servers).flatMap((entry) => (entry.url === undefined ? [] : [entry.url])));
    expect(urls.length).toBe(files.length);
    for (const url of urls) expect(url).toBe("http://127.0.0.1:3000/mcp");

    // The pages start it with `npx mcp-tasks serve --demo`; here on a free port instead of 3000.
    const port = await freePort();
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", String(port)]);
    const served = await server.url();
    expect(served).toBe(`http://127.0.0.1:${port}/mcp`);
    const client = new Client({ name: "host-example", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(served)));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("sleep");
    await client.close();
  });
});
