import { Transform, type TransformCallback } from "node:stream";
import { RpcCode } from "../core/errors.js";
import { messageShapeProblem } from "../mcp/json-rpc-message-shape.js";

/**
 * Stands between stdin and the SDK's stdio transport, one newline-delimited line at a time, and
 * answers on stdout every line that is no JSON-RPC message of MCP: -32700 for a line that is not
 * JSON, -32600 (with the request's id when it can be read) for one that is JSON but no message, a
 * batch included, and for a line longer than `maxLineBytes`. The SDK's transport drops such a line
 * with no answer at all, so a client would wait forever for the id it sent. Sound lines pass on
 * unchanged; blank lines are dropped.
 */
export class StdioGuard extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Past the limit: the rest of this line is dropped, and it has been answered. */
  private skipping = false;

  constructor(
    private readonly answer: (line: string) => void,
    private readonly maxLineBytes: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      this.collect(chunk.subarray(start, end));
      this.endLine();
      start = end + 1;
    }
    if (start < chunk.length) this.collect(chunk.subarray(start));
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.pendingBytes > 0 || this.skipping) this.endLine();
    done();
  }

  private collect(part: Buffer): void {
    if (this.skipping) return;
    this.pendingBytes += part.length;
    if (this.pendingBytes > this.maxLineBytes) {
      this.pending = [];
      this.pendingBytes = 0;
      this.skipping = true;
      this.refuse(RpcCode.InvalidRequest, `Invalid Request: message larger than ${this.maxLineBytes} bytes`, null);
      return;
    }
    this.pending.push(part);
  }

  private endLine(): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    const text = Buffer.concat(this.pending, this.pendingBytes).toString("utf8");
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    this.pending = [];
    this.pendingBytes = 0;
    if (line.trim() === "") return;
    let body: unknown;
    try {
      body = JSON.parse(line);
    } catch {
      this.refuse(RpcCode.ParseError, "Parse error: the line is not valid JSON", null);
      return;
    }
    if (Array.isArray(body)) {
      this.refuse(RpcCode.InvalidRequest, "Invalid Request: JSON-RPC batches are not supported; send one message per line", null);
      return;
    }
    const problem = messageShapeProblem(body);
    if (problem) {
      this.refuse(RpcCode.InvalidRequest, problem.message, problem.id);
      return;
    }
    this.push(`${line}\n`);
  }

  private refuse(code: number, message: string, id: string | number | null): void {
    this.answer(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n`);
  }
}
