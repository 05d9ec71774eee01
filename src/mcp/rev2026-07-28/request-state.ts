import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { TaskError } from "../../core/errors.js";

/** What an MRTR round hands the client to echo back: the answers so far, bound to one call. */
export interface RoundState {
  /** The call it belongs to: tool name, a digest of its arguments, the caller's owner key. */
  binding: string;
  /** Keys asked in the round this state went out with: only their answers are taken next. */
  asked: string[];
  /** Answers of earlier rounds, by key. */
  answers: Record<string, unknown>;
  /** Issued at (ms): a state older than {@link MAX_AGE_MS} is refused. */
  at: number;
}

/** How long a client may take to answer one round. */
const MAX_AGE_MS = 60 * 60 * 1000;

/** The binding of a call: a state from another tool, arguments or caller does not open. */
export function bindingOf(tool: string, rawArgs: unknown, owner: string | null): string {
  return createHash("sha256")
    .update(JSON.stringify([tool, rawArgs, owner]))
    .digest("base64url");
}

/**
 * `requestState` is attacker-controlled and here it decides what the handler is told the user
 * answered, so it is sealed with a MAC under a key of the store's secret (X-MRTR-5). Not
 * encrypted: it holds only the client's own answers.
 */
export class RequestStateSeal {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = createHmac("sha256", secret).update("mcp-tasks mrtr request state v1").digest();
  }

  seal(state: RoundState): string {
    const body = Buffer.from(JSON.stringify(state)).toString("base64url");
    return `${body}.${this.mac(body)}`;
  }

  /** The state, or -32602 when it was not sealed here for this call or is too old. */
  open(token: unknown, binding: string, now: number): RoundState {
    const refused = (): TaskError => TaskError.invalidParams("Invalid params: requestState is not one this server issued for this call");
    if (typeof token !== "string") throw refused();
    const [body, mac] = token.split(".");
    if (!body || !mac) throw refused();
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw refused();
    const state = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as RoundState;
    if (state.binding !== binding || now - state.at > MAX_AGE_MS) throw refused();
    return state;
  }

  private mac(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url");
  }
}
