/**
 * What is wrong with a parsed body as one JSON-RPC 2.0 message of MCP, or null when its envelope
 * is sound. The body is valid JSON (a parse error is answered before), so anything wrong here is
 * an Invalid Request (-32600), never a Parse error: JSON-RPC 2.0 §5.1 keeps -32700 for text that
 * is not JSON.
 *
 * Only the envelope is checked (`jsonrpc`, `id`, `method`, `params`, `result`, `error`); what a
 * method's params must hold is the method's to say (-32602). MCP narrows JSON-RPC in two ways
 * checked here: a request's id is never null, and params are passed by name, as an object.
 */
export interface MessageShapeProblem {
  /** The whole error message, starting "Invalid Request: ". */
  readonly message: string;
  /** The message's id when it could be read (a string or a number), else null (JSON-RPC 2.0 §5). */
  readonly id: string | number | null;
}

export function messageShapeProblem(body: unknown): MessageShapeProblem | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { message: "Invalid Request: the body is not a JSON-RPC message (an object)", id: null };
  }
  const message = body as Record<string, unknown>;
  const { id, method, params } = message;
  const readableId = typeof id === "string" || typeof id === "number" ? id : null;
  const problem = (text: string): MessageShapeProblem => ({ message: `Invalid Request: ${text}`, id: readableId });
  if (message["jsonrpc"] !== "2.0") return problem('"jsonrpc" must be "2.0"');
  if (id !== undefined && readableId === null) return problem('"id" must be a string or a number');
  if (method !== undefined) {
    if (typeof method !== "string") return problem('"method" must be a string');
    if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params))) {
      return problem('"params" must be an object: MCP passes parameters by name');
    }
    return null;
  }
  // Not a request or a notification: a response to one of the server's requests.
  const hasResult = Object.hasOwn(message, "result");
  const hasError = Object.hasOwn(message, "error");
  if (!hasResult && !hasError) return problem('a message has a "method", or an "id" with a "result" or an "error"');
  if (hasResult && hasError) return problem('a response has a "result" or an "error", not both');
  if (id === undefined) return problem('a response has the "id" of the request it answers');
  return null;
}
