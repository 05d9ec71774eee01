// Queue control in the web view (GET /tasks/api/queues and the admin actions of queue-control.ts):
// each tool with its queue, paused or not; for admins Pause / Resume / Purge per tool, and Purge
// queued / Retry failed for the tasks the view's filter shows. Mounted by tasks.js after sign-in;
// rendered with textContent only, as the rest of the page.

/** How often the panel reads the queues again while shown (a pause by another node, tasks queued). */
const REFRESH_MS = 2000;

let host = null;
let timer = null;
/** The action clicked once (`key`) and until when a second click confirms it: purge and retry act on many tasks. */
let armed = null;

function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  if (options.text !== undefined) node.textContent = String(options.text);
  if (options.title) node.title = options.title;
  if (options.dataset) Object.assign(node.dataset, options.dataset);
  for (const child of children) if (child) node.append(child);
  return node;
}

/**
 * Shows the panel for a signed-in viewer. `h`: { api(path, init), filterParams(), notice(text), admin }.
 * Called again at each sign-in; {@link unmountQueues} at sign-out.
 */
export function mountQueues(h) {
  host = h;
  const bar = document.getElementById("queue-actions");
  bar.hidden = !h.admin;
  document.getElementById("queues").hidden = false;
  void refresh();
}

export function unmountQueues() {
  host = null;
  clearTimeout(timer);
  timer = null;
  document.getElementById("queues").hidden = true;
  document.getElementById("queue-actions").hidden = true;
}

async function refresh() {
  clearTimeout(timer);
  timer = null;
  if (!host) return;
  try {
    render((await host.api("/tasks/api/queues")).tools);
  } catch (error) {
    document.getElementById("queues-error").textContent = error.message;
  }
  if (host) timer = setTimeout(() => void refresh(), REFRESH_MS);
}

function render(tools) {
  document.getElementById("queues-error").textContent = "";
  const body = document.getElementById("queue-rows");
  const rows = tools.map((tool) =>
    el("div", { className: "queue-row", dataset: { tool: tool.name, paused: String(tool.paused) } }, [
      el("span", { className: "name", text: tool.name }),
      el("span", { className: "state" }, [
        el("span", {
          className: `queue-state ${tool.paused ? "paused" : "running"}`,
          text: tool.paused ? "paused" : "running",
          title: tool.paused
            ? `New tasks are queued and none starts${tool.pausedBy ? ` (paused by ${tool.pausedBy} at ${new Date(tool.pausedAt).toLocaleString()})` : ""}`
            : "Tasks start as slots allow",
        }),
      ]),
      el("span", { className: "queued", text: tool.queued }),
      el("span", { className: "actions" }, host && host.admin ? toolButtons(tool) : []),
    ]),
  );
  body.replaceChildren(...rows);
}

function toolButtons(tool) {
  const buttons = [];
  buttons.push(
    tool.paused
      ? action(
          "Resume",
          "resume",
          `/tasks/api/queues/${encodeURIComponent(tool.name)}/resume`,
          `${tool.name} resumed: its queued tasks start.`,
        )
      : action("Pause", "pause", `/tasks/api/queues/${encodeURIComponent(tool.name)}/pause`, `${tool.name} paused: new tasks are queued.`),
  );
  if (tool.queued > 0) {
    buttons.push(
      action("Purge", "purge", `/tasks/api/queues/${encodeURIComponent(tool.name)}/purge`, null, {
        confirm: `Purge ${tool.queued}?`,
        done: (answer) => `Purged ${answer.purged} queued ${tool.name} task${answer.purged === 1 ? "" : "s"}.`,
      }),
    );
  }
  return buttons;
}

/**
 * A button that POSTs `path` (after a second click when `confirm` is given) and says what happened.
 * The armed state is kept by `key`, not by element: the panel is redrawn every few seconds, and a
 * redraw between the two clicks must not disarm the button.
 */
function action(label, name, path, said, options = {}) {
  const key = `${name} ${path}`;
  const isArmed = () => armed !== null && armed.key === key && armed.until > Date.now();
  const button = el("button", {
    className: `${name === "pause" || name === "purge" ? "danger" : ""}${options.confirm && isArmed() ? " armed" : ""}`,
    text: options.confirm && isArmed() ? options.confirm : label,
    dataset: { action: name },
  });
  button.type = "button";
  button.addEventListener("click", async () => {
    if (options.confirm && !isArmed()) {
      armed = { key, until: Date.now() + 4000 };
      button.textContent = options.confirm;
      button.classList.add("armed");
      return;
    }
    armed = null;
    button.disabled = true;
    try {
      const answer = await host.api(path, { method: "POST" });
      host.notice(options.done ? options.done(answer) : said);
    } catch (error) {
      host.notice(error.message);
    } finally {
      void refresh();
    }
  });
  return button;
}

function disarm(button, label) {
  armed = null;
  button.textContent = label;
  button.classList.remove("armed");
}

/** The toolbar's actions on the view's filter: purge what it shows queued, retry what it shows failed. */
function filterAction(id, path, label, confirm, done) {
  const button = document.getElementById(id);
  button.addEventListener("click", async () => {
    if (!host) return;
    if (armed === null || armed.key !== id || armed.until <= Date.now()) {
      armed = { key: id, until: Date.now() + 4000 };
      button.textContent = confirm;
      button.classList.add("armed");
      setTimeout(() => {
        if (armed !== null && armed.key === id && armed.until <= Date.now()) disarm(button, label);
      }, 4100);
      return;
    }
    disarm(button, label);
    button.disabled = true;
    try {
      host.notice(done(await host.api(`${path}?${host.filterParams()}`, { method: "POST" })));
    } catch (error) {
      host.notice(error.message);
    } finally {
      button.disabled = false;
      void refresh();
    }
  });
}

filterAction(
  "purge-filter",
  "/tasks/api/purge",
  "Purge queued",
  "Purge every queued task shown?",
  (answer) => `Purged ${answer.purged} queued task${answer.purged === 1 ? "" : "s"}${answer.more ? " (more are left: purge again)" : ""}.`,
);
filterAction("retry-filter", "/tasks/api/retry-failed", "Retry failed", "Re-run every failed task shown?", (answer) => {
  const refused = answer.results.filter((result) => result.error).length;
  return `Re-ran ${answer.retried} failed task${answer.retried === 1 ? "" : "s"} as new tasks${refused > 0 ? `; ${refused} refused` : ""}${answer.more ? " (more are left: retry again)" : ""}.`;
});
