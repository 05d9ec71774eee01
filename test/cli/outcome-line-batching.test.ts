/**
 * The audit log's one batching (src/cli/outcome-line-batching.ts): handler-outcome lines wait for
 * the end of the running promise jobs; every other line, and what was held before it, is in the
 * file when the call that logged it returns (T-SEC-5). Written through the CLI's logger to a real file.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fdDestination } from "../../src/cli/fd-destination.js";
import type { JsonLineLogger } from "../../src/cli/json-line-logger.js";
import { createLogger } from "../../src/cli/logger.js";
import { OutcomeLineBatching } from "../../src/cli/outcome-line-batching.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-log-"));
const fds: number[] = [];
afterAll(() => {
  for (const fd of fds) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

/** A file opened for appending, written synchronously as stderr is. */
function fileDestination(path: string): ReturnType<typeof fdDestination> {
  const fd = openSync(path, "a");
  fds.push(fd);
  return fdDestination(fd);
}
let files = 0;

function fileLogger(): { logger: JsonLineLogger; lines: () => Array<Record<string, unknown>>; writes: () => number } {
  const path = join(dir, `log-${++files}.jsonl`);
  const file = fileDestination(path);
  let writes = 0;
  const counted = { write: (text: string) => (writes++, file.write(text)) };
  const logger = createLogger("info", new OutcomeLineBatching(counted));
  const lines = () =>
    readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines, writes: () => writes };
}

const ticked = () => new Promise<void>((resolve) => process.nextTick(resolve));

describe("OutcomeLineBatching", () => {
  it("T-SEC-5: a created line is in the file when the call that logged it returns", () => {
    const { logger, lines } = fileLogger();
    logger.info({ audit: "created", taskId: "t1" }, "task created");
    expect(lines().map((l) => l["audit"])).toEqual(["created"]);
  });

  it("holds completed and failed lines until the running promise jobs are done, then writes them in one write", async () => {
    const { logger, lines, writes } = fileLogger();
    for (let i = 0; i < 20; i++) logger.info({ audit: i % 2 === 0 ? "completed" : "failed", taskId: `t${i}` }, "task ended");
    expect(lines()).toEqual([]);
    await ticked();
    expect(lines().map((l) => l["taskId"])).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`));
    expect(writes()).toBe(1);
  });

  it("writes held outcome lines with the next line that is not held, in the order they were logged", () => {
    const { logger, lines, writes } = fileLogger();
    logger.info({ audit: "completed", taskId: "a" }, "task completed");
    logger.info({ audit: "failed", taskId: "b" }, "task failed");
    logger.info({ audit: "retrieved", taskId: "a" }, "result retrieved");
    expect(lines().map((l) => `${String(l["audit"])}:${String(l["taskId"])}`)).toEqual(["completed:a", "failed:b", "retrieved:a"]);
    expect(writes()).toBe(1);
  });

  it("holds nothing for a line that only mentions an outcome in a value", () => {
    const { logger, lines } = fileLogger();
    logger.warn({ note: '"audit":"completed"', audit: "cancelled" }, 'a message with "audit":"failed" in it');
    expect(lines()).toHaveLength(1);
  });

  it("flush writes what is held at once (the process's exit calls it)", () => {
    const path = join(dir, `log-${++files}.jsonl`);
    const batching = new OutcomeLineBatching(fileDestination(path));
    createLogger("info", batching).info({ audit: "completed", taskId: "t" }, "task completed");
    batching.flush();
    expect(readFileSync(path, "utf8")).toContain('"audit":"completed"');
  });
});
