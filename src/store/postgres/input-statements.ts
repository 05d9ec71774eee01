/** The per-task queue of requests waiting for the requestor's answer (T-INPUT). */
import { claimHeld, DB_NOW_MS, INPUT_COLUMNS, statement, type Statement, type Tables } from "./sql.js";

export interface InputStatements {
  /**
   * ($1 taskId, $2 id, $3 method, $4 params, $5 createdAt). 0 rows when the input id is taken;
   * a foreign-key violation (23503) when the task does not exist.
   */
  enqueue: Statement;
  /**
   * {@link enqueue} of a worker, fenced by its claim, stamped by the database's clock: ($1 taskId,
   * $2 id, $3 method, $4 params, $5 claim owner, $6 claim generation).
   * One row: `held` 0 when the claim is no longer the task's (nothing written), `n` rows written.
   */
  enqueueClaimed: Statement;
  /** ($1 taskId): unanswered requests, in queue order. */
  pending: Statement;
  /** ($1 taskId): every request, answered or not, in queue order. */
  all: Statement;
  /** ($1 taskId, $2 id) */
  get: Statement;
  /** ($1 answer, $2 taskId, $3 id). Answers at most once: 0 rows when already answered or unknown. */
  answer: Statement;
  /** {@link answer} of a worker abandoning an earlier run's question, fenced: (… $4 claim owner, $5 claim generation). */
  answerClaimed: Statement;
}

export function inputStatements(t: Tables): InputStatements {
  return {
    enqueue: statement(
      "enqueue_input",
      `INSERT INTO ${t.inputs} (task_id, id, method, params, created_at, answer)
       VALUES ($1, $2, $3, $4, $5, NULL)
       ON CONFLICT (task_id, id) DO NOTHING`,
    ),

    // FOR SHARE: a re-queue of the task (which answers or keeps the pending inputs) waits for this
    // insert or makes it match nothing, never leaves it half-seen. Stamped by the database's clock:
    // a re-run on a worker whose clock is behind still queues its questions after the earlier ones.
    enqueueClaimed: statement(
      "enqueue_input_claimed",
      `WITH held AS (
         SELECT id FROM ${t.tasks} WHERE id = $1 AND ${claimHeld("$5", "$6")} FOR SHARE),
       queued AS (
         INSERT INTO ${t.inputs} (task_id, id, method, params, created_at, answer)
         SELECT held.id, $2, $3, $4, ${DB_NOW_MS}, NULL FROM held
         ON CONFLICT (task_id, id) DO NOTHING
         RETURNING 1)
       SELECT (SELECT count(*) FROM held) AS held, (SELECT count(*) FROM queued) AS n`,
    ),

    // seq is insertion order: it breaks ties between requests queued in the same millisecond.
    pending: statement(
      "pending_inputs",
      `SELECT ${INPUT_COLUMNS} FROM ${t.inputs} WHERE task_id = $1 AND answer IS NULL ORDER BY created_at, seq`,
    ),

    all: statement("all_inputs", `SELECT ${INPUT_COLUMNS} FROM ${t.inputs} WHERE task_id = $1 ORDER BY created_at, seq`),

    get: statement("get_input", `SELECT ${INPUT_COLUMNS} FROM ${t.inputs} WHERE task_id = $1 AND id = $2`),

    answer: statement("answer_input", `UPDATE ${t.inputs} SET answer = $1 WHERE task_id = $2 AND id = $3 AND answer IS NULL`),

    answerClaimed: statement(
      "answer_input_claimed",
      `WITH held AS (
         SELECT id FROM ${t.tasks} WHERE id = $2 AND ${claimHeld("$4", "$5")} FOR SHARE)
       UPDATE ${t.inputs} SET answer = $1 WHERE task_id IN (SELECT id FROM held) AND id = $3 AND answer IS NULL`,
    ),
  };
}
