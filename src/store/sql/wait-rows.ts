/** The durable waits' rows as both SQL stores return them (same column names). */
import type { WaitRecord } from "../wait-store.js";

export interface WaitRow {
  task_id: string;
  key: string;
  kind: "timer" | "event";
  owner: string | null;
  event_name: string | null;
  due_at: number | null;
  after_seq: number;
  since: number;
  created_at: number;
}

export function waitFromRow(row: WaitRow): WaitRecord {
  return {
    taskId: row.task_id,
    key: row.key,
    kind: row.kind,
    owner: row.owner,
    eventName: row.event_name,
    dueAt: row.due_at,
    afterSeq: row.after_seq,
    since: row.since,
    createdAt: row.created_at,
  };
}
