/**
 * One task's trace across the processes of a cluster, drawn from what the real exporters sent:
 * two `serve --workers 0` fronts and one `worker` on PostgreSQL, each exporting OTLP to the test
 * collector (test/support/otlp). The demo `ask` task is created on front A under a known
 * traceparent, run on the worker, polled, answered and fetched on front B (2026-07-28). The
 * spans of its trace, and the spans linked to it, become a Gantt chart (SVG), one row per span,
 * coloured by process, with the execution's question and answer marked.
 *
 *   npm run trace:svg [-- --out docs/bench/trace-gantt.svg] [--answer-after-ms 300]
 *
 * Needs PostgreSQL at 127.0.0.1:5432 (user postgres, database test), as the cluster tests do.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Cluster } from "../test/support/cluster.js";
import { OtlpReceiver } from "../test/support/otlp/otlp-receiver.js";
import type { ReceivedSpan } from "../test/support/otlp/received.js";
import { envelope, isTerminal, statelessResult } from "../test/support/stateless-client.js";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { escape, opening, type Frame } from "./support/svg-frame.js";

const HELP = `npm run trace:svg [-- options]
  --out <file>              where the SVG goes (default docs/bench/trace-gantt.svg)
  --answer-after-ms <ms>    how long the "person" takes to answer the task's question (default 300)
  --help`;

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The three processes, by the service name each exports under. */
const PROCESSES: Record<string, { label: string; color: string }> = {
  "trace-front-a": { label: "front A", color: "#3b6fb6" },
  "trace-worker": { label: "worker", color: "#d9822b" },
  "trace-front-b": { label: "front B", color: "#3f9b5a" },
};

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `tasks/get` on `url` every `everyMs` until `done`; few polls, so the chart stays readable. */
async function pollUntil(
  url: string,
  taskId: string,
  done: (task: Record<string, unknown>) => boolean,
  everyMs = 150,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const task = await statelessResult(url, "tasks/get", { taskId });
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} never got there: last ${JSON.stringify(task)}`);
    await pause(everyMs);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: "string" }, "answer-after-ms": { type: "string" }, help: { type: "boolean" } } });
  exitOnHelp(HELP, values.help);
  const out = values.out ?? join(REPO, "docs/bench/trace-gantt.svg");
  const answerAfterMs = numberFlag(HELP, "answer-after-ms", values["answer-after-ms"] ?? "300", { min: 0, max: 10_000 });

  const receiver = await OtlpReceiver.start();
  const cluster = await Cluster.start({
    fronts: 2,
    workers: 1,
    frontArgs: ["--inline-wait-ms", "0"],
    logLevel: "info",
    env: (role, index) =>
      receiver.env("http/protobuf", role === "worker" ? "trace-worker" : index === 0 ? "trace-front-a" : "trace-front-b"),
  });
  try {
    const [frontA = "", frontB = ""] = cluster.urls;
    const traceId = randomBytes(16).toString("hex");
    const traceparent = `00-${traceId}-${randomBytes(8).toString("hex")}-01`;
    const created = await statelessResult(
      frontA,
      "tools/call",
      { name: "ask", arguments: { question: "Ship the release?" } },
      { meta: { ...envelope(), traceparent } },
    );
    const taskId = String(created["taskId"]);
    const asked = await pollUntil(frontB, taskId, (t) => t["status"] === "input_required" || isTerminal(t));
    const [key = ""] = Object.keys((asked["inputRequests"] as object | undefined) ?? {});
    await pause(answerAfterMs);
    await statelessResult(frontB, "tasks/update", { taskId, inputResponses: { [key]: { action: "accept", content: { answer: "yes" } } } });
    const done = await pollUntil(frontB, taskId, isTerminal);
    if (done["status"] !== "completed") throw new Error(`the task ended ${String(done["status"])}`);

    await receiver.span((s) => s.name === "execute_tool ask" && s.traceId === traceId, "the execution span");
    // The last polls are exported within the batch delay (100 ms); wait a few of them.
    await pause(1000);
    const spans = receiver.spans.items
      .filter((s) => s.traceId === traceId || s.links.some((l) => l.traceId === traceId))
      .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, gantt(spans, traceId));
    console.log(`trace ${traceId}, task ${taskId}: ${spans.length} spans`);
    for (const [service, { label }] of Object.entries(PROCESSES)) {
      const own = spans.filter((s) => s.resource["service.name"] === service);
      console.log(`  ${label.padEnd(8)} ${own.map((s) => `${s.name}${s.traceId === traceId ? "" : " (linked)"}`).join(", ")}`);
    }
    console.log(`wrote ${out}`);
  } finally {
    await cluster.stop();
    await receiver.close();
  }
}

/** The chart: a row per span in start order, indented by depth in the trace; linked spans dashed. */
function gantt(spans: ReceivedSpan[], traceId: string): string {
  const rowH = 24;
  const top = 56;
  const left = 270;
  const right = 72;
  const bottom = 78;
  const width = 960;
  const height = top + spans.length * rowH + bottom;
  const f: Frame = { width, height, left, right, top, bottom, plotW: width - left - right, plotH: spans.length * rowH };
  const t0 = spans.reduce((min, s) => (s.startTimeUnixNano < min ? s.startTimeUnixNano : min), spans[0]?.startTimeUnixNano ?? 0n);
  const t1 = spans.reduce((max, s) => (s.endTimeUnixNano > max ? s.endTimeUnixNano : max), t0 + 1n);
  const spanMs = Number(t1 - t0) / 1e6;
  const x = (t: bigint): number => left + (Number(t - t0) / 1e6 / spanMs) * f.plotW;
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const depth = (s: ReceivedSpan): number => {
    let d = 0;
    for (let parent = byId.get(s.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) d++;
    return d;
  };
  const svg = opening(f, "One task's trace across three processes: created on front A, run on the worker, answered and fetched on front B");
  svg.push(
    `<text x="${width / 2}" y="40" text-anchor="middle" fill="#555">trace ${traceId} · demo ask on a PostgreSQL cluster, spans as the OTLP exporters sent them</text>`,
  );
  // Time grid: about eight steps of a round size.
  const step = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000].find((s) => spanMs / s <= 8) ?? 10_000;
  for (let ms = 0; ms <= spanMs; ms += step) {
    const gx = left + (ms / spanMs) * f.plotW;
    svg.push(`<line x1="${gx.toFixed(1)}" y1="${top - 4}" x2="${gx.toFixed(1)}" y2="${top + f.plotH}" stroke="#eee"/>`);
    svg.push(`<text x="${gx.toFixed(1)}" y="${top + f.plotH + 16}" text-anchor="middle" fill="#555">${ms} ms</text>`);
  }
  spans.forEach((s, i) => {
    const y = top + i * rowH;
    const process = PROCESSES[String(s.resource["service.name"])] ?? { label: String(s.resource["service.name"]), color: "#888" };
    const inTrace = s.traceId === traceId;
    const x0 = x(s.startTimeUnixNano);
    const w = Math.max(x(s.endTimeUnixNano) - x0, 2);
    const indent = inTrace ? depth(s) * 14 : 0;
    svg.push(`<text x="${8 + indent}" y="${y + 16}" fill="${process.color}">${escape(process.label)}</text>`);
    svg.push(`<text x="${70 + indent}" y="${y + 16}" font-family="monospace">${escape(s.name)}${inTrace ? "" : " ↗"}</text>`);
    svg.push(
      inTrace
        ? `<rect x="${x0.toFixed(1)}" y="${y + 5}" width="${w.toFixed(1)}" height="${rowH - 10}" fill="${process.color}"/>`
        : `<rect x="${x0.toFixed(1)}" y="${y + 5}" width="${w.toFixed(1)}" height="${rowH - 10}" fill="${process.color}" fill-opacity="0.3" stroke="${process.color}" stroke-dasharray="3 2"/>`,
    );
    const label = `${(Number(s.endTimeUnixNano - s.startTimeUnixNano) / 1e6).toFixed(1)} ms`;
    svg.push(`<text x="${(x0 + w + 4).toFixed(1)}" y="${y + 16}" font-size="10" fill="#555">${label}</text>`);
    for (const event of s.events) {
      const mark = event.name === "mcp.task.input.requested" ? "question" : event.name === "mcp.task.input.answered" ? "answer" : undefined;
      if (!mark) continue;
      const ex = x(event.timeUnixNano);
      svg.push(`<path d="M${ex.toFixed(1)} ${y + 2} l4 5 l-4 5 l-4 -5 z" fill="#222"/>`);
      svg.push(`<text x="${ex.toFixed(1)}" y="${y + 22}" font-size="9" text-anchor="middle">${mark}</text>`);
    }
  });
  const ly = top + f.plotH + 40;
  let lx = left;
  for (const { label, color } of Object.values(PROCESSES)) {
    svg.push(
      `<rect x="${lx}" y="${ly - 10}" width="14" height="12" fill="${color}"/>`,
      `<text x="${lx + 20}" y="${ly}">${escape(label)}</text>`,
    );
    lx += 90;
  }
  svg.push(`<rect x="${lx}" y="${ly - 10}" width="14" height="12" fill="#888" fill-opacity="0.3" stroke="#888" stroke-dasharray="3 2"/>`);
  svg.push(`<text x="${lx + 20}" y="${ly}">↗ a trace of its own, linked to the task's (polls, the answer)</text>`);
  svg.push(
    `<text x="8" y="${ly + 20}" font-size="10" fill="#555">Solid rows are the task's trace, indented by parent: the creating tools/call, then the execution on the worker, a child across processes.</text>`,
  );
  svg.push("</svg>");
  return `${svg.join("\n")}\n`;
}

runBench(main, "trace:svg");
