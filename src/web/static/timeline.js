// A task's timeline in the detail panel (GET /tasks/api/tasks/:id/timeline): status changes, runs,
// steps, questions, waits and webhook deliveries, merged into one list by time. Rendered with
// textContent only, like the rest of the page. The page hands in its helpers (`page`), so this
// module owns no state of its own.

const RUN_END = {
  finished: "finished",
  drained: "handed back by a drain",
  lost: "lost (its server or worker stopped)",
  running: "running",
};

function bytesText(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

const FINAL = new Set(["completed", "failed", "cancelled"]);
const RANK = { status: 0, run: 1, step: 2, question: 3, wait: 4, webhook: 6 };

function rank(entry) {
  return entry.kind === "status" && FINAL.has(entry.status) ? 5 : RANK[entry.kind];
}

/** Every fact of the timeline as one entry: when, what kind, a title, and details. */
function entriesOf(timeline, page) {
  const { formatDuration, json } = page;
  const entries = [];
  for (const change of timeline.status) {
    entries.push({
      at: change.at,
      kind: "status",
      status: change.status,
      title: change.status.replace("_", " "),
      detail: [change.statusMessage, change.node ? `on ${change.node}` : null].filter(Boolean).join(" · "),
    });
  }
  for (const run of timeline.runs) {
    const how = run.startedBy === "created" ? "started" : run.startedBy === "resumed" ? "resumed" : "re-run";
    const length = run.endedAt === null ? "" : ` after ${formatDuration(run.endedAt - run.startedAt)}`;
    entries.push({
      at: run.startedAt,
      kind: "run",
      title: `run ${run.attempt} ${how}`,
      detail: `ended: ${RUN_END[run.ended] || run.ended}${length}${run.node ? ` · on ${run.node}` : ""}`,
      data: { run: String(run.attempt), ended: run.ended },
    });
  }
  for (const step of timeline.steps) {
    const facts = [
      step.ms === null ? null : formatDuration(step.ms),
      step.attempt === null ? null : `run ${step.attempt}`,
      `result ${bytesText(step.bytes)}`,
    ].filter(Boolean);
    entries.push({
      at: step.at,
      kind: "step",
      title: `step ${step.name}${step.occurrence > 1 ? ` #${step.occurrence}` : ""}`,
      detail: facts.join(" · "),
      data: { step: step.name },
    });
  }
  for (const question of timeline.questions) {
    const answer =
      question.answer === null ? "not answered" : json(question.answer.kind === "error" ? question.answer.error : question.answer.value);
    entries.push({
      at: question.askedAt,
      kind: "question",
      title: `asked ${question.method}`,
      detail: `answer: ${answer}`,
      data: { inputId: question.id },
    });
  }
  for (const wait of timeline.waits) {
    const what = wait.kind === "timer" ? "timer" : `event ${wait.event}`;
    const state =
      wait.state === "waiting"
        ? `waiting${wait.parked ? " (parked)" : ""}${wait.dueAt === null ? "" : ` until ${page.formatTime(wait.dueAt)}`}`
        : wait.state === "timeout"
          ? "timed out"
          : wait.state === "event"
            ? "the event came"
            : "fired";
    entries.push({ at: wait.since ?? wait.at, kind: "wait", title: `wait: ${what}`, detail: state });
  }
  for (const delivery of timeline.webhooks || []) {
    entries.push({
      at: delivery.at,
      kind: "webhook",
      title: `webhook ${delivery.type}`,
      detail: `${delivery.state} · ${delivery.attempts} attempt${delivery.attempts === 1 ? "" : "s"}${delivery.lastStatus ? ` · HTTP ${delivery.lastStatus}` : ""} · ${delivery.url}`,
    });
  }
  // Entries of one instant: a status change before the run it starts, and a final status after the step that led to it.
  return entries.sort((a, b) => a.at - b.at || rank(a) - rank(b));
}

/** The Timeline section's list for `task` (its createdAt is the zero of the "+…" offsets). */
export function timelineList(timeline, task, page) {
  const { el, formatTime, formatDuration } = page;
  return el(
    "ol",
    { className: "timeline full" },
    entriesOf(timeline, page).map((entry) =>
      el("li", { dataset: { kind: entry.kind, ...(entry.status && { status: entry.status }), ...entry.data } }, [
        el("span", { className: `dot ${entry.status || entry.kind}` }),
        el("b", { text: entry.title }),
        el("span", { className: "when", text: `${formatTime(entry.at)} · +${formatDuration(entry.at - task.createdAt)}` }),
        entry.detail ? el("span", { className: "why", text: entry.detail }) : null,
      ]),
    ),
  );
}

/** Loads the timeline of `task` and returns its section's list, or null when it could not be had. */
export async function loadTimeline(task, page) {
  try {
    const timeline = await page.api(`/tasks/api/tasks/${encodeURIComponent(task.id)}/timeline`);
    return timelineList(timeline, task, page);
  } catch (error) {
    if (error instanceof page.Unauthorized) throw error;
    return null;
  }
}
