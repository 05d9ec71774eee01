/**
 * The JSON shapes of the web API: what a page may learn about a task. Built from store records
 * here only, so redaction and the "never a token" rule have one place to hold.
 */
import type { TaskStatus } from "../core/task-status.js";
import { ownerSubject } from "../store/store-rules.js";
import type { InputRequest, StatusChange, TaskOutcome, TaskProgress, TaskRecord } from "../core/task.js";
import { traceIdOf, traceLink } from "./trace-link.js";

/** What the configuration hides from every viewer. */
export interface Redaction {
  /** The request's arguments. */
  arguments: boolean;
  /** Results, and the `data` of stored errors (their code and message stay: the statusMessage shows them anyway). */
  results: boolean;
  /** The input_required exchange: what the task asked and what the requestor answered (the method stays). */
  inputs: boolean;
}

export const NO_REDACTION: Redaction = { arguments: false, results: false, inputs: false };

/** Stands in for a redacted value. */
export const REDACTED = "[redacted]";

/** One row of the table. */
export interface TaskSummary {
  id: string;
  /** The task's name: the tool's, for tools/call. */
  tool: string;
  method: string;
  /** The owner key, or null for a task created without authentication. */
  owner: string | null;
  /** The owner as a person names it (the subject of an `issuer|subject` key: `alice`), or null. */
  ownerName: string | null;
  status: TaskStatus;
  statusMessage: string | null;
  /**
   * How a waiting task waits (its statusMessage says for what and until when): "parked" (its
   * handler unloaded until what it waits for arrives), "memory" (its handler waits in its process,
   * holding no slot), or null (not waiting, or a store that keeps no waits).
   */
  waitMode: "parked" | "memory" | null;
  createdAt: number;
  updatedAt: number;
  expiresAt: number | null;
  ttlMs: number | null;
  progress: TaskProgress | null;
  /** The finished task this one re-runs (a re-run or a bulk retry from the web view), or null. */
  rerunOf: string | null;
}

export interface InputView {
  id: string;
  method: string;
  createdAt: number;
  params: unknown;
  answer: TaskOutcome | null;
}

/** The detail panel. */
export interface TaskDetail extends TaskSummary {
  arguments: unknown;
  outcome: TaskOutcome | null;
  inputs: InputView[];
  history: StatusChange[];
  pollIntervalMs: number | null;
  retryable: boolean;
  /** The trace of the request that created the task (its execution is part of it), or null when it was not traced. */
  traceId: string | null;
  /** That trace in the operator's trace viewer (`--trace-url`), or null without a template or a trace. */
  traceUrl: string | null;
}

export function toSummary(task: TaskRecord): TaskSummary {
  return {
    id: task.id,
    tool: task.name,
    method: task.method,
    owner: task.owner,
    ownerName: task.owner === null ? null : ownerSubject(task.owner),
    status: task.status,
    statusMessage: task.statusMessage,
    waitMode: task.waitMode ?? null,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    expiresAt: task.expiresAt,
    ttlMs: task.ttlMs,
    progress: task.progress,
    rerunOf: task.origin.rerunOf ?? null,
  };
}

export function toDetail(
  task: TaskRecord,
  history: StatusChange[],
  inputs: InputRequest[],
  redaction: Redaction,
  traceUrl?: string,
): TaskDetail {
  const traceId = traceIdOf(task);
  return {
    ...toSummary(task),
    arguments: redaction.arguments ? REDACTED : argumentsOf(task.request),
    outcome: task.outcome === null ? null : redactOutcome(task.outcome, redaction.results),
    inputs: inputs.map((input) => ({
      id: input.id,
      method: input.method,
      createdAt: input.createdAt,
      params: redaction.inputs ? REDACTED : input.params,
      answer: input.answer === null ? null : redaction.inputs ? { kind: "result", value: REDACTED } : input.answer,
    })),
    history,
    pollIntervalMs: task.pollIntervalMs,
    retryable: task.retryable,
    traceId,
    traceUrl: traceId !== null && traceUrl !== undefined ? traceLink(traceUrl, traceId) : null,
  };
}

/** A call's arguments when the stored request has them (tools/call keeps `{name, arguments}`), else the whole request. */
function argumentsOf(request: unknown): unknown {
  if (typeof request === "object" && request !== null && "arguments" in request) return (request as { arguments: unknown }).arguments;
  return request;
}

function redactOutcome(outcome: TaskOutcome, redact: boolean): TaskOutcome {
  if (!redact) return outcome;
  if (outcome.kind === "result") return { kind: "result", value: REDACTED };
  const { code, message, data } = outcome.error;
  return { kind: "error", error: { code, message, ...(data !== undefined && { data: REDACTED }) } };
}
