import type { LineDestination } from "./json-line-logger.js";

/**
 * The audit lines of a handler's outcome (`completed`, `failed`, src/runtime/task-execution.ts):
 * written after the outcome is stored, by no request, so none of them has to reach the kernel
 * before some answer leaves. The logger writes `"audit":"<value>"` for the field; a string value
 * containing that text is escaped (`\"audit\"`), so only the field itself matches.
 */
const OUTCOME_LINES = ['"audit":"completed"', '"audit":"failed"'];

/**
 * A log destination that writes every line synchronously except the audit lines of handler
 * outcomes, which it holds until the promise jobs running now are done (`process.nextTick`, run
 * after them), or until any other line is logged, whichever comes first, and then writes in one
 * `write` together with that line, in the order they were logged.
 *
 * Under load one group commit ends dozens of tasks, and their outcome lines were a `write` each.
 * What a kill -9 can lose, exactly: outcome lines logged during the run of promise jobs it lands
 * in (microseconds), whose outcomes are stored. Every other line — a task's `created` line before
 * its CreateTaskResult, `cancelled`, `retrieved`, errors — is in the kernel before the call that
 * logged it returns, as with an unbuffered destination. A normal exit writes what is held.
 */
export class OutcomeLineBatching implements LineDestination {
  private held = "";
  private scheduled = false;

  constructor(private readonly target: LineDestination) {}

  write(line: string): void {
    if (OUTCOME_LINES.some((marker) => line.includes(marker))) {
      this.held += line;
      if (!this.scheduled) {
        this.scheduled = true;
        process.nextTick(() => {
          this.scheduled = false;
          this.flush();
        });
      }
      return;
    }
    const text = this.held + line;
    this.held = "";
    this.target.write(text);
  }

  /** Writes the held lines now. */
  flush(): void {
    if (this.held === "") return;
    const text = this.held;
    this.held = "";
    this.target.write(text);
  }
}
