import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { traceMeta } from "../../tracing/client-span.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { deadlineSignal } from "../../../core/deadline-signal.js";
import { readWireTask, type WireTask } from "../../wire/rev2025-11-25/wire.js";
import { fromSdkError } from "../requestor-errors.js";
import { isSdkClient } from "../../sdk-shapes.js";

/**
 * The SDK's setTimeout-based request timeout: the largest delay a Node timer accepts (~24.8 days).
 * Blocking calls (`tasks/result`, a human answering) use it as "no client-side cut-off"; the
 * caller's AbortSignal is the limit.
 */
export const NO_TIMEOUT_MS = 2_147_483_647;

/** Options of one request a {@link TaskPeer} sends: abort signal, timeout, related request, progress. */
export interface PeerRequestOptions {
  signal?: AbortSignal;
  /** Default: the SDK's 60 s. */
  timeout?: number;
  /** On Streamable HTTP, the incoming request whose stream carries this one (a server talking to its client). */
  relatedRequestId?: RequestId;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/**
 * The other party of a connection, seen by a requestor: whichever side of MCP that is (a client
 * calling tools on a server, or a server sending sampling/elicitation to a client).
 */
export interface TaskPeer {
  /** Sends a request; resolves with the parsed result, rejects with a TaskError (see fromSdkError). */
  request<T>(method: string, params: Record<string, unknown>, schema: z.ZodType<T>, options?: PeerRequestOptions): Promise<T>;
  /** The capabilities the other party declared at initialization (undefined if unknown). */
  capabilities(): unknown;
  /** Listens to `notifications/tasks/status` from the other party (T-NOTE-1). */
  onTaskStatus(listener: (task: WireTask) => void): () => void;
}

type Protocolish = Client | Server;
type Listener = (task: WireTask) => void;

/**
 * One `notifications/tasks/status` handler per SDK object, fanned out to every listener (the SDK
 * keeps one handler per method, so each TaskClient/handle installing its own would evict the others).
 */
const statusListeners = new WeakMap<Protocolish, Set<Listener>>();

function listenersOf(protocol: Protocolish): Set<Listener> {
  let set = statusListeners.get(protocol);
  if (!set) {
    const created = new Set<Listener>();
    set = created;
    statusListeners.set(protocol, created);
    protocol.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      const task = readWireTask(notification.params);
      if (!task) return;
      for (const listener of [...created]) listener(task);
    });
  }
  return set;
}

/**
 * A {@link TaskPeer} over an SDK `Client` (the peer is its server) or `Server` (the peer is its
 * client). `capabilities` overrides what the SDK object knows, for a connection resumed without a
 * new initialize (the CLI reusing a stored session).
 */
export function peerOf(protocol: Protocolish, defaults: { relatedRequestId?: RequestId; capabilities?: unknown } = {}): TaskPeer {
  return {
    async request<T>(method: string, params: Record<string, unknown>, schema: z.ZodType<T>, options: PeerRequestOptions = {}): Promise<T> {
      const relatedRequestId = options.relatedRequestId ?? defaults.relatedRequestId;
      // A signal of its own per request, let go of when the request ends: the SDK never removes
      // the abort listener it adds, and a long-lived caller signal (a polling loop's) would
      // collect one per request. Not AbortSignal.any([signal]): see deadline-signal.ts.
      const own = options.signal !== undefined ? deadlineSignal({ signals: [options.signal] }) : undefined;
      const sdkOptions = {
        ...(own !== undefined && { signal: own.signal }),
        ...(options.timeout !== undefined && { timeout: Math.min(options.timeout, NO_TIMEOUT_MS) }),
        ...(relatedRequestId !== undefined && { relatedRequestId }),
        ...(options.onprogress !== undefined && { onprogress: options.onprogress, resetTimeoutOnProgress: true }),
      };
      try {
        // The SDK types requests per role; tasks/* and task-augmented params are valid in both.
        // SEP-414: the active trace context rides in `_meta`, so the receiver's spans join it.
        const meta = params["_meta"];
        const traced = { ...params, _meta: traceMeta(typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>) : {}) };
        const sent = Object.keys(traced._meta).length === 0 ? params : traced;
        return (await protocol.request({ method, params: sent } as never, schema as never, sdkOptions)) as T;
      } catch (error) {
        // An abort by the caller is the caller's, not the receiver's answer.
        if (options.signal?.aborted) throw options.signal.reason;
        throw fromSdkError(error);
      } finally {
        own?.clear();
      }
    },
    capabilities(): unknown {
      if (defaults.capabilities !== undefined) return defaults.capabilities;
      return isSdkClient(protocol) ? protocol.getServerCapabilities() : protocol.getClientCapabilities();
    },
    onTaskStatus(listener: Listener): () => void {
      const set = listenersOf(protocol);
      set.add(listener);
      return () => set.delete(listener);
    },
  };
}
