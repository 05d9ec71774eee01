import type { IncomingMessage } from "node:http";

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Request body exceeds ${limit} bytes`);
  }
}

/**
 * Reads a request body up to `limit` bytes; stops reading (and rejects) as soon as it is over,
 * declared (Content-Length) or received. What is left unread stays unread: the refusal written
 * next closes the connection (see `closeAfterResponse`), so the client cannot make the server read more.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLargeError(limit));
      return;
    }
    let chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners("data");
        req.pause();
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onError = (error: Error): void => {
      req.off("error", onError);
      reject(error);
    };
    // Once read, the body is let go: a request held open for long (a waiting tasks/result) keeps
    // neither these listeners nor its buffers, nor (through the error listener's `reject`) this
    // promise and the body text it resolved with.
    const onEnd = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      const body = Buffer.concat(chunks).toString("utf8");
      chunks = [];
      resolve(body);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
