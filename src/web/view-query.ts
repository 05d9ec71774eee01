import type { ListPosition } from "../core/cursor.js";
import { isTaskStatus, TASK_STATUSES, type TaskStatus } from "../core/task-status.js";
import type { TaskFilter } from "../store/task-store.js";
import type { Viewer } from "./viewer.js";
import { WebRequestError } from "./web-error.js";

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 500;

/** A parsed `GET /tasks/api/tasks` query. */
export interface ViewQuery {
  filter: TaskFilter;
  after: ListPosition | null;
  limit: number;
}

/**
 * Reads `status` (comma-separated), `tool`, `id` (a prefix of the task id), `parked` (`1` or
 * `true`: only parked tasks), `owner` (admins only:
 * a name as a person types it, `alice`, or a whole owner key, `local|alice`), `from` / `to` (the
 * creation time: ms since the epoch or an ISO 8601 date; from inclusive, to exclusive), `limit`
 * and `after` (a cursor from `nextCursor`). The viewer's scope always bounds the filter.
 *
 * @throws WebRequestError 400 for a malformed value, 403 for a non-admin's owner filter.
 */
export function parseViewQuery(params: URLSearchParams, viewer: Viewer, keepsWaits = true): ViewQuery {
  return {
    filter: parseViewFilter(params, viewer, keepsWaits),
    after: parseCursor(params.get("after")),
    limit: parseLimit(params.get("limit")),
  };
}

/**
 * The filter part of a view query (also what the live feed counts by). `keepsWaits`: whether the
 * store keeps durable waits (else no task is ever parked, and the `parked` filter is refused).
 */
export function parseViewFilter(params: URLSearchParams, viewer: Viewer, keepsWaits = true): TaskFilter {
  const filter: TaskFilter = { scope: viewer.scope };
  const value = (name: string): string | null => {
    const text = params.get(name)?.trim();
    return text === undefined || text === "" ? null : bounded(name, text);
  };
  const status = value("status");
  if (status !== null) filter.statuses = parseStatuses(status);
  const tool = value("tool");
  if (tool !== null) filter.name = tool;
  const id = value("id");
  if (id !== null) filter.idPrefix = id;
  const owner = value("owner");
  if (owner !== null) {
    if (!viewer.admin) throw new WebRequestError("forbidden", "Only an admin can filter by owner: you see your own tasks");
    filter.ownerName = owner;
  }
  const parked = value("parked");
  if (parked !== null) {
    if (parked !== "1" && parked !== "true" && parked !== "0" && parked !== "false") {
      throw new WebRequestError("invalid_params", "Invalid parked: 1 (only parked tasks) or 0");
    }
    if (parked === "1" || parked === "true") {
      if (!keepsWaits) throw new WebRequestError("invalid_params", "This server's task store keeps no parked tasks");
      filter.parked = true;
    }
  }
  const from = value("from");
  if (from !== null) filter.createdFrom = parseTime("from", from);
  const to = value("to");
  if (to !== null) filter.createdTo = parseTime("to", to);
  if (filter.createdFrom !== undefined && filter.createdTo !== undefined && filter.createdFrom >= filter.createdTo) {
    throw new WebRequestError("invalid_params", "Invalid time range: from must be earlier than to");
  }
  return filter;
}

/** The filter the counts per status follow: every filter but the status one (the counts are what a status filter picks from). */
export function countingFilter(filter: TaskFilter): TaskFilter {
  const { statuses: _statuses, ...rest } = filter;
  return rest;
}

function parseTime(name: string, text: string): number {
  const ms = /^\d{1,16}$/.test(text) ? Number(text) : /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isSafeInteger(ms)) {
    throw new WebRequestError(
      "invalid_params",
      `Invalid ${name}: a time as milliseconds since the epoch or an ISO 8601 date (2026-12-01T10:00Z)`,
    );
  }
  return ms;
}

function parseStatuses(text: string): TaskStatus[] {
  const statuses: TaskStatus[] = [];
  for (const part of text.split(",")) {
    if (!isTaskStatus(part))
      throw new WebRequestError("invalid_params", `Unknown status "${part.slice(0, 40)}": expected one of ${TASK_STATUSES.join(", ")}`);
    if (!statuses.includes(part)) statuses.push(part);
  }
  return statuses;
}

function bounded(name: string, value: string): string {
  if (value.length > 256) throw new WebRequestError("invalid_params", `Invalid ${name}: at most 256 characters`);
  return value;
}

function parseLimit(text: string | null): number {
  if (text === null || text === "") return DEFAULT_PAGE;
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > MAX_PAGE) {
    throw new WebRequestError("invalid_params", `Invalid limit: a whole number from 1 to ${MAX_PAGE}`);
  }
  return Number(text);
}

/** The opaque `nextCursor` of a page: where the next (older) page starts. Scope is re-applied on use, so it needs no signature. */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url");
}

function parseCursor(text: string | null): ListPosition | null {
  if (text === null || text === "") return null;
  const invalid = new WebRequestError("bad_cursor", "Invalid cursor: pass a nextCursor from an earlier page");
  if (text.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw invalid;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw invalid;
  const [createdAt, id] = decoded as unknown[];
  if (!Number.isSafeInteger(createdAt) || typeof id !== "string" || id.length === 0 || id.length > 256) throw invalid;
  return { createdAt: createdAt as number, id };
}
