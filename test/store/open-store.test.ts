import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import { newTask } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-open-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("openStore", () => {
  it("`memory` opens an in-process store", async () => {
    const store = openStore("memory");
    const task = await store.create(newTask());
    expect((await store.get(task.id, { any: true }))?.status).toBe("working");
    await store.close();
  });

  it("`sqlite:PATH` and a plain `*.db` path open the same SQLite file", async () => {
    const path = join(dir, "tasks.db");
    const viaScheme = openStore(`sqlite:${path}`);
    const task = await viaScheme.create(newTask());
    await viaScheme.close();
    const viaPath = openStore(path);
    expect((await viaPath.get(task.id, { any: true }))?.id).toBe(task.id);
    await viaPath.close();
  });

  it("`sqlite::memory:` opens a private in-memory SQLite database", async () => {
    const store = openStore("sqlite::memory:");
    await store.create(newTask());
    expect(await store.countActive("alice")).toBe(1);
    await store.close();
  });

  it.each(["", "sqlite:", "postgres://localhost/tasks", "postgres://host/x.db", "tasks.json", "Memory"])(
    "rejects %j with an error naming the accepted forms",
    (spec) => {
      expect(() => openStore(spec)).toThrow(/store/i);
    },
  );
});
