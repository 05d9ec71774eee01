// "Start a tool" (GET /tasks/api/tools, POST /tasks/api/tools/:name/start): the tools served with
// their task support, and for a tool that takes tasks a form drawn from its input schema with the
// same field rules as the answer forms (the page's `elicitationFields`). Fields those rules do not
// cover (objects, free arrays) are typed as JSON. The server checks the arguments against the
// tool's schema and names the field that does not fit. The new task opens at once.

const SUPPORT_TEXT = {
  required: "tasks required",
  optional: "tasks optional",
  forbidden: "forbids tasks: call it from an MCP client",
};

/** Whether the answer forms' rules draw this property (primitives, choices, lists of choices). */
function drawnByForm(field, page) {
  if (!field || typeof field !== "object") return false;
  if (["string", "number", "integer", "boolean"].includes(field.type)) return true;
  if (page.choicesOf(field)) return true;
  return field.type === "array" && page.choicesOf(field.items || {}) !== null;
}

/** Text areas for the properties typed as JSON; returns what reads them (throws on JSON that does not parse). */
function jsonFields(card, schema, names, page) {
  const { el } = page;
  const required = new Set((schema && schema.required) || []);
  const readers = [];
  for (const name of names) {
    const field = schema.properties[name] || {};
    const area = el("textarea", { dataset: { field: name } });
    area.rows = 3;
    area.placeholder = field.type === "array" ? "[ … ]" : field.type === "object" ? "{ … }" : "JSON";
    if (field.default !== undefined) area.value = JSON.stringify(field.default);
    card.append(
      el("label", { className: "field" }, [
        el("span", { text: `${field.title || name}${required.has(name) ? " *" : ""} (JSON)` }),
        area,
        field.description ? el("small", { className: "muted", text: field.description }) : null,
      ]),
    );
    readers.push([
      name,
      () => {
        if (area.value.trim() === "") return undefined;
        try {
          return JSON.parse(area.value);
        } catch {
          throw new Error(`${name}: not JSON`);
        }
      },
    ]);
  }
  return () => Object.fromEntries(readers.map(([name, read]) => [name, read()]).filter(([, value]) => value !== undefined));
}

/** The start form of one tool. */
function startForm(tool, page, session) {
  const { el } = page;
  const form = el("form", { className: "exchange start-form", dataset: { tool: tool.name } });
  form.noValidate = true;
  form.append(
    el("div", { className: "head" }, [
      el("span", { className: "mono", text: tool.name }),
      el("span", { text: SUPPORT_TEXT[tool.taskSupport] }),
    ]),
  );
  if (tool.description) form.append(el("p", { className: "ask", text: tool.description }));
  const schema = tool.inputSchema && typeof tool.inputSchema === "object" ? tool.inputSchema : {};
  const properties = schema.properties || {};
  const names = Object.keys(properties);
  const drawn = names.filter((name) => drawnByForm(properties[name], page));
  const typed = names.filter((name) => !drawn.includes(name));
  const simple = { ...schema, properties: Object.fromEntries(drawn.map((name) => [name, properties[name]])) };
  const collectSimple = page.elicitationFields(form, simple, {});
  const collectTyped = jsonFields(form, schema, typed, page);
  if (names.length === 0) form.append(el("p", { className: "muted", text: "This tool takes no arguments." }));
  let owner = null;
  if (session.admin) {
    owner = el("input", { dataset: { field: "$owner" } });
    owner.placeholder = "nobody (as tasks without authentication)";
    owner.spellcheck = false;
    form.append(
      el("label", { className: "field" }, [
        el("span", { text: "Owner (admins: start it as this principal)" }),
        owner,
        el("small", { className: "muted", text: "An owner key, e.g. local|alice: the task is theirs, as if they had called the tool." }),
      ]),
    );
  }
  const error = el("p", { className: "error", dataset: { role: "start-error" } });
  const submit = el("button", { text: "Start", dataset: { action: "start" } });
  submit.type = "submit";
  form.append(el("div", { className: "answer-actions" }, [submit]), error);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    let body;
    try {
      body = { arguments: { ...collectSimple().content, ...collectTyped() } };
    } catch (failure) {
      error.textContent = failure.message;
      return;
    }
    if (owner && owner.value.trim() !== "") body.owner = owner.value.trim();
    submit.disabled = true;
    try {
      const { task } = await page.api(`/tasks/api/tools/${encodeURIComponent(tool.name)}/start`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      page.applyTask(task, true);
      page.notice(`Started ${tool.name} as ${task.id}.`);
      page.select(task.id);
    } catch (failure) {
      if (failure instanceof page.Unauthorized) return page.signOut(failure.message);
      error.textContent = failure.message;
      submit.disabled = false;
    }
  });
  return form;
}

/** Fills the detail panel with the tool list; a tool's Start opens its form below the list. */
async function showTools(page, session) {
  const { el } = page;
  let tools;
  try {
    ({ tools } = await page.api("/tasks/api/tools"));
  } catch (failure) {
    if (failure instanceof page.Unauthorized) return page.signOut(failure.message);
    page.notice(`Could not list the tools: ${failure.message}`);
    return;
  }
  const panel = page.openPanel();
  const formSlot = el("div", { className: "start-slot" });
  const close = el("button", { className: "ghost close", text: "Close" });
  close.type = "button";
  close.addEventListener("click", page.closeDetail);
  const list = el(
    "ul",
    { className: "tools" },
    tools.map((tool) => {
      const row = el("li", { dataset: { tool: tool.name, support: tool.taskSupport } }, [
        el("span", { className: "mono", text: tool.name }),
        el("span", { className: `support ${tool.taskSupport}`, text: SUPPORT_TEXT[tool.taskSupport] }),
        tool.title || tool.description ? el("small", { className: "muted", text: tool.title || tool.description }) : null,
      ]);
      if (tool.startable) {
        const start = el("button", { className: "ghost", text: "Start…", dataset: { action: "open-start" } });
        start.type = "button";
        start.addEventListener("click", () => {
          formSlot.replaceChildren(startForm(tool, page, session));
          formSlot.scrollIntoView({ block: "nearest" });
          formSlot.querySelector("input, select, textarea")?.focus();
        });
        row.append(start);
      }
      return row;
    }),
  );
  // The chosen tool's form above the list, where the eye is after the click.
  panel.replaceChildren(el("header", {}, [el("h2", { text: "Start a tool" }), close]), formSlot, list);
}

/** Puts a "Start a tool" button in the page's bar; `page` is the page's helpers, `session()` who is signed in. */
export function mountStartTool(page, session) {
  if (document.getElementById("start-tool")) return;
  // The console's own styles, beside the page's (same origin: the page's policy allows them).
  const style = document.createElement("link");
  style.rel = "stylesheet";
  style.href = "/tasks/assets/console.css";
  document.head.append(style);
  const button = page.el("button", { className: "ghost", text: "Start a tool", dataset: { action: "start-tool" } });
  button.id = "start-tool";
  button.type = "button";
  button.addEventListener("click", () => void showTools(page, session()));
  document.getElementById("who").before(button);
}
