import { Presets, SingleBar } from "cli-progress";

/**
 * The live view of a running task on the terminal (stderr): a progress bar with the task's status
 * and message. Suspended while a prompt owns the terminal. cli-progress draws and throttles the
 * line and restores the cursor; this class only decides what it shows.
 */
export class ProgressView {
  private readonly bar: SingleBar;
  private running = false;
  private value = 0;
  private total = 0;
  private payload = { status: "starting", message: "" };

  constructor(private readonly stream: NodeJS.WriteStream) {
    this.bar = new SingleBar(
      {
        stream,
        format: "{bar} {progressText} | {status}{message}",
        hideCursor: true,
        clearOnComplete: true,
        barsize: 24,
        fps: 10,
      },
      Presets.shades_classic,
    );
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.bar.start(Math.max(this.total, 1), this.value, { ...this.payload, progressText: this.progressText() });
  }

  status(status: string, message?: string): void {
    this.payload = { status, message: message ? ` — ${message}` : "" };
    this.redraw();
  }

  progress(progress: number, total?: number, message?: string): void {
    this.value = progress;
    if (total !== undefined) this.total = total;
    if (message !== undefined) this.payload.message = ` — ${message}`;
    if (this.running && total !== undefined) this.bar.setTotal(Math.max(total, 1));
    this.redraw();
  }

  /** Runs `body` with the bar taken off the screen (a prompt is shown meanwhile). */
  async suspend<T>(body: () => Promise<T>): Promise<T> {
    const wasRunning = this.running;
    this.stop();
    try {
      return await body();
    } finally {
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

  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.bar.stop();
  }

  private redraw(): void {
    if (!this.running) return;
    this.bar.update(this.value, { ...this.payload, progressText: this.progressText() });
  }

  private progressText(): string {
    return this.total > 0 ? `${Math.round((100 * this.value) / this.total)}%` : `${this.value}`;
  }
}
