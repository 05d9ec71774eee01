import { CallToolResultSchema, ListToolsResultSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode, TaskError } from "../../../core/errors.js";
import { ConnectionError, RemoteError } from "../requestor-errors.js";
import { METHOD, OWN_META, RESULT_TYPE } from "../../wire/rev2026-07-28/wire.js";
import type { TaskSupport } from "../../tool-definition.js";
import type { RemoteTaskInfo } from "../remote-task-info.js";
import type { EraCall, EraCallOptions, EraFeatures, HandleOptions, RequestorEra, ToolTask } from "../requestor-era.js";
import { decideTaskCall } from "../task-support.js";
import { readDetailedTask, withoutResultType } from "./detailed-task.js";
import { answerInputs, capabilitiesOf, type InputHandlers } from "./input-answers.js";
import { StatelessTask } from "./remote-task.js";
import { discover } from "./discover.js";
import type { StatelessConnection } from "./stateless-connection.js";

/** X-MRTR-1: a result asking for input before the request can go on. */
const INPUT_REQUIRED = "input_required";
/** A server asking more rounds than this for one call is looping: given up on. */
const MAX_ROUNDS = 64;

/** 2026-07-28: stateless requests, the server decides what becomes a task (X-CAP-4), no `tasks/list` (X-LEG-1), polling. */
export const REV_2026_07_28_FEATURES: EraFeatures = {
  canList: false,
  sendsTtl: false,
  sessions: false,
  serverDecidesTasks: true,
  streamsResult: false,
  clientHostedTasks: false,
};

const SUPPORTS = new Set<string>(["forbidden", "optional", "required"]);

/**
 * The 2026-07-28 requestor with the tasks extension (SEP-2663) over a {@link StatelessConnection}:
 * no session; the server decides what becomes a task (X-CAP-4), and its answer says which it did
 * (`resultType`, X-RT-1): `complete` (the CallToolResult), `task` (a flat CreateTaskResult,
 * X-NEW-1), or `input_required` (MRTR, X-MRTR-1: the call is sent again with the answers and the
 * sealed `requestState`, until it completes or becomes a task).
 *
 * A caller's `task: false` is honoured by not declaring the extension on that call: an optional
 * tool then runs plainly (X-CAP-10), a required one is refused by the server (-32021, X-CAP-6).
 * `ttl` has no place on this wire (the server's default applies). There is no `tasks/list`
 * (X-LEG-1): the CLI lists from its journal.
 */
export class TasksExtRequestor implements RequestorEra {
  readonly revision = "2026-07-28" as const;
  readonly features = REV_2026_07_28_FEATURES;
  /** The server decides per call whether it becomes a task (X-CAP-4). */
  readonly serverSupportsToolTasks = true;
  private toolSupport: Map<string, TaskSupport | null> | null = null;
  private idempotency: Promise<boolean> | null = null;

  constructor(
    readonly connection: StatelessConnection,
    private readonly handlers: InputHandlers,
  ) {}

  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = ListToolsResultSchema.safeParse(
        await this.connection.request(METHOD.toolsList, cursor === undefined ? {} : { cursor }, this.requestOptions(true)),
      );
      if (!page.success)
        throw new ConnectionError("The server answered tools/list with something that is not a tool list", RpcCode.InternalError);
      tools.push(...page.data.tools);
      cursor = page.data.nextCursor;
    } while (cursor !== undefined);
    // The extension lists no taskSupport (X-LEG-6); our server says it in its own _meta key.
    this.toolSupport = new Map(
      tools.map((tool) => {
        const declared = tool._meta?.[OWN_META.taskSupport];
        return [tool.name, typeof declared === "string" && SUPPORTS.has(declared) ? (declared as TaskSupport) : null];
      }),
    );
    return tools;
  }

  /** A tool's task support as the server lists it (our server's `_meta`), or null where it does not say. */
  async taskSupportOf(tool: string, options: { refresh?: boolean } = {}): Promise<TaskSupport | null> {
    if (!this.toolSupport || options.refresh) await this.listTools();
    return this.toolSupport?.get(tool) ?? null;
  }

  /** SEP-3182: `server/discover` lists `capabilities.tools.idempotency` (asked once; a failed ask is asked again next time). */
  honoursKeys(): Promise<boolean> {
    this.idempotency ??= discover(this.connection).then(
      (discovery) => discovery?.idempotency ?? false,
      (error: unknown) => {
        this.idempotency = null;
        throw error;
      },
    );
    return this.idempotency;
  }

  /**
   * Whether the server will make this call a task: it decides (X-CAP-4), and says how only for our
   * servers (`_meta` in tools/list); elsewhere, or for a forbidden tool, the call is taken as plain.
   */
  async createsTask(name: string, options: EraCallOptions): Promise<boolean> {
    if (options.task === false) return false;
    const support = await this.taskSupportOf(name).catch(() => null);
    return support === "optional" || support === "required";
  }

  /**
   * Where the server lists how it decides on the tool, a task wish it would not honour is refused
   * here, before anything is sent, as under 2025-11-25 (T-TOOL-2..4): `task: true` on a
   * `forbidden` tool, `task: false` on a `required` one. Elsewhere the server decides (X-CAP-4) and
   * a refused `task: false` comes back as -32021 (X-CAP-6).
   */
  async callTool(name: string, args: Record<string, unknown>, options: EraCallOptions): Promise<EraCall> {
    if (options.task !== undefined) {
      const support = await this.taskSupportOf(name).catch(() => null);
      if (support !== null) decideTaskCall({ tool: name, serverSupportsTasks: true, support, wanted: options.task });
    }
    const declare = options.task !== false;
    // The key names the call; its MRTR continuations are the same call resumed (not retries).
    let round: Record<string, unknown> = options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {};
    for (let n = 0; n < MAX_ROUNDS; n++) {
      const answer = await this.connection
        .request(
          METHOD.toolsCall,
          { name, arguments: args, ...round },
          {
            ...this.requestOptions(declare, options.signal),
            ...(options.onProgress !== undefined && { onProgress: options.onProgress }),
          },
        )
        .catch((error: unknown) => {
          // X-CAP-6: the tool runs only as a task, and this call did not declare the extension.
          if (!declare && error instanceof RemoteError && error.code === RpcCode.MissingRequiredClientCapability) {
            throw new TaskError("method_not_found", `Tool ${name} must be called as a task (the server runs it only as a task)`);
          }
          throw error;
        });
      const type = answer["resultType"];
      if (type === RESULT_TYPE.task) {
        const created = readDetailedTask(answer);
        if (!created) throw new ConnectionError("The server answered tools/call with a task that is not a Task", RpcCode.InternalError);
        return { kind: "task", created: created.task };
      }
      if (type === INPUT_REQUIRED) {
        const requests =
          typeof answer["inputRequests"] === "object" && answer["inputRequests"] !== null
            ? (answer["inputRequests"] as Record<string, unknown>)
            : {};
        const inputResponses = await answerInputs(requests, this.handlers, {
          relatedTaskId: null,
          signal: options.signal ?? new AbortController().signal,
        });
        // X-MRTR-5: `requestState` goes back unchanged.
        round = { inputResponses, ...(answer["requestState"] !== undefined && { requestState: answer["requestState"] }) };
        continue;
      }
      const result = CallToolResultSchema.safeParse(answer);
      if (!result.success)
        throw new ConnectionError("The server answered tools/call with neither a CallToolResult nor a task", RpcCode.InternalError);
      return { kind: "result", result: withoutResultType(result.data) };
    }
    throw new ConnectionError(`The server asked for input more than ${MAX_ROUNDS} times on one tools/call`, RpcCode.InternalError);
  }

  task(taskId: string, options: HandleOptions): ToolTask {
    return new StatelessTask(taskId, {
      connection: this.connection,
      handlers: this.handlers,
      answerInput: options.answerInput,
      onLifecycle: options.onLifecycle,
      ...(options.initial !== undefined && { initial: options.initial }),
      ...(options.defaultPollIntervalMs !== undefined && { defaultPollIntervalMs: options.defaultPollIntervalMs }),
      ...(options.onProgress !== undefined && { onProgress: options.onProgress }),
    });
  }

  // eslint-disable-next-line require-yield
  async *list(): AsyncGenerator<RemoteTaskInfo, void, undefined> {
    throw new TaskError("method_not_found", "2026-07-28 has no tasks/list (X-LEG-1): a requestor keeps its own task ids");
  }

  async close(): Promise<void> {}

  private requestOptions(declareTasks: boolean, signal?: AbortSignal) {
    return { declareTasks, capabilities: capabilitiesOf(this.handlers), ...(signal !== undefined && { signal }) };
  }
}
