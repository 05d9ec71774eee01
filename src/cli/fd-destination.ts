import { writeSync } from "node:fs";
import type { LineDestination } from "./json-line-logger.js";

/** What a write that would block waits on before trying again (1 ms, without spinning). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * A log destination writing to a file descriptor synchronously: the whole text is in the kernel
 * when `write` returns. A pipe whose reader is slow may be non-blocking (libuv makes stdio pipes
 * so) and take part of the text or none (EAGAIN): the rest is written after a millisecond's wait.
 * A pipe nobody reads any more (EPIPE) drops the line: logging must not end the process.
 */
export function fdDestination(fd: number): LineDestination {
  return {
    write(text: string): void {
      let rest = Buffer.from(text, "utf8");
      while (rest.length > 0) {
        try {
          rest = rest.subarray(writeSync(fd, rest));
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (code === "EPIPE") return;
          if (code !== "EAGAIN") throw error;
          Atomics.wait(PAUSE, 0, 0, 1);
        }
      }
    },
  };
}
