// The live task view. Plain browser JavaScript, no build step and no framework: one table, one
// detail panel, one event stream. Data is rendered with textContent only (never innerHTML), so
// whatever a task carries (tool output, error messages) is shown as text, not run as markup.

import { mountStartTool } from "./start-tool.js";
import { loadTimeline } from "./timeline.js";
import { mountQueues, unmountQueues } from "./queues.js";

const TOKEN_KEY = "mcp-tasks.token";
const STATUSES = ["working", "input_required", "completed", "failed", "cancelled"];
const ACTIVE = new Set(["working", "input_required"]);
const PAGE = 100;

const $ = (id) => document.getElementById(id);

/** The filters, as they appear in the page's URL (`?status=…&tool=…&owner=…&id=…&from=…&to=…&parked=1&task=…`). */
const FILTER_KEYS = ["status", "tool", "owner", "id", "from", "to", "parked"];

function emptyFilter() {
  return { status: "", tool: "", owner: "", id: "", from: "", to: "", parked: "" };
}

const state = {
  token: null,
  session: null,
  /** id → summary of every task shown. */
  tasks: new Map(),
  counts: null,
  filter: emptyFilter(),
  /** Ids ticked for a bulk action. */
  checked: new Set(),
  /** What was typed into a question's form, by input id, so a live redraw of the panel keeps it. */
  drafts: new Map(),
  nextCursor: null,
  selected: null,
  /** Aborts the event stream of the current sign-in. */
  stream: null,
  retryMs: 1000,
  renderQueued: false,
  /** The task whose Cancel button was clicked once, until when a second click confirms. */
  armed: null,
  detailTimer: null,
  /** The charts' numbers, when they were last asked for, and the pending reload. */
  stats: null,
  statsAt: 0,
  statsTimer: null,
  /** A stats request is on its way; and whether the numbers changed meanwhile (reload when it is back). */
  statsLoading: false,
  statsAgain: false,
  /** Cluster mode, admins: the workers, leases and queue (GET /tasks/api/cluster), and its next reload. */
  cluster: null,
  clusterTimer: null,
};

// ---- small helpers ---------------------------------------------------------------------------

function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  if (options.text !== undefined) node.textContent = String(options.text);
  if (options.title) node.title = options.title;
  if (options.dataset) Object.assign(node.dataset, options.dataset);
  for (const child of children) if (child) node.append(child);
  return node;
}

function badge(status) {
  return el("span", { className: `badge ${status}`, dataset: { status } }, [
    el("span", { className: `dot ${status}` }),
    el("span", { text: status.replace("_", " ") }),
  ]);
}

/**
 * How a waiting task waits, beside its status message (which says for what and until when):
 * parked (its handler unloaded until what it waits for arrives) or in memory (holding no slot).
 */
function waitTag(task) {
  if (!task.waitMode || !ACTIVE.has(task.status)) return null;
  const parked = task.waitMode === "parked";
  return el("span", {
    className: `wait ${task.waitMode}`,
    text: parked ? "parked" : "waiting",
    title: parked
      ? "Parked: nothing of it runs or stays in memory until what it waits for arrives; then any node resumes it"
      : "Waiting in its process without holding a handler slot",
    dataset: { waitMode: task.waitMode },
  });
}

function formatTime(ms) {
  if (ms === null || ms === undefined) return "—";
  const date = new Date(ms);
  const today = new Date().toDateString() === date.toDateString();
  const time = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  return today ? time : `${date.toLocaleDateString()} ${time}`;
}

function formatDuration(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

function ageOf(task) {
  return (ACTIVE.has(task.status) ? Date.now() : task.updatedAt) - task.createdAt;
}

function json(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function ownerText(owner) {
  return owner === null ? "—" : owner;
}

/** The owner as a person names it (alice, not local|alice); the server sends both. */
function ownerNameText(task) {
  return task.owner === null ? "—" : task.ownerName || task.owner;
}

/** A `datetime-local` value (local time, as typed) → ms since the epoch, or null. */
function localToMs(value) {
  if (!value) return null;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : null;
}

// ---- API -------------------------------------------------------------------------------------

class Unauthorized extends Error {}

async function api(path, init = {}) {
  const response = await fetch(path, {
    ...init,
    cache: "no-store",
    headers: { ...(init.headers || {}), authorization: `Bearer ${state.token}` },
  });
  if (response.status === 401) throw new Unauthorized("The token was refused.");
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((body.error && body.error.message) || `HTTP ${response.status}`);
  return body;
}

/** The API's filter parameters (times as ms); `withStatus` false for the live stream, whose counts span every status. */
function filterParams(withStatus = true) {
  const f = state.filter;
  const params = new URLSearchParams();
  if (withStatus && f.status) params.set("status", f.status);
  if (f.tool) params.set("tool", f.tool);
  if (f.owner) params.set("owner", f.owner);
  if (f.id) params.set("id", f.id);
  if (f.parked) params.set("parked", "1");
  const from = localToMs(f.from);
  const to = localToMs(f.to);
  if (from !== null) params.set("from", String(from));
  if (to !== null) params.set("to", String(to));
  return params;
}

function query(extra = {}) {
  const params = filterParams();
  params.set("limit", String(PAGE));
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params.toString();
}

/** The same test the server applies, for tasks the live stream brings in. */
function matchesFilter(task) {
  const f = state.filter;
  const from = localToMs(f.from);
  const to = localToMs(f.to);
  return (
    (!f.status || task.status === f.status) &&
    (!f.tool || task.tool === f.tool) &&
    (!f.owner || (task.owner !== null && (task.owner === f.owner || task.ownerName === f.owner))) &&
    (!f.id || task.id.startsWith(f.id)) &&
    (!f.parked || task.waitMode === "parked") &&
    (from === null || task.createdAt >= from) &&
    (to === null || task.createdAt < to)
  );
}

// ---- the URL: filters and the selected task, so a view can be shared and reloaded ------------

function readUrl() {
  const params = new URLSearchParams(window.location.search);
  const filter = emptyFilter();
  for (const key of FILTER_KEYS) filter[key] = (params.get(key) || "").trim();
  state.filter = filter;
  state.selected = params.get("task") || null;
}

function writeUrl() {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) if (state.filter[key]) params.set(key, state.filter[key]);
  if (state.selected) params.set("task", state.selected);
  const search = params.toString();
  const next = window.location.pathname + (search ? `?${search}` : "");
  if (next !== window.location.pathname + window.location.search) window.history.replaceState(null, "", next);
}

/** Puts the filters of `state` into the form (after a sign-in or a deep link). */
function showFilters() {
  const f = state.filter;
  $("f-status").value = f.status;
  // A tool the server no longer serves still filters (old tasks): offer it.
  if (f.tool && ![...$("f-tool").options].some((o) => o.value === f.tool)) {
    const option = el("option", { text: f.tool });
    option.value = f.tool;
    $("f-tool").append(option);
  }
  $("f-tool").value = f.tool;
  $("f-owner").value = f.owner;
  $("f-id").value = f.id;
  $("f-parked").checked = Boolean(f.parked);
  $("f-from").value = f.from;
  $("f-to").value = f.to;
}

// ---- sign in / out ---------------------------------------------------------------------------

async function signIn(token) {
  state.token = token;
  const session = await api("/tasks/api/session");
  sessionStorage.setItem(TOKEN_KEY, token);
  state.session = session;
  $("login").hidden = true;
  $("view").hidden = false;
  $("who").hidden = false;
  $("logout").hidden = false;
  $("who").textContent = session.admin && session.principal !== "admin" ? `${session.principal} (admin)` : session.principal;
  $("f-owner-label").hidden = !session.admin;
  fillFilters(session);
  if (!session.admin) state.filter.owner = "";
  showFilters();
  if (session.redacted.length > 0) notice(`Redacted by the server: ${session.redacted.join(", ")}.`);
  mountStartTool(consolePage(), () => state.session);
  openStream();
  mountQueues({ api, filterParams: () => filterParams(), notice, admin: session.admin });
  // A deep link (?task=…) opens that task's panel, whether or not it is on the first page.
  if (state.selected) void renderDetail();
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  unmountQueues();
  state.stream?.abort();
  state.stream = null;
  state.token = null;
  state.session = null;
  clearTimeout(state.clusterTimer);
  state.clusterTimer = null;
  state.cluster = null;
  state.tasks.clear();
  state.checked.clear();
  $("view").hidden = true;
  $("who").hidden = true;
  $("logout").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
  setLive(false);
  $("token").focus();
}

function fillFilters(session) {
  const status = $("f-status");
  status.replaceChildren(el("option", { text: "any" }));
  status.firstChild.value = "";
  for (const s of STATUSES) {
    const option = el("option", { text: s.replace("_", " ") });
    option.value = s;
    status.append(option);
  }
  const tool = $("f-tool");
  tool.replaceChildren(el("option", { text: "any" }));
  tool.firstChild.value = "";
  for (const name of session.tools) {
    const option = el("option", { text: name });
    option.value = name;
    tool.append(option);
  }
}

function notice(text) {
  const box = $("notice");
  box.textContent = text || "";
  box.hidden = !text;
}

// ---- live stream -----------------------------------------------------------------------------

function setLive(on) {
  const live = $("live");
  live.dataset.state = on ? "on" : "off";
  live.textContent = on ? "live" : "offline";
}

/**
 * Server-sent events read with fetch, so the token goes in the Authorization header (an
 * EventSource cannot send one, and a token in the URL would end up in logs and history).
 * The stream is the only source of updates: no polling. When it drops, reconnect with backoff
 * and reload the snapshot, since events may have been missed meanwhile.
 */
async function openStream() {
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  try {
    const response = await fetch(`/tasks/api/events?${filterParams(false)}`, {
      headers: { authorization: `Bearer ${state.token}` },
      signal: controller.signal,
      cache: "no-store",
    });
    if (response.status === 401) return signOut("The token was refused.");
    if (response.status === 400 || response.status === 403) {
      // A filter the server refuses: say why; retrying the same filter would not help.
      const body = await response.json().catch(() => ({}));
      notice(`Filter refused: ${(body.error && body.error.message) || `HTTP ${response.status}`}`);
      return;
    }
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  } catch (error) {
    if (controller.signal.aborted) return;
    console.warn("event stream failed", error);
  }
  if (controller.signal.aborted || state.stream !== controller) return;
  setLive(false);
  setTimeout(() => state.stream === controller && openStream(), state.retryMs);
  state.retryMs = Math.min(state.retryMs * 2, 15000);
}

function dispatch(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length === 0) return;
  const payload = JSON.parse(data.join("\n"));
  if (event === "ready") {
    state.retryMs = 1000;
    setLive(true);
    void loadSnapshot();
  } else if (event === "task") {
    applyTask(payload, true);
  } else if (event === "counts") {
    const finishedBefore = finishedOf(state.counts);
    state.counts = payload;
    renderCounts();
    // A task finished: the "Finished" chart must show it as soon as the counters do, not up to
    // STATS_EVERY_MS later; other changes (a task started, asked a question) reload the charts at
    // that pace. The page's first counts come with its snapshot, which loads the charts itself.
    if (finishedBefore !== null && finishedOf(payload) !== finishedBefore) void loadStats();
    else loadStatsSoon();
  }
}

function applyTask(task, fromStream) {
  if (!matchesFilter(task)) {
    if (state.tasks.delete(task.id)) scheduleRender();
  } else {
    state.tasks.set(task.id, { ...task, live: fromStream });
    scheduleRender();
  }
  if (task.id === state.selected) refreshDetailSoon();
}

async function loadSnapshot() {
  try {
    const page = await api(`/tasks/api/tasks?${query()}`);
    const incoming = new Map(page.tasks.map((t) => [t.id, t]));
    // Keep what the stream delivered while this page was on its way, where it is newer.
    for (const old of state.tasks.values()) {
      const fresh = incoming.get(old.id);
      if (!matchesFilter(old)) continue;
      if (fresh ? old.updatedAt > fresh.updatedAt : old.live) incoming.set(old.id, old);
    }
    state.tasks = incoming;
    state.nextCursor = page.nextCursor || null;
    state.counts = page.counts;
    renderCounts();
    scheduleRender();
    void loadStats();
  } catch (error) {
    if (error instanceof Unauthorized) return signOut(error.message);
    notice(`Could not load tasks: ${error.message}`);
  }
}

async function loadOlder() {
  if (!state.nextCursor) return;
  try {
    const page = await api(`/tasks/api/tasks?${query({ after: state.nextCursor })}`);
    for (const task of page.tasks) if (!state.tasks.has(task.id)) state.tasks.set(task.id, task);
    state.nextCursor = page.nextCursor || null;
    scheduleRender();
  } catch (error) {
    notice(`Could not load older tasks: ${error.message}`);
  }
}

// ---- rendering -------------------------------------------------------------------------------

function scheduleRender() {
  if (state.renderQueued) return;
  state.renderQueued = true;
  requestAnimationFrame(() => {
    state.renderQueued = false;
    renderTable();
  });
}

function renderCounts() {
  const box = $("counts");
  box.replaceChildren();
  if (!state.counts) return;
  for (const status of STATUSES) {
    const chip = el("button", { className: "count", title: `Show ${status.replace("_", " ")} tasks`, dataset: { status } }, [
      el("span", { className: `dot ${status}` }),
      el("span", { text: status.replace("_", " ") }),
      el("b", { text: state.counts[status] ?? 0 }),
    ]);
    chip.type = "button";
    chip.setAttribute("aria-pressed", String(state.filter.status === status));
    chip.addEventListener("click", () => {
      $("f-status").value = state.filter.status === status ? "" : status;
      onFilterChange();
    });
    box.append(chip);
  }
}

function sortedTasks() {
  return [...state.tasks.values()].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
}

function progressCell(task) {
  const p = task.progress;
  if (!p) return el("span", { className: "muted", text: "—" });
  const known = typeof p.total === "number" && p.total > 0;
  const fraction = known ? Math.min(1, p.progress / p.total) : null;
  const fill = el("div", { className: `fill${task.status === "completed" ? " done" : ""}` });
  fill.style.width = fraction === null ? "100%" : `${Math.round(fraction * 100)}%`;
  if (fraction === null) fill.style.opacity = "0.35";
  const label = known ? `${p.progress}/${p.total}` : String(p.progress);
  return el("div", { className: "progress", title: p.message || label }, [
    el("div", { className: "track" }, [fill]),
    el("small", { text: p.message ? `${label} · ${p.message}` : label }),
  ]);
}

function isArmed(taskId) {
  return state.armed !== null && state.armed.id === taskId && Date.now() < state.armed.until;
}

function cancelButton(task) {
  const armed = isArmed(task.id);
  const button = el("button", {
    className: armed ? "danger armed" : "danger",
    text: armed ? "Confirm" : "Cancel",
    dataset: { action: "cancel" },
  });
  button.type = "button";
  // Two clicks: the first arms cancelling this task for a few seconds, the second cancels. The
  // armed state lives in `state`, not in the button, because live updates redraw the rows.
  button.addEventListener("click", async (event) => {
    event.stopPropagation();
    if (!isArmed(task.id)) {
      state.armed = { id: task.id, until: Date.now() + 4000 };
      button.classList.add("armed");
      button.textContent = "Confirm";
      setTimeout(() => {
        if (state.armed?.id !== task.id) return;
        state.armed = null;
        scheduleRender();
      }, 4000);
      return;
    }
    state.armed = null;
    button.disabled = true;
    try {
      const { task: cancelled } = await api(`/tasks/api/tasks/${encodeURIComponent(task.id)}/cancel`, { method: "POST" });
      applyTask(cancelled, true);
      notice("");
    } catch (error) {
      if (error instanceof Unauthorized) return signOut(error.message);
      notice(`Could not cancel: ${error.message}`);
      button.disabled = false;
    }
  });
  return button;
}

function checkBox(task) {
  const box = el("input", { dataset: { action: "check" } });
  box.type = "checkbox";
  box.checked = state.checked.has(task.id);
  box.setAttribute("aria-label", `Select task ${task.id}`);
  box.addEventListener("click", (event) => event.stopPropagation());
  box.addEventListener("change", () => {
    if (box.checked) state.checked.add(task.id);
    else state.checked.delete(task.id);
    renderBulk();
  });
  return box;
}

function renderTable() {
  const body = $("tasks").tBodies[0];
  const tasks = sortedTasks();
  // A ticked task that left the view (filtered out, expired) is no longer part of a bulk action.
  for (const id of state.checked) if (!state.tasks.has(id)) state.checked.delete(id);
  const rows = tasks.map((task) => {
    const row = el("tr", { dataset: { taskId: task.id, status: task.status, tool: task.tool, waitMode: task.waitMode || "" } }, [
      el("td", { className: "check" }, [checkBox(task)]),
      el("td", { className: "status" }, [badge(task.status)]),
      el("td", { className: "mono tool", text: task.tool }),
      el("td", { className: "owner", text: ownerNameText(task), title: ownerText(task.owner) }),
      el("td", { className: "time created", text: formatTime(task.createdAt) }),
      el("td", { className: "time updated", text: formatTime(task.updatedAt) }),
      el("td", { className: "age", text: formatDuration(ageOf(task)) }),
      el("td", { className: "prog" }, [progressCell(task)]),
      el("td", { className: "msg" }, [waitTag(task), task.statusMessage ? document.createTextNode(task.statusMessage) : null]),
      el("td", { className: "actions" }, [ACTIVE.has(task.status) ? cancelButton(task) : null]),
    ]);
    if (task.id === state.selected) row.classList.add("selected");
    row.addEventListener("click", () => select(task.id));
    return row;
  });
  body.replaceChildren(...rows);
  $("empty").hidden = rows.length > 0;
  $("more").hidden = !state.nextCursor;
  const all = $("check-all");
  all.checked = tasks.length > 0 && tasks.every((t) => state.checked.has(t.id));
  all.indeterminate = !all.checked && tasks.some((t) => state.checked.has(t.id));
  renderBulk();
}

// ---- charts: small inline SVG, drawn from GET /tasks/api/stats ------------------------------

const SVG = "http://www.w3.org/2000/svg";
const STATS_EVERY_MS = 5000;

function svg(tag, attributes = {}, children = []) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) if (child) node.append(child);
  return node;
}

/** How many tasks the counters show as finished (completed, failed or cancelled): the total of the "Finished" chart. */
function finishedOf(counts) {
  return counts ? (counts.completed ?? 0) + (counts.failed ?? 0) + (counts.cancelled ?? 0) : null;
}

/** Reloads the charts' numbers, at most once per STATS_EVERY_MS however often tasks change. */
function loadStatsSoon() {
  if (state.statsTimer) return;
  const wait = Math.max(0, (state.statsAt || 0) + STATS_EVERY_MS - Date.now());
  state.statsTimer = setTimeout(() => {
    state.statsTimer = null;
    void loadStats();
  }, wait);
}

/**
 * Reloads the charts' numbers now. One request at a time: asked again while one is on its way, it
 * reloads once more when that one is back, since the answer on its way may predate the change.
 */
async function loadStats() {
  if (state.statsLoading) {
    state.statsAgain = true;
    return;
  }
  if (state.statsTimer) clearTimeout(state.statsTimer);
  state.statsTimer = null;
  state.statsLoading = true;
  state.statsAt = Date.now();
  try {
    state.stats = await api(`/tasks/api/stats?${filterParams()}`);
  } catch (error) {
    if (error instanceof Unauthorized) {
      state.statsAgain = false;
      return signOut(error.message);
    }
    state.stats = null;
  } finally {
    state.statsLoading = false;
  }
  if (state.statsAgain) {
    state.statsAgain = false;
    void loadStats();
    return;
  }
  renderCharts();
  // Only a cluster has workers; only an admin may see them (the API says 403 to others).
  if (state.stats && typeof state.stats.queueDepth === "number" && state.session && state.session.admin && !state.clusterTimer)
    void loadCluster();
}

// ---- cluster: workers and leases, from GET /tasks/api/cluster --------------------------------

const CLUSTER_EVERY_MS = 5000;

/** Reloads the workers panel, then again every CLUSTER_EVERY_MS while signed in (heartbeats move with no task event). */
async function loadCluster() {
  clearTimeout(state.clusterTimer);
  state.clusterTimer = null;
  const token = state.token;
  try {
    const view = await api("/tasks/api/cluster");
    if (state.token !== token) return;
    state.cluster = view.clustered ? view : null;
  } catch (error) {
    if (error instanceof Unauthorized) return signOut(error.message);
    state.cluster = null;
  }
  renderCluster();
  if (state.cluster && state.token === token) state.clusterTimer = setTimeout(() => void loadCluster(), CLUSTER_EVERY_MS);
}

/** "3.2 s ago" / "in 12 s" relative to the server's clock at the time of the view. */
/** Relative to the absolute time next to it: how long the task (and its result) can still be fetched. */
function expiresIn(at, now) {
  const d = at - now;
  return d > 0 ? `expires in ${formatDuration(d)}` : `expired ${formatDuration(-d)} ago`;
}

function relative(ms, now) {
  const d = ms - now;
  return d >= 0 ? `in ${formatDuration(d)}` : `${formatDuration(-d)} ago`;
}

function renderCluster() {
  const box = $("cluster");
  const view = state.cluster;
  if (!view) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const workerRows = view.workers.map((w) =>
    el("tr", { dataset: { workerId: w.workerId } }, [
      el("td", { className: "mono node", text: w.workerId, title: w.workerId }),
      el("td", { className: "time", text: formatTime(w.startedAt), title: `up ${formatDuration(view.now - w.startedAt)}` }),
      el("td", { className: "time beat", text: relative(w.heartbeatAt, view.now) }),
      el("td", { className: "num", text: w.concurrency }),
      el("td", { className: "num running", text: w.running }),
    ]),
  );
  const leaseRows = [...view.leases]
    .sort((a, b) => (a.since ?? 0) - (b.since ?? 0))
    .map((l) => {
      const row = el("tr", { className: "lease", dataset: { taskId: l.taskId, workerId: l.workerId } }, [
        el("td", { className: "mono", text: l.taskId }),
        el("td", { className: "mono tool", text: l.name }),
        el("td", {}, [badge(l.status)]),
        el("td", { className: "mono node", text: l.workerId, title: l.workerId }),
        el("td", {
          className: "time",
          text: l.since === null ? "—" : formatTime(l.since),
          title: l.since === null ? "" : `for ${formatDuration(view.now - l.since)}`,
        }),
        el("td", { className: `time expiry${l.expiresAt <= view.now ? " expired" : ""}`, text: relative(l.expiresAt, view.now) }),
        el("td", { className: "num", text: l.attempts }),
      ]);
      row.addEventListener("click", () => select(l.taskId));
      return row;
    });
  const head = (...names) =>
    el("thead", {}, [
      el(
        "tr",
        {},
        names.map((n) => el("th", { text: n })),
      ),
    ]);
  const table = (className, names, rows, empty) =>
    rows.length > 0 ? el("table", { className }, [head(...names), el("tbody", {}, rows)]) : el("p", { className: "empty", text: empty });
  box.replaceChildren(
    el("div", { className: "cluster-head" }, [
      el("h3", { text: `Workers · ${view.workers.length} alive` }),
      el("small", {
        className: "muted",
        text: `${view.leases.length}${view.leasesTruncated ? "+" : ""} leases held · ${view.queueDepth} queued · as of ${formatTime(view.now)}`,
      }),
    ]),
    table(
      "workers",
      ["Node", "Started", "Heartbeat", "Concurrency", "Running"],
      workerRows,
      "No worker is alive: queued tasks wait until one starts.",
    ),
    el("h3", { text: "Leases" }),
    table("leases", ["Task", "Tool", "Status", "Worker", "Since", "Expires", "Attempts"], leaseRows, "No task is running on a worker."),
  );
}

function renderCharts() {
  const box = $("charts");
  const stats = state.stats;
  if (!stats) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const span = state.filter.from || state.filter.to ? `${formatTime(stats.from)} – ${formatTime(stats.to)}` : "last hour";
  const charts = [throughputChart(stats, span), durationChart(stats)];
  if (typeof stats.queueDepth === "number") {
    charts.push(
      el("div", { className: "chart card queue", dataset: { chart: "queue" } }, [
        el("h3", { text: "Cluster queue" }),
        el("b", { className: "big", text: stats.queueDepth }),
        el("small", { className: "muted", text: "tasks waiting for a worker (all owners)" }),
      ]),
    );
  }
  if (Array.isArray(stats.queued) && stats.queued.length > 0) charts.push(queueCard(stats.queued));
  box.replaceChildren(...charts);
}

/** Tasks waiting for a handler, per tool and (for admins, who see every owner) per owner. */
function queueCard(queued) {
  const total = queued.reduce((sum, q) => sum + q.queued, 0);
  const rows = [...queued]
    .sort((a, b) => b.queued - a.queued)
    .slice(0, 8)
    .map((q) => el("li", { text: `${q.tool}${state.session && state.session.admin ? ` · ${q.owner ?? "(no owner)"}` : ""}: ${q.queued}` }));
  return el("div", { className: "chart card queue", dataset: { chart: "waiting" } }, [
    el("h3", { text: "Queued" }),
    el("b", { className: "big", text: total }),
    el("small", { className: "muted", text: "tasks waiting for a handler" }),
    el("ul", {}, rows),
  ]);
}

function throughputChart(stats, span) {
  const width = 300;
  const height = 70;
  const buckets = stats.throughput;
  const max = Math.max(1, ...buckets.map((b) => b.completed + b.failed + b.cancelled));
  const slot = width / Math.max(1, buckets.length);
  const bars = [];
  buckets.forEach((bucket, i) => {
    let y = height;
    for (const status of ["completed", "failed", "cancelled"]) {
      const h = (bucket[status] / max) * (height - 4);
      if (h <= 0) continue;
      y -= h;
      bars.push(
        svg(
          "rect",
          {
            x: (i * slot + 1).toFixed(1),
            y: y.toFixed(1),
            width: Math.max(1, slot - 2).toFixed(1),
            height: h.toFixed(1),
            class: `bar ${status}`,
          },
          [svg("title", {}, [document.createTextNode(`${formatTime(bucket.start)}: ${bucket[status]} ${status}`)])],
        ),
      );
    }
  });
  const total = buckets.reduce((sum, b) => sum + b.completed + b.failed + b.cancelled, 0);
  return el("div", { className: "chart card", dataset: { chart: "throughput" } }, [
    el("h3", { text: `Finished · ${span}` }),
    // Stretched to the card (bars only, no text to distort).
    svg("svg", { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none", role: "img", "aria-label": `${total} tasks finished` }, [
      svg("line", { x1: 0, y1: height - 0.5, x2: width, y2: height - 0.5, class: "axis" }),
      ...bars,
    ]),
    el("small", {
      className: "muted",
      text: `${total} finished · peak ${max} per ${formatDuration(stats.bucketMs)}${stats.truncated ? " · newest tasks only" : ""}`,
    }),
  ]);
}

function durationChart(stats) {
  const width = 300;
  const height = 70;
  const bins = stats.durations.histogram;
  const labels = ["≤100 ms", "≤1 s", "≤10 s", "≤1 min", "≤10 min", "≤1 h", ">1 h"];
  const max = Math.max(1, ...bins.map((b) => b.count));
  const slot = width / bins.length;
  const bars = bins.map((bin, i) => {
    const h = (bin.count / max) * (height - 16);
    return svg("g", {}, [
      svg(
        "rect",
        {
          x: (i * slot + 3).toFixed(1),
          y: (height - 12 - h).toFixed(1),
          width: (slot - 6).toFixed(1),
          height: h.toFixed(1),
          class: "bar duration",
        },
        [svg("title", {}, [document.createTextNode(`${labels[i]}: ${bin.count}`)])],
      ),
      svg("text", { x: (i * slot + slot / 2).toFixed(1), y: height - 2, "text-anchor": "middle", class: "tick" }, [
        document.createTextNode(labels[i] || ""),
      ]),
    ]);
  });
  const d = stats.durations;
  const summary =
    d.count === 0
      ? "no finished tasks"
      : `${d.count} runs · p50 ${formatDuration(d.p50)} · p90 ${formatDuration(d.p90)} · max ${formatDuration(d.max)}`;
  return el("div", { className: "chart card", dataset: { chart: "durations" } }, [
    el("h3", { text: "Run time (completed and failed)" }),
    svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": summary }, bars),
    el("small", { className: "muted", text: summary }),
  ]);
}

// ---- bulk actions ----------------------------------------------------------------------------

function renderBulk() {
  const ids = [...state.checked];
  const active = ids.filter((id) => ACTIVE.has(state.tasks.get(id)?.status));
  $("bulk").hidden = ids.length === 0;
  $("bulk-count").textContent = `${ids.length} selected`;
  const button = $("bulk-cancel");
  const armed = isArmed("*bulk*");
  button.textContent = armed ? `Confirm: cancel ${active.length}` : `Cancel ${active.length} running`;
  button.classList.toggle("armed", armed);
  button.disabled = active.length === 0;
}

async function bulkCancel() {
  const ids = [...state.checked].filter((id) => ACTIVE.has(state.tasks.get(id)?.status));
  if (ids.length === 0) return;
  if (!isArmed("*bulk*")) {
    state.armed = { id: "*bulk*", until: Date.now() + 4000 };
    renderBulk();
    setTimeout(renderBulk, 4100);
    return;
  }
  state.armed = null;
  $("bulk-cancel").disabled = true;
  try {
    const { results } = await api("/tasks/api/cancel", { method: "POST", body: JSON.stringify({ ids }) });
    const failed = results.filter((r) => r.error);
    for (const r of results) if (r.task) applyTask(r.task, true);
    state.checked.clear();
    notice(failed.length === 0 ? "" : `Could not cancel ${failed.length} of ${results.length}: ${failed[0].error.message}`);
  } catch (error) {
    if (error instanceof Unauthorized) return signOut(error.message);
    notice(`Could not cancel: ${error.message}`);
  }
  renderBulk();
  scheduleRender();
}

/** The age column ticks for running tasks: a display clock, it asks the server nothing. */
function tickAges() {
  for (const row of $("tasks").tBodies[0].rows) {
    const task = state.tasks.get(row.dataset.taskId);
    if (task && ACTIVE.has(task.status)) row.querySelector("td.age").textContent = formatDuration(ageOf(task));
  }
}

// ---- detail panel ----------------------------------------------------------------------------

function select(id) {
  if (state.selected !== id) state.drafts.clear();
  state.selected = id;
  writeUrl();
  scheduleRender();
  void renderDetail().then(() => {
    // One column (narrow window): the panel is below the table, bring it into view.
    if (window.matchMedia("(max-width: 1100px)").matches) $("detail").scrollIntoView({ block: "start" });
  });
}

function closeDetail() {
  state.selected = null;
  state.drafts.clear();
  writeUrl();
  $("detail").hidden = true;
  document.querySelector(".layout").classList.remove("with-detail");
  scheduleRender();
}

function refreshDetailSoon() {
  clearTimeout(state.detailTimer);
  state.detailTimer = setTimeout(() => void renderDetail(), 100);
}

function section(title, ...content) {
  return [el("h3", { text: title }), ...content];
}

async function renderDetail() {
  const id = state.selected;
  if (!id) return;
  let task;
  try {
    ({ task } = await api(`/tasks/api/tasks/${encodeURIComponent(id)}`));
  } catch (error) {
    if (error instanceof Unauthorized) return signOut(error.message);
    notice(`Could not load the task ${id}: ${error.message}`);
    return;
  }
  if (state.selected !== id) return;
  // A redraw while someone types in a question's form keeps their place.
  const focused = document.activeElement && $("detail").contains(document.activeElement) ? document.activeElement.dataset.field : undefined;
  const panel = $("detail");
  const close = el("button", { className: "ghost close", text: "Close" });
  close.type = "button";
  close.addEventListener("click", closeDetail);
  const parts = [
    el("header", {}, [
      el("h2", { className: "mono", text: task.tool }),
      badge(task.status),
      ACTIVE.has(task.status) ? cancelButton(task) : null,
      !ACTIVE.has(task.status) && task.method === "tools/call" ? rerunButton(task) : null,
      close,
    ]),
    el("div", { className: "id mono", text: task.id }),
  ];
  if (task.statusMessage || waitTag(task))
    parts.push(
      el("p", { className: "status-message" }, [waitTag(task), task.statusMessage ? document.createTextNode(task.statusMessage) : null]),
    );
  const fields = el("dl");
  const field = (name, value) => fields.append(el("dt", { text: name }), el("dd", { text: value }));
  field(
    "Owner",
    task.owner === null ? "—" : task.ownerName && task.ownerName !== task.owner ? `${task.ownerName} (${task.owner})` : task.owner,
  );
  field("Method", task.method);
  field("Created", formatTime(task.createdAt));
  field("Updated", formatTime(task.updatedAt));
  field(ACTIVE.has(task.status) ? "Age" : "Duration", formatDuration(ageOf(task)));
  field("TTL", task.ttlMs === null ? "unlimited" : formatDuration(task.ttlMs));
  field("Expires", task.expiresAt === null ? "never" : `${formatTime(task.expiresAt)} (${expiresIn(task.expiresAt, Date.now())})`);
  if (task.traceId) {
    // Linked only to the operator's own trace viewer (--trace-url, an http(s) template the server checked).
    const trace = task.traceUrl
      ? el("a", { className: "mono trace", text: task.traceId })
      : el("span", { className: "mono trace", text: task.traceId });
    if (task.traceUrl) Object.assign(trace, { href: task.traceUrl, target: "_blank", rel: "noopener noreferrer" });
    fields.append(el("dt", { text: "Trace" }), el("dd", {}, [trace]));
  }
  if (task.progress)
    field(
      "Progress",
      `${task.progress.progress}${task.progress.total ? ` of ${task.progress.total}` : ""}${task.progress.message ? ` — ${task.progress.message}` : ""}`,
    );
  parts.push(fields);

  parts.push(...section("Arguments", el("pre", { text: json(task.arguments) })));

  if (task.outcome) {
    if (task.outcome.kind === "result") parts.push(...section("Result", el("pre", { text: json(task.outcome.value) })));
    else parts.push(...section("Error", el("pre", { className: "err", text: json(task.outcome.error) })));
  } else if (task.status === "cancelled") {
    parts.push(...section("Result", el("p", { className: "muted", text: "None: the task was cancelled." })));
  }

  const pending = task.inputs.filter((input) => input.answer === null);
  if (pending.length > 0 && ACTIVE.has(task.status)) {
    parts.push(
      ...section(
        pending.length === 1 ? "Question waiting for an answer" : `${pending.length} questions waiting for an answer`,
        ...pending.map((input) => questionCard(task, input)),
      ),
    );
  }
  // An admin acts for the approver (or whatever else the task waits for): an event for its owner.
  if (state.session && state.session.admin && task.waitMode && ACTIVE.has(task.status)) {
    parts.push(...section("Emit an event", emitCard(task)));
  }

  const answered = task.inputs.filter((input) => input.answer !== null || !ACTIVE.has(task.status));
  if (answered.length > 0) {
    const exchanges = answered.map((input) =>
      el("div", { className: "exchange", dataset: { inputId: input.id } }, [
        el("div", { className: "head" }, [
          el("span", { className: "mono", text: input.method }),
          el("span", { text: formatTime(input.createdAt) }),
        ]),
        el("pre", { text: json(input.params) }),
        input.answer === null
          ? el("div", { className: "muted", text: "Never answered" })
          : el("pre", {
              className: input.answer.kind === "error" ? "err" : "",
              text: json(input.answer.kind === "error" ? input.answer.error : input.answer.value),
            }),
      ]),
    );
    parts.push(...section("Input requests", ...exchanges));
  }

  const timeline = el(
    "ol",
    { className: "timeline" },
    task.history.map((change) =>
      el("li", { dataset: { status: change.status } }, [
        el("span", { className: `dot ${change.status}` }),
        el("b", { text: change.status.replace("_", " ") }),
        el("span", { className: "when", text: `${formatTime(change.at)} · +${formatDuration(change.at - task.createdAt)}` }),
        change.statusMessage ? el("span", { className: "why", text: change.statusMessage }) : null,
      ]),
    ),
  );
  // The whole timeline (runs, steps, questions, waits, webhooks: timeline.js); the status changes alone if it cannot be had.
  let full;
  try {
    full = await loadTimeline(task, consolePage());
  } catch (error) {
    if (error instanceof Unauthorized) return signOut(error.message);
  }
  if (state.selected !== id) return;
  parts.push(...section("Timeline", full || timeline));

  // Webhook deliveries of this task (docs/webhooks.md); none shown when the server sends none.
  let deliveries = [];
  try {
    ({ deliveries } = await api(`/tasks/api/webhooks?taskId=${encodeURIComponent(id)}`));
  } catch (error) {
    if (error instanceof Unauthorized) return signOut(error.message);
  }
  if (state.selected !== id) return;
  if (deliveries.length > 0) parts.push(...section("Webhook deliveries", deliveryList(deliveries)));

  panel.replaceChildren(...parts);
  panel.hidden = false;
  document.querySelector(".layout").classList.add("with-detail");
  if (focused) [...panel.querySelectorAll("[data-field]")].find((node) => node.dataset.field === focused)?.focus();
}

/** A task's webhook deliveries: event, URL (without its query), state, attempts, last answer, next try; a redeliver button each. */
function deliveryList(deliveries) {
  return el(
    "ol",
    { className: "deliveries" },
    deliveries.map((delivery) => {
      const button = el("button", { className: "ghost", text: "Redeliver", dataset: { action: "redeliver", deliveryId: delivery.id } });
      button.type = "button";
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          await api("/tasks/api/webhooks/redeliver", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ id: delivery.id }),
          });
          notice(`Delivery ${delivery.id} queued again.`);
          renderDetail();
        } catch (error) {
          if (error instanceof Unauthorized) return signOut(error.message);
          notice(`Could not redeliver: ${error.message}`);
          button.disabled = false;
        }
      });
      const last =
        delivery.lastStatus !== null ? `HTTP ${delivery.lastStatus}` : delivery.lastError !== null ? delivery.lastError : "not tried yet";
      return el("li", { dataset: { deliveryId: delivery.id, state: delivery.state } }, [
        el("b", { text: delivery.type }),
        el("span", { className: "mono", text: delivery.url }),
        el("span", { text: `${delivery.state} · ${delivery.attempts} attempt${delivery.attempts === 1 ? "" : "s"} · ${last}` }),
        delivery.nextAttemptAt !== null ? el("span", { className: "when", text: `next try ${formatTime(delivery.nextAttemptAt)}` }) : null,
        delivery.lastError !== null && delivery.lastStatus !== null ? el("span", { className: "why", text: delivery.lastError }) : null,
        button,
      ]);
    }),
  );
}

function rerunButton(task) {
  const button = el("button", {
    className: "ghost",
    text: "Re-run",
    title: "Start a new task with the same tool and arguments",
    dataset: { action: "rerun" },
  });
  button.type = "button";
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const { task: created } = await api(`/tasks/api/tasks/${encodeURIComponent(task.id)}/rerun`, { method: "POST" });
      applyTask(created, true);
      notice(`Re-run of ${task.id} started as ${created.id}.`);
      select(created.id);
    } catch (error) {
      if (error instanceof Unauthorized) return signOut(error.message);
      notice(`Could not re-run: ${error.message}`);
      button.disabled = false;
    }
  });
  return button;
}

// ---- emitting an event for a waiting task (admins) ------------------------------------------

/**
 * A form that emits an event for the task's owner (POST /tasks/api/tasks/:id/events): a name —
 * `approval/<taskId>` to start with, what the demo tool approve waits for — and a JSON payload.
 * Every task of that owner waiting for the name wakes.
 */
function emitCard(task) {
  const key = `emit:${task.id}`;
  const draft = state.drafts.get(key) || {
    name: `approval/${task.id}`,
    payload: JSON.stringify({ approved: true, by: state.session.principal }),
  };
  state.drafts.set(key, draft);
  const card = el("form", { className: "exchange emit", dataset: { taskId: task.id } });
  card.noValidate = true;
  const name = el("input", { dataset: { field: "emit-name" } });
  name.spellcheck = false;
  name.value = draft.name;
  name.addEventListener("input", () => (draft.name = name.value));
  const payload = el("textarea", { className: "mono", dataset: { field: "emit-payload" } });
  payload.rows = 3;
  payload.spellcheck = false;
  payload.value = draft.payload;
  payload.addEventListener("input", () => (draft.payload = payload.value));
  const error = el("p", { className: "error", dataset: { role: "emit-error" } });
  const send = el("button", { text: "Emit event", dataset: { action: "emit" } });
  send.type = "submit";
  card.append(
    el("p", { className: "muted", text: "Wakes every task of this task's owner that waits for an event of this name." }),
    el("label", { className: "field" }, [el("span", { text: "Name" }), name]),
    el("label", { className: "field" }, [el("span", { text: "Payload (JSON)" }), payload]),
    el("div", { className: "answer-actions" }, [send]),
    error,
  );
  card.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    let value = null;
    if (payload.value.trim() !== "") {
      try {
        value = JSON.parse(payload.value);
      } catch {
        error.textContent = "The payload is not JSON.";
        return;
      }
    }
    send.disabled = true;
    try {
      const { woken } = await api(`/tasks/api/tasks/${encodeURIComponent(task.id)}/events`, {
        method: "POST",
        body: JSON.stringify({ name: name.value.trim(), payload: value }),
      });
      state.drafts.delete(key);
      notice(`Emitted ${name.value.trim()}: woke ${woken} task${woken === 1 ? "" : "s"}.`);
      refreshDetailSoon();
    } catch (failure) {
      if (failure instanceof Unauthorized) return signOut(failure.message);
      error.textContent = failure.message;
      send.disabled = false;
    }
  });
  return card;
}

// ---- answering a task's question ------------------------------------------------------------

/** A pending question with its form: fields from the elicitation's requestedSchema, or a text reply for sampling. */
function questionCard(task, input) {
  const card = el("form", { className: "exchange question", dataset: { inputId: input.id } });
  card.noValidate = true;
  card.append(
    el("div", { className: "head" }, [
      el("span", { className: "mono", text: input.method }),
      el("span", { text: formatTime(input.createdAt) }),
    ]),
  );
  card.append(el("div", { className: "waiting", text: "Waiting for an answer: from the requestor, or here" }));
  const draft = state.drafts.get(input.id) || {};
  state.drafts.set(input.id, draft);
  const params = input.params && typeof input.params === "object" ? input.params : null;
  const error = el("p", { className: "error", dataset: { role: "answer-error" } });
  let collect = null;
  if (params === null) {
    card.append(el("p", { className: "muted", text: "The question is redacted by the server: answer it from the client." }));
  } else if (input.method === "elicitation/create") {
    card.append(el("p", { className: "ask", text: params.message || "" }));
    collect = elicitationFields(card, params.requestedSchema, draft);
  } else if (input.method === "sampling/createMessage") {
    for (const message of params.messages || []) {
      const content = Array.isArray(message.content) ? message.content : [message.content];
      const text = content
        .filter((c) => c && c.type === "text")
        .map((c) => c.text)
        .join("\n");
      card.append(el("p", { className: "ask" }, [el("b", { text: `${message.role}: ` }), el("span", { text: text || "(no text)" })]));
    }
    const area = el("textarea", { dataset: { field: "text" } });
    area.rows = 4;
    area.value = draft.text || "";
    area.addEventListener("input", () => (draft.text = area.value));
    card.append(el("label", { className: "field" }, [el("span", { text: "Reply" }), area]));
    collect = () => ({ text: area.value });
  } else {
    card.append(
      el("pre", { text: json(input.params) }),
      el("p", { className: "muted", text: `The web view cannot answer ${input.method}.` }),
    );
  }
  if (collect) {
    const send = async (action) => {
      error.textContent = "";
      const body = { action };
      if (action === "accept") Object.assign(body, collect());
      for (const b of card.querySelectorAll("button")) b.disabled = true;
      try {
        const { task: moved } = await api(`/tasks/api/tasks/${encodeURIComponent(task.id)}/inputs/${encodeURIComponent(input.id)}`, {
          method: "POST",
          body: JSON.stringify(body),
        });
        state.drafts.delete(input.id);
        applyTask(moved, true);
        refreshDetailSoon();
      } catch (failure) {
        if (failure instanceof Unauthorized) return signOut(failure.message);
        error.textContent = failure.message;
        for (const b of card.querySelectorAll("button")) b.disabled = false;
      }
    };
    const button = (text, action, className) => {
      const b = el("button", { className, text, dataset: { action: `answer-${action}` } });
      b.type = action === "accept" ? "submit" : "button";
      if (action !== "accept") b.addEventListener("click", () => void send(action));
      return b;
    };
    card.addEventListener("submit", (event) => {
      event.preventDefault();
      void send("accept");
    });
    const dismiss = button("Cancel", "cancel", "ghost");
    dismiss.title = "Dismiss the question without an answer (the task itself runs on and decides what follows)";
    card.append(
      el("div", { className: "answer-actions" }, [button("Submit", "accept", ""), button("Decline", "decline", "ghost"), dismiss]),
      error,
    );
  }
  return card;
}

/** The choices of an enum field: `enum` (with the legacy `enumNames`), or titled `oneOf`/`anyOf` consts; null for a free field. */
function choicesOf(field) {
  if (Array.isArray(field.enum)) return field.enum.map((value, i) => ({ value, title: (field.enumNames && field.enumNames[i]) || value }));
  const titled = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : null;
  return titled ? titled.map((option) => ({ value: option.const, title: option.title || option.const })) : null;
}

/** Form fields for the primitive properties of a requested schema; returns what collects their values. */
function elicitationFields(card, schema, draft) {
  const properties = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const readers = [];
  for (const [name, field] of Object.entries(properties)) {
    const label = `${field.title || name}${required.has(name) ? " *" : ""}`;
    const choices = choicesOf(field);
    let control;
    let read;
    if (field.type === "boolean") {
      // Yes, No, or no answer yet: a box that is simply unticked would answer "No" for the person.
      // Only the schema's default comes chosen; without one the field starts unanswered.
      control = el("select", { dataset: { field: name } });
      for (const [value, text] of [
        ["", "—"],
        ["true", "Yes"],
        ["false", "No"],
      ]) {
        const option = el("option", { text });
        option.value = value;
        control.append(option);
      }
      control.value = name in draft ? draft[name] : typeof field.default === "boolean" ? String(field.default) : "";
      control.addEventListener("change", () => (draft[name] = control.value));
      // An unanswered field is left out (the server then names a required one as missing).
      read = () => (control.value === "" ? undefined : control.value === "true");
    } else if (field.type === "array") {
      const options = choicesOf(field.items || {}) || [];
      const picked = new Set(draft[name] || field.default || []);
      control = el("span", { className: "choices" });
      const boxes = options.map((option) => {
        const box = el("input", { dataset: { field: `${name}:${option.value}` } });
        box.type = "checkbox";
        box.checked = picked.has(option.value);
        box.addEventListener("change", () => (draft[name] = boxes.filter((b) => b.checked).map((b) => b.value)));
        box.value = option.value;
        control.append(el("label", {}, [box, el("span", { text: option.title })]));
        return box;
      });
      read = () => boxes.filter((b) => b.checked).map((b) => b.value);
    } else if (choices) {
      control = el("select", { dataset: { field: name } });
      control.append(el("option", { text: "—" }));
      control.firstChild.value = "";
      for (const choice of choices) {
        const option = el("option", { text: choice.title });
        option.value = choice.value;
        control.append(option);
      }
      control.value = draft[name] ?? field.default ?? "";
      control.addEventListener("change", () => (draft[name] = control.value));
      read = () => (control.value === "" ? undefined : control.value);
    } else {
      control = el("input", { dataset: { field: name } });
      const numeric = field.type === "number" || field.type === "integer";
      control.type = numeric
        ? "number"
        : field.format === "email"
          ? "email"
          : field.format === "uri"
            ? "url"
            : field.format === "date"
              ? "date"
              : "text";
      if (field.type === "integer") control.step = "1";
      if (typeof field.minimum === "number") control.min = String(field.minimum);
      if (typeof field.maximum === "number") control.max = String(field.maximum);
      control.value = draft[name] ?? (field.default !== undefined ? String(field.default) : "");
      control.addEventListener("input", () => (draft[name] = control.value));
      read = () => {
        // An empty box is an unanswered field (the server then names a required one as missing).
        if (control.value === "") return undefined;
        return numeric ? Number(control.value) : control.value;
      };
    }
    readers.push([name, read]);
    card.append(
      el("label", { className: "field" }, [
        el("span", { text: label }),
        control,
        field.description ? el("small", { className: "muted", text: field.description }) : null,
      ]),
    );
  }
  return () => {
    const content = {};
    for (const [name, read] of readers) {
      const value = read();
      if (value !== undefined) content[name] = value;
    }
    return { content };
  };
}

// ---- the console's modules (start-tool.js, timeline.js) -------------------------------------

/** The page's helpers the console's modules draw and act with. */
function consolePage() {
  return {
    el,
    api,
    Unauthorized,
    signOut,
    notice,
    applyTask,
    select,
    closeDetail,
    json,
    formatTime,
    formatDuration,
    choicesOf,
    elicitationFields,
    /** The detail panel, emptied and shown for something other than a task (the selection is dropped). */
    openPanel() {
      if (state.selected) closeDetail();
      const panel = $("detail");
      panel.replaceChildren();
      panel.hidden = false;
      document.querySelector(".layout").classList.add("with-detail");
      return panel;
    },
  };
}

// ---- wiring ----------------------------------------------------------------------------------

function onFilterChange() {
  const next = {
    status: $("f-status").value,
    tool: $("f-tool").value,
    owner: state.session && state.session.admin ? $("f-owner").value.trim() : "",
    id: $("f-id").value.trim(),
    from: $("f-from").value,
    to: $("f-to").value,
    parked: $("f-parked").checked ? "1" : "",
  };
  const countsChange = FILTER_KEYS.some((key) => key !== "status" && next[key] !== state.filter[key]);
  state.filter = next;
  writeUrl();
  state.tasks.clear();
  state.nextCursor = null;
  notice("");
  renderCounts();
  scheduleRender();
  // The live stream counts by the filters (all but status): a new filter needs a new stream, whose `ready` reloads the page.
  if (countsChange) openStream();
  else void loadSnapshot();
}

function start() {
  $("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    $("token").value = "";
    $("login-error").textContent = "";
    try {
      await signIn(token);
    } catch (error) {
      signOut(error instanceof Unauthorized ? "That token was refused." : `Could not sign in: ${error.message}`);
    }
  });
  $("logout").addEventListener("click", () => signOut(""));
  $("f-status").addEventListener("change", onFilterChange);
  $("f-tool").addEventListener("change", onFilterChange);
  $("f-owner").addEventListener("change", onFilterChange);
  $("f-id").addEventListener("change", onFilterChange);
  // The search box's clear (×) button fires "search", not "change".
  $("f-id").addEventListener("search", onFilterChange);
  $("f-owner").addEventListener("search", onFilterChange);
  $("f-from").addEventListener("change", onFilterChange);
  $("f-to").addEventListener("change", onFilterChange);
  $("f-parked").addEventListener("change", onFilterChange);
  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    onFilterChange();
  });
  $("filters").addEventListener("reset", () => setTimeout(onFilterChange));
  $("check-all").addEventListener("change", () => {
    for (const task of state.tasks.values()) {
      if ($("check-all").checked) state.checked.add(task.id);
      else state.checked.delete(task.id);
    }
    scheduleRender();
  });
  $("bulk-cancel").addEventListener("click", () => void bulkCancel());
  $("bulk-clear").addEventListener("click", () => {
    state.checked.clear();
    scheduleRender();
  });
  readUrl();
  $("more").addEventListener("click", () => void loadOlder());
  setInterval(tickAges, 1000);

  // A sign-in link (`npm start` prints one): take the token, then drop it from the address bar and history.
  const linked = new URLSearchParams(window.location.hash.slice(1)).get("token");
  if (linked) window.history.replaceState(null, "", window.location.pathname + window.location.search);
  const saved = linked || sessionStorage.getItem(TOKEN_KEY);
  if (saved) {
    signIn(saved).catch((error) => {
      // A link's token was never signed in with: it was not accepted (a link `serve` printed lasts one run).
      if (!(error instanceof Unauthorized)) signOut(`Could not sign in: ${error.message}`);
      else
        signOut(
          linked
            ? "The token in this link was not accepted; sign in with a valid token (a link printed by serve works only until it restarts)."
            : "Your session ended; sign in again.",
        );
    });
  } else signOut("");
}

start();
