/**
 * HTTP/1.1 spoken over a bare TCP socket, for what fetch hides: a body the server refuses part-way,
 * headers or a body sent slowly, and when exactly the server closes the connection.
 */
import { connect, type Socket } from "node:net";
import type { Server } from "node:http";

/** What happened on one raw connection, once it closed. */
export interface SocketOutcome {
  /** Everything the server sent. */
  text: string;
  /** The status code of the first response, if one arrived. */
  status: number | undefined;
  /** From connecting to the connection's close. */
  closedAfterMs: number;
  /** Bytes the client handed to its socket (its kernel buffers included). */
  bytesWritten: number;
  /** The client's socket error (EPIPE, ECONNRESET when the server closed while it was still sending). */
  error: string | undefined;
}

/** Connects to 127.0.0.1:`port`, lets `feed` write, and resolves when the connection closes. */
export function rawConnection(port: number, feed: (socket: Socket) => void): Promise<SocketOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const started = Date.now();
    let text = "";
    let error: string | undefined;
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("error", (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on("close", () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({
        text,
        status: status === undefined ? undefined : Number(status),
        closedAfterMs: Date.now() - started,
        bytesWritten: socket.bytesWritten,
        error,
      });
    });
    socket.on("connect", () => feed(socket));
  });
}

/** A request head for 127.0.0.1:`port` (the Host a loopback bind accepts), ending with the blank line. */
export function requestHead(method: string, path: string, port: number, headers: Record<string, string | number> = {}): string {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * Writes `total` bytes of body as fast as the socket takes them (chunked: in chunked framing,
 * without an end), until done or the connection fails.
 */
export function flood(socket: Socket, total: number, framing: "chunked" | "raw"): void {
  const piece = Buffer.alloc(64 * 1024, 0x20);
  const chunk =
    framing === "chunked" ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]) : piece;
  let sent = 0;
  const pump = (): void => {
    while (sent < total && !socket.destroyed) {
      sent += piece.length;
      if (!socket.write(chunk)) {
        socket.once("drain", pump);
        return;
      }
    }
  };
  pump();
}

/** Writes `piece` every `everyMs` until the connection closes. */
export function trickle(socket: Socket, piece: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (socket.writable) socket.write(piece);
  }, everyMs);
  socket.once("close", () => clearInterval(timer));
}

/** Bytes the server has read from all its connections so far, closed ones included. */
export function bytesReadBy(server: Server): () => number {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => sockets.add(socket));
  return () => [...sockets].reduce((sum, socket) => sum + socket.bytesRead, 0);
}
