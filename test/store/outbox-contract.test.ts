import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { outboxContract } from "../../src/testing/outbox-contract.js";

const dir = mkdtempSync(join(tmpdir(), "outbox-"));
let n = 0;

outboxContract("memoryStore", () => memoryStore());
outboxContract("sqliteStore (file)", () => sqliteStore(join(dir, `outbox-${++n}.db`)));
