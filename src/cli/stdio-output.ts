import { Writable } from "node:stream";

/**
 * What the stdio transport writes to: stdout, until its reader is gone. A client that detaches
 * (or dies) closes the pipe while its tasks run on, and their notifications would then hit EPIPE,
 * an error event nobody handles, which ends the process and leaves its tasks unfinished. Here the
 * first failed write calls `onGone` once (the server then drains, as when stdin ends) and every
 * later write is dropped, so handlers reporting progress to nobody finish their work.
 */
export class StdioOutput extends Writable {
  private gone = false;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly onGone: (error: Error) => void,
  ) {
    super();
    out.on("error", (error: Error) => this.lose(error));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.gone) {
      done();
      return;
    }
    this.out.write(chunk, (error) => {
      if (error) this.lose(error);
      done();
    });
  }

  private lose(error: Error): void {
    if (this.gone) return;
    this.gone = true;
    this.onGone(error);
  }
}
