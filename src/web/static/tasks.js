// The live task view. Plain browser JavaScript, no build step and no framework: one table, one
// detail panel, one event stream. Data is rendered with textContent only (never innerHTML), so
// whatever a task carries (tool output, error messages) is shown as text, not run as markup.

const TOKEN_KEY = "mcp-tasks.token";
const STATUSES = ["working", "input_required", "completed", "failed", "cancelled"];
const ACTIVE = new Set(["working", "input_required"]);
const PAGE = 100;

const $ = (id) => document.getElementById(id);

const state = {
  token: null,
  session: null,
  /** id → summary of every task shown. */
  tasks: new Map(),
  counts: null,
  filter: { status: "", tool: "", owner: "" },
  nextCursor: null,
  selected: null,
  /** Aborts the event stream of the current sign-in. */
  stream: null,
  retryMs: 1000,
  renderQueued: false,
  /** The task whose Cancel button was clicked once, until when a second click confirms. */
  armed: null,
  detailTimer: null,
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

function query(extra = {}) {
  const params = new URLSearchParams();
  if (state.filter.status) params.set("status", state.filter.status);
  if (state.filter.tool) params.set("tool", state.filter.tool);
  if (state.filter.owner) params.set("owner", state.filter.owner);
  params.set("limit", String(PAGE));
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params.toString();
}

function matchesFilter(task) {
  const f = state.filter;
  return (!f.status || task.status === f.status) && (!f.tool || task.tool === f.tool) && (!f.owner || task.owner === f.owner);
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
  if (session.redacted.length > 0) notice(`Redacted by the server: ${session.redacted.join(", ")}.`);
  openStream();
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.stream?.abort();
  state.stream = null;
  state.token = null;
  state.session = null;
  state.tasks.clear();
  state.selected = null;
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
    const response = await fetch("/tasks/api/events", {
      headers: { authorization: `Bearer ${state.token}` },
      signal: controller.signal,
      cache: "no-store",
    });
    if (response.status === 401) return signOut("The token was refused.");
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
    state.counts = payload;
    renderCounts();
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
  const button = el("button", { className: armed ? "danger armed" : "danger", text: armed ? "Confirm" : "Cancel", dataset: { action: "cancel" } });
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

function renderTable() {
  const body = $("tasks").tBodies[0];
  const rows = sortedTasks().map((task) => {
    const row = el("tr", { dataset: { taskId: task.id, status: task.status, tool: task.tool } }, [
      el("td", {}, [badge(task.status)]),
      el("td", { className: "mono", text: task.tool }),
      el("td", { className: "owner", text: ownerText(task.owner), title: ownerText(task.owner) }),
      el("td", { className: "time", text: formatTime(task.createdAt) }),
      el("td", { className: "time", text: formatTime(task.updatedAt) }),
      el("td", { className: "age", text: formatDuration(ageOf(task)) }),
      el("td", {}, [progressCell(task)]),
      el("td", { className: "msg", text: task.statusMessage || "" }),
      el("td", {}, [ACTIVE.has(task.status) ? cancelButton(task) : null]),
    ]);
    if (task.id === state.selected) row.classList.add("selected");
    row.addEventListener("click", () => select(task.id));
    return row;
  });
  body.replaceChildren(...rows);
  $("empty").hidden = rows.length > 0;
  $("more").hidden = !state.nextCursor;
}

/** The age column ticks for running tasks: a display clock, it asks the server nothing. */
function tickAges() {
  for (const row of $("tasks").tBodies[0].rows) {
    const task = state.tasks.get(row.dataset.taskId);
    if (task && ACTIVE.has(task.status)) row.cells[5].textContent = formatDuration(ageOf(task));
  }
}

// ---- detail panel ----------------------------------------------------------------------------

function select(id) {
  state.selected = id;
  scheduleRender();
  void renderDetail();
}

function closeDetail() {
  state.selected = null;
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
    notice(`Could not load the task: ${error.message}`);
    return;
  }
  if (state.selected !== id) return;
  const panel = $("detail");
  const close = el("button", { className: "ghost close", text: "Close" });
  close.type = "button";
  close.addEventListener("click", closeDetail);
  const parts = [
    el("header", {}, [el("h2", { className: "mono", text: task.tool }), badge(task.status), ACTIVE.has(task.status) ? cancelButton(task) : null, close]),
    el("div", { className: "id mono", text: task.id }),
  ];
  if (task.statusMessage) parts.push(el("p", { text: task.statusMessage }));
  const fields = el("dl");
  const field = (name, value) => fields.append(el("dt", { text: name }), el("dd", { text: value }));
  field("Owner", ownerText(task.owner));
  field("Method", task.method);
  field("Created", formatTime(task.createdAt));
  field("Updated", formatTime(task.updatedAt));
  field(ACTIVE.has(task.status) ? "Age" : "Duration", formatDuration(ageOf(task)));
  field("TTL", task.ttlMs === null ? "unlimited" : formatDuration(task.ttlMs));
  field("Expires", formatTime(task.expiresAt));
  if (task.progress) field("Progress", `${task.progress.progress}${task.progress.total ? ` of ${task.progress.total}` : ""}${task.progress.message ? ` — ${task.progress.message}` : ""}`);
  parts.push(fields);

  parts.push(...section("Arguments", el("pre", { text: json(task.arguments) })));

  if (task.outcome) {
    if (task.outcome.kind === "result") parts.push(...section("Result", el("pre", { text: json(task.outcome.value) })));
    else parts.push(...section("Error", el("pre", { className: "err", text: json(task.outcome.error) })));
  } else if (task.status === "cancelled") {
    parts.push(...section("Result", el("p", { className: "muted", text: "None: the task was cancelled." })));
  }

  if (task.inputs.length > 0) {
    const exchanges = task.inputs.map((input) =>
      el("div", { className: "exchange", dataset: { inputId: input.id } }, [
        el("div", { className: "head" }, [el("span", { className: "mono", text: input.method }), el("span", { text: formatTime(input.createdAt) })]),
        el("pre", { text: json(input.params) }),
        input.answer === null
          ? el("div", { className: "waiting", text: "Waiting for the requestor's answer" })
          : el("pre", { className: input.answer.kind === "error" ? "err" : "", text: json(input.answer.kind === "error" ? input.answer.error : input.answer.value) }),
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
  parts.push(...section("Timeline", timeline));

  panel.replaceChildren(...parts);
  panel.hidden = false;
  document.querySelector(".layout").classList.add("with-detail");
}

// ---- wiring ----------------------------------------------------------------------------------

function onFilterChange() {
  state.filter = { status: $("f-status").value, tool: $("f-tool").value, owner: $("f-owner").value.trim() };
  state.tasks.clear();
  state.nextCursor = null;
  renderCounts();
  scheduleRender();
  void loadSnapshot();
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
  $("filters").addEventListener("reset", () => setTimeout(onFilterChange));
  $("more").addEventListener("click", () => void loadOlder());
  setInterval(tickAges, 1000);

  // A sign-in link (`npm start` prints one): take the token, then drop it from the address bar and history.
  const linked = new URLSearchParams(window.location.hash.slice(1)).get("token");
  if (linked) window.history.replaceState(null, "", window.location.pathname + window.location.search);
  const saved = linked || sessionStorage.getItem(TOKEN_KEY);
  if (saved) signIn(saved).catch(() => signOut("Your session ended; sign in again."));
  else signOut("");
}

start();
