import { mkdir, open, readFile } from "node:fs/promises";
import { dirname } from "node:path";

/** One operation a requestor did on a task (T-SEC-5: requestors SHOULD keep track of task ids and their operations). */
export interface JournalEntry {
  /** ISO 8601 time of the operation. */
  at: string;
  taskId: string;
  op: "created" | "status" | "result" | "cancel" | "resumed";
  /** Where the task lives (a URL or a command), when the journal is shared between receivers. */
  target?: string;
  /** The tool (or request method) the task runs. */
  name?: string;
  status?: string;
  statusMessage?: string;
  /** On "created": the ttl the receiver gave the task, ms (null: unlimited), so a later "not found" can be told to be its expiry. */
  ttl?: number | null;
  /** The MCP session the task was created in: receivers that bind tasks to sessions answer for it only there. */
  session?: string;
  /** The protocol revision the operation went over ("2025-11-25" when absent: journals written before 2026-07-28 existed). */
  protocol?: string;
}

/** Where a requestor records the tasks it created and what it did with them. */
export interface TaskJournal {
  record(entry: JournalEntry): Promise<void>;
  entries(): Promise<JournalEntry[]>;
}

/**
 * A journal in a local JSON-lines file (created with mode 0600: task ids are capabilities when the
 * receiver has no authentication, T-SEC-2). Lets a CLI or an app pick up its tasks after a restart.
 * Several processes may append to one file at once (CLI runs sharing a state directory).
 */
export function fileJournal(path: string): TaskJournal {
  let queue: Promise<void> = Promise.resolve();
  return {
    record(entry) {
      // Serialized within this process; across processes each line goes out as one write() on an
      // O_APPEND descriptor, which the kernel places at the end whole, so lines from concurrent
      // writers never interleave or overwrite each other.
      queue = queue.then(async () => {
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        const file = await open(path, "a", 0o600);
        try {
          const line = Buffer.from(`${JSON.stringify(entry)}\n`, "utf8");
          let written = 0;
          while (written < line.length) written += (await file.write(line, written)).bytesWritten;
        } finally {
          await file.close();
        }
      });
      return queue;
    },
    async entries() {
      await queue;
      const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return "";
        throw error;
      });
      const entries: JournalEntry[] = [];
      for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        try {
          entries.push(JSON.parse(line) as JournalEntry);
        } catch {
          // A torn last line (the process died mid-write) is skipped, not fatal.
        }
      }
      return entries;
    },
  };
}

/** A journal kept in memory (tests, short-lived apps). */
export function memoryJournal(): TaskJournal {
  const items: JournalEntry[] = [];
  return {
    async record(entry) {
      items.push(entry);
    },
    async entries() {
      return [...items];
    },
  };
}
