import { deadlineSignal } from "../../core/deadline-signal.js";
import { isTerminal } from "../../core/task-status.js";
import type { TaskProgress, TaskRecord } from "../../core/task.js";
import type { StatelessHost, StatelessHttpRequest } from "../era.js";
import { checkToolArguments, createToolTask, progressTokenOf, runToolPlainly } from "../handlers/tools-call.js";
import { answerKeyedPlainly, fallbackKey, requestorKey } from "../handlers/keyed-call.js";
import type { LooseParams } from "../request-schemas.js";
import { acceptedMethods } from "../tool-context.js";
import type { Envelope } from "../wire/rev2026-07-28/envelope.js";
import { InputRounds } from "./input-rounds.js";
import { plainToolContext } from "./plain-tool-context.js";
import type { ProgressSink } from "./progress-stream.js";
import { bindingOf } from "./request-state.js";
import { completeResult, createTaskResult } from "../wire/rev2026-07-28/task-wire.js";
import { missingTasksCapability, PROTOCOL_VERSION } from "../wire/rev2026-07-28/wire.js";
import { usesFallback } from "../fallback/fallback-client.js";
import { answerWithin } from "../fallback/background-call.js";
import { callTaskTool, isTaskTool } from "../fallback/task-tools.js";
import { noteTaskStatus } from "../tracing/task-links.js";
import { requestedWebhook } from "../webhook-request.js";
import { webhookMetaOf } from "../wire/webhook-meta.js";

/**
 * `tools/call` under 2026-07-28: the server, not the client, decides whether the call becomes a
 * task (X-CAP-4, X-NEW-5; a legacy `params.task` is an unknown field, X-LEG-2). The decision:
 *
 * - a client that did not declare the extension on this request never gets a task (X-CAP-5): an
 *   `optional` or `forbidden` tool runs as a plain call (X-CAP-10), a `required` one is refused
 *   with -32021 before its handler runs (X-CAP-6);
 * - `forbidden` (the default) always runs as a plain call (X-RT-6);
 * - `required` always becomes a task;
 * - `optional` becomes a task, and the call waits up to `inlineWaitMs` for it: a handler done by
 *   then is answered inline with its CallToolResult, one still running (or asking for input) is
 *   answered with the CreateTaskResult. Either way the work ran as a durable task.
 *
 * A client that did not declare the extension gets the fallback for hosts without tasks instead,
 * unless it is switched off (docs/hosts/README.md): our `task_*` tools, and an `optional`
 * or `required` tool run as a task answered within `backgroundAfterMs`, or else with a plain
 * CallToolResult giving its task id — core behaviour, as X-CAP-10 allows, never a CreateTaskResult
 * (X-CAP-5), so X-CAP-6's -32021 is not needed.
 *
 * Input: a plain call's questions, and a tool's `gather` before its task, go through MRTR rounds
 * on this request (X-MRTR-1/2); a task's questions through `inputRequests` and `tasks/update`.
 */
export async function toolsCall(
  host: StatelessHost,
  params: LooseParams,
  envelope: Envelope,
  request: StatelessHttpRequest,
  progress?: ProgressSink,
): Promise<Record<string, unknown>> {
  const fallback = usesFallback(host.config, envelope.declaresTasks);
  const name = params?.["name"];
  if (fallback && isTaskTool(name, host.tools)) {
    return completeResult(await callTaskTool(host, name, params?.["arguments"], { caller: request.caller, signal: request.signal }));
  }
  const checked = checkToolArguments(host, params);
  const { tool, args } = checked;
  // SEP-3182: params.idempotencyKey. An MRTR continuation (it carries requestState) is outside
  // the SEP's scope: it is the same operation resumed, not a retry, so its key is not looked at.
  const continuing = params?.["requestState"] !== undefined || params?.["inputResponses"] !== undefined;
  const requested = continuing ? null : requestorKey(host.config, params?.["idempotencyKey"], tool, checked.rawArgs);
  const support = host.config.tasks ? (tool.definition.taskSupport ?? "forbidden") : "forbidden";
  // A required tool stays refused (X-CAP-6) unless the server opted in to run it in the fallback.
  const inBackground = fallback && (support === "optional" || (support === "required" && host.config.fallbackRequired));
  if (support === "required" && !envelope.declaresTasks && !inBackground)
    throw missingTasksCapability(`tool ${tool.name} runs only as a task, so it`);
  const now = Date.now();
  // Made only when asked for (a task without `gather` needs none: a digest and a MAC key fewer per
  // creation), but always for a call that carries a requestState: its seal is checked (X-MRTR-5).
  let rounds: InputRounds | undefined;
  const roundsOf = async (): Promise<InputRounds> =>
    (rounds ??= await InputRounds.of(
      await secretOf(host),
      bindingOf(tool.name, checked.rawArgs, request.caller.owner),
      params,
      envelope,
      now,
    ));
  if (params?.["requestState"] !== undefined) await roundsOf();
  if (requested && (support === "forbidden" || (!envelope.declaresTasks && !inBackground))) {
    // Recorded as a task under the key, so a retry replays its answer instead of running it again.
    const keyed = await createToolTask(host, checked, {
      caller: request.caller,
      origin: { sessionId: null, progressToken: null, accepts: [], era: PROTOCOL_VERSION },
      ttl: undefined,
      key: requested,
    });
    return completeResult(await answerKeyedPlainly(host.engine, keyed, requested, request.caller, request.signal));
  }
  if (support === "forbidden" || (!envelope.declaresTasks && !inBackground)) {
    // A plain call asks through MRTR rounds (X-MRTR-5): it runs again, from the start, on each one.
    const outcome = await (
      await roundsOf()
    ).run((ask) => runToolPlainly(host.engine.logger, tool, args, plainToolContext(ask, request.caller.owner, progress)), request.signal);
    return "inputRequired" in outcome ? outcome.inputRequired : completeResult(outcome.value);
  }
  // X-MRTR-2: what the tool needs before its work is asked on this request, before the task exists.
  let gathered: { value: unknown } | undefined;
  const gather = tool.definition.gather;
  if (gather) {
    const outcome = await (await roundsOf()).run((ask) => gather(args, ask), request.signal);
    if ("inputRequired" in outcome) return outcome.inputRequired;
    gathered = { value: outcome.value };
  }
  // X-NEW-3: create resolves once the store holds the task, so a tasks/get of its id succeeds.
  // Under a key that names a task already, that task as it is now (nothing created, nothing run);
  // in the fallback, a tool that dedupes keyless calls attaches a repeat to the running one.
  const key = inBackground ? fallbackKey(requested, tool, checked.rawArgs) : requested;
  // An extension of this server (docs/webhooks.md): the requestor's own webhook for the task,
  // refused (-32602) before anything is stored when the operator's allow-list does not cover it.
  const webhook = requestedWebhook(host.engine.webhookSettings, webhookMetaOf(params));
  const { task, created } = await createToolTask(host, checked, {
    caller: request.caller,
    origin: {
      sessionId: null,
      progressToken: progressTokenOf(params),
      accepts: acceptedMethods(envelope.clientCapabilities),
      era: PROTOCOL_VERSION,
    },
    // The client states no task preference (X-CAP-4): the server's default ttl.
    ttl: undefined,
    ...(gathered && { gathered }),
    key,
    ...(webhook && { webhook }),
  });
  // A plain stateless call carries no question; its progress (and keep-alives) only when it streams.
  if (inBackground) {
    const sendProgress = progress && ((p: TaskProgress) => Promise.resolve(progress(p.progress, p.total, p.message)));
    return completeResult(
      await answerWithin(host, task, { caller: request.caller, signal: request.signal, ...(sendProgress && { sendProgress }) }),
    );
  }
  // A retry that found its task by key answers with that task, as it is now: the same taskId
  // whether the task still runs or has ended (docs/idempotency.md), never a result in its place.
  if (!created || support === "required" || host.config.inlineWaitMs <= 0) return createTaskResult(task);
  const settled = await settledWithin(host, task, request, host.config.inlineWaitMs);
  if (settled && isTerminal(settled.status) && settled.outcome?.kind === "result") return completeResult(settled.outcome.value as object);
  return createTaskResult(settled ?? task);
}

const secrets = new WeakMap<StatelessHost["engine"], Promise<Buffer>>();

/** The store's secret (it keys the requestState seal), read once per engine. */
function secretOf({ engine }: StatelessHost): Promise<Buffer> {
  let secret = secrets.get(engine);
  if (!secret) {
    secret = engine.inspect.secret();
    secrets.set(engine, secret);
  }
  return secret;
}

/**
 * The task once it ended or asked for input within `ms`, else (or when the requestor hung up)
 * null. A task that ended in a JSON-RPC error is returned too: it goes out as a task, whose
 * `tasks/get` carries the error (the client asked for a tool call, and a tool call's JSON-RPC
 * error would say the request itself was wrong).
 */
async function settledWithin(host: StatelessHost, task: TaskRecord, request: StatelessHttpRequest, ms: number): Promise<TaskRecord | null> {
  // Not AbortSignal.any([…, AbortSignal.timeout(ms)]): on Node 20 the call then waited for the
  // whole handler (see deadline-signal.ts).
  const waited = deadlineSignal({ signals: [request.signal], timeoutMs: ms, reason: "inline wait over" });
  try {
    for await (const { task: now } of host.engine.watch(task.id, request.caller, waited.signal)) {
      if (isTerminal(now.status) || now.status === "input_required") {
        // The request's span ends with the status its answer shows, not the one it created.
        noteTaskStatus(now);
        return now;
      }
    }
  } catch (error) {
    if (waited.signal.aborted) return null;
    throw error;
  } finally {
    waited.clear();
  }
  return null;
}
