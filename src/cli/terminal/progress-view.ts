import type * as CliProgress from "cli-progress";
import type { Options } from "cli-progress";
import { optionalPackage } from "../optional-package.js";

/** The part of cli-progress's bar this view drives. */
interface Bar {
  start(total: number, value: number): void;
  update(value: number): void;
  stop(): void;
}

/** Without cli-progress (an optional peer dependency) no live line is drawn; the summary line still is. */
const NO_BAR: Bar = { start() {}, update() {}, stop() {} };

/** How a call or task ended, for the summary line. */
export type Ending = "completed" | "failed" | "cancelled";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_FRAME_MS = 100;
const ENDING_MARK: Record<Ending, string> = { completed: "✔", failed: "✖", cancelled: "■" };

/**
 * The live view of a running call or task on the terminal (stderr): a progress bar (or a spinner
 * while no total is known) with what was done of the total, the status and message, the time
 * since the call began and the task id; a summary line when it ends. Suspended while a prompt
 * owns the terminal. cli-progress draws and throttles the line and restores the cursor; this
 * class only decides what it shows.
 */
export class ProgressView {
  private readonly bar: Bar;
  private readonly cli = optionalPackage<typeof CliProgress>("cli-progress");
  private running = false;
  private suspended = 0;
  private shown = false;
  private startedAt: number | null = null;
  private taskId: string | null = null;
  private value = 0;
  private total = 0;
  /** The task's status once one is known; until then the line says what is happening instead ("calling"). */
  private status_ = "";
  private message = "";

  constructor(private readonly stream: NodeJS.WriteStream) {
    this.bar = !this.cli
      ? NO_BAR
      : new this.cli.SingleBar(
          {
            stream,
            // A function, so the elapsed time and spinner move between updates (cli-progress redraws at `fps`).
            format: (options) => this.render(options),
            hideCursor: true,
            clearOnComplete: true,
            barsize: 24,
            fps: 10,
          },
          this.cli.Presets.shades_classic,
        );
  }

  /** The call went out: the elapsed time counts from here. */
  begin(): void {
    this.startedAt ??= Date.now();
  }

  /** The call became a task: its id is shown. */
  task(taskId: string): void {
    this.taskId = taskId;
    this.redraw();
  }

  start(): void {
    if (this.running) return;
    this.begin();
    this.running = true;
    this.shown = true;
    this.bar.start(1, 0);
  }

  status(status: string, message?: string): void {
    this.status_ = status;
    this.message = message ?? "";
    this.redraw();
  }

  /** A progress notification; a plain call's first one brings the bar up (a task's is up already). */
  progress(progress: number, total?: number, message?: string): void {
    this.value = progress;
    if (total !== undefined) this.total = total;
    if (message !== undefined) this.message = message;
    if (!this.running && !this.shown && this.suspended === 0) this.start();
    this.redraw();
  }

  /** Runs `body` with the bar taken off the screen (a prompt is shown meanwhile). */
  async suspend<T>(body: () => Promise<T>): Promise<T> {
    const wasRunning = this.running;
    this.stop();
    this.suspended++;
    try {
      return await body();
    } finally {
      this.suspended--;
      if (wasRunning) this.start();
    }
  }

  /** Prints a line above the bar. */
  line(text: string): void {
    const wasRunning = this.running;
    this.stop();
    this.stream.write(`${text}\n`);
    if (wasRunning) this.start();
  }

  /** Takes the bar away and, if it was shown, prints how the call ended and after how long. */
  finish(ending: Ending): void {
    this.stop();
    if (!this.shown) return;
    const what = this.taskId ? `task ${this.taskId} ${ending}` : ending;
    const elapsed = seconds(Date.now() - (this.startedAt ?? Date.now()));
    this.stream.write(`${ENDING_MARK[ending]} ${what} ${ending === "completed" ? "in" : "after"} ${elapsed}\n`);
  }

  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.bar.stop();
  }

  private redraw(): void {
    // The line is built by render() from this object's state; update() only asks for a redraw.
    if (this.running) this.bar.update(0);
  }

  private render(options: Options): string {
    const now = Date.now();
    const parts: string[] = [];
    if (this.total > 0) {
      const done = Math.min(this.value / this.total, 1);
      parts.push(`${this.cli?.Format.BarFormat(done, options) ?? ""} ${this.value}/${this.total} ${Math.floor(100 * done)}%`);
    } else {
      const spinner = SPINNER[Math.floor(now / SPINNER_FRAME_MS) % SPINNER.length];
      parts.push(this.value > 0 ? `${spinner} ${this.value}` : `${spinner}`);
    }
    const what = this.status_ || "calling";
    parts.push(this.message ? `${what} — ${this.message}` : what);
    parts.push(clock(now - (this.startedAt ?? now)));
    if (this.taskId) parts.push(`task ${this.taskId}`);
    return parts.join(" | ");
  }
}

/** Elapsed time on the bar: whole seconds, minutes past one minute ("7s", "2m05s"). */
function clock(ms: number): string {
  const total = Math.floor(ms / 1000);
  if (total < 60) return `${total}s`;
  return `${Math.floor(total / 60)}m${String(total % 60).padStart(2, "0")}s`;
}

/** Elapsed time in the summary: to a tenth of a second. */
function seconds(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : clock(ms);
}
