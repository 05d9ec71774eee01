import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** The shapes of a protocol wire string: method names, `_meta` keys, the 2026 result discriminator. */
const WIRE_STRINGS = [
  ["^tasks\\x2F", "a tasks/* method name"],
  ["io\\.modelcontextprotocol\\x2F", "an io.modelcontextprotocol/ _meta key"],
  ["^resultType$", "the resultType field"],
  ["^notifications\\x2F", "a notification method name"],
  ["^(tools|sampling|elicitation)\\x2F", "a tools/sampling/elicitation method name"],
];

/**
 * The wire strings of the task eras, which no era-neutral code above the engine may spell (the
 * requestor side: src/client outside its era folders, src/cli; the server's fronts: src/gateway,
 * src/web, src/http): they belong to an era folder (src/client/rev…, src/mcp/rev…). Core MCP
 * names (tools/list, notifications/progress) are the same in every era and stay allowed there.
 * One list, extended by every rule that needs it.
 */
const TASK_WIRE_STRINGS = [
  ["^tasks\\x2F", "a tasks/* method name"],
  ["^notifications\\x2Ftasks", "a task notification name"],
  ["io\\.modelcontextprotocol\\x2F", "an io.modelcontextprotocol/ _meta key"],
  ["^mcp-tasks\\x2F", "one of our own _meta keys"],
  ["^resultType$", "the resultType field"],
  ["^(inputRequests|inputResponses|requestState)$", "a field of the 2026-07-28 input rounds"],
];

function wireStringSelectors(strings = WIRE_STRINGS, where = "src/mcp (the era binding), not below it") {
  return strings.flatMap(([pattern, what]) => [
    { selector: `Literal[value=/${pattern}/]`, message: `${what} is a wire string: it belongs in ${where}` },
    { selector: `TemplateElement[value.raw=/${pattern}/]`, message: `${what} is a wire string: it belongs in ${where}` },
  ]);
}

/** `engine.store` / `x.engine.store`: the engine's store itself. */
const ENGINE_STORE = 'MemberExpression[property.name="store"]:matches([object.name="engine"], [object.property.name="engine"])';

/**
 * Above the runtime the store is read through the engine's read port (`engine.inspect`) and
 * written through its operations; only closing the store it opened is the caller's own business.
 */
const ENGINE_STORE_SELECTORS = [
  {
    selector: `MemberExpression[property.name!="close"] > ${ENGINE_STORE}.object`,
    message: "read the store through engine.inspect (TaskReadPort), write it through the engine's operations",
  },
  {
    selector: `:matches(CallExpression, Property, VariableDeclarator, ReturnStatement) > ${ENGINE_STORE}`,
    message: "hand on engine.inspect (TaskReadPort), not the engine's store",
  },
];

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", ".tmp/", "artifacts/", "api-docs/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        URL: "readonly",
        performance: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        TextEncoder: "readonly",
        fetch: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // Wire strings stay in the binding: below src/mcp the engine speaks in its own operation names
    // (get, list, cancel, …), so a second protocol era is a new folder, not an edit of the engine.
    // The task's `method` is data the binding hands in, never a literal here. ("/" is \x2F: the
    // selector syntax ends a regular expression at the first slash.)
    files: ["src/core/**/*.ts", "src/store/**/*.ts", "src/events/**/*.ts", "src/runtime/**/*.ts"],
    rules: {
      "no-restricted-syntax": ["error", ...wireStringSelectors()],
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/core/**", "src/store/**", "src/events/**", "src/runtime/**"],
    rules: {
      "no-restricted-syntax": ["error", ...ENGINE_STORE_SELECTORS],
    },
  },
  {
    // The server's fronts (the gateway, the web view, the HTTP layer) speak to the eras through
    // their interfaces (src/mcp/era.ts, src/mcp/eras.ts): a task-era wire string here would tie
    // them to one era. (The engine-store rule above holds here too: one rule option per file.)
    files: ["src/gateway/**/*.ts", "src/web/**/*.ts", "src/http/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...ENGINE_STORE_SELECTORS,
        ...wireStringSelectors(
          TASK_WIRE_STRINGS,
          "an era folder (src/mcp/rev…), behind the era interfaces (src/mcp/era.ts), not in the gateway, the web view or the HTTP layer",
        ),
      ],
    },
  },
  {
    // The binding outside its era folders (sessions, tool contexts, the SDK server, the fallback)
    // reaches an era through its interface (src/mcp/era.ts, whose `wire` is the era's codec) and the
    // registry (src/mcp/eras.ts), as the requestor's era-neutral code (src/mcp/requestor/) does
    // through its own (src/mcp/requestor/requestor-eras.ts): a task-era wire string here would tie
    // it to one era. An era's strings are spelled in its wire folder (src/mcp/wire/rev…) and used by
    // its binding folder (src/mcp/rev…) and its requestor folder (src/mcp/requestor/rev…).
    files: ["src/mcp/**/*.ts"],
    ignores: ["src/mcp/rev*/**", "src/mcp/wire/rev*/**", "src/mcp/requestor/rev*/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...ENGINE_STORE_SELECTORS,
        ...wireStringSelectors(
          TASK_WIRE_STRINGS,
          "an era folder (src/mcp/wire/rev…, src/mcp/rev…, src/mcp/requestor/rev…), behind the era interfaces (src/mcp/era.ts, src/mcp/requestor/requestor-era.ts)",
        ),
      ],
    },
  },
  {
    // TaskClient and the CLI speak through the requestor's era registry
    // (src/mcp/requestor/requestor-eras.ts) and each era's features: a task-era wire string here
    // would tie them to one era.
    files: ["src/client/**/*.ts", "src/cli/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...ENGINE_STORE_SELECTORS,
        ...wireStringSelectors(
          TASK_WIRE_STRINGS,
          "an era folder (src/mcp/wire/rev…, src/mcp/requestor/rev…), not in the requestor's era-neutral code",
        ),
      ],
    },
  },
  {
    // No AsyncLocalStorage on the server's request path: on Node 20 and 22 the first storage a
    // request enters switches on promise hooks for the whole process, and every promise after it
    // pays for them. Request-scoped values travel with the request (src/http/request-peer.ts).
    // Allowed where the application's own code is the caller: withTasks around an SDK McpServer,
    // and the CLI's trace context when the OpenTelemetry SDK is off.
    files: ["src/**/*.ts"],
    ignores: ["src/mcp/sdk-server/running-task.ts", "src/mcp/sdk-server/creating-request.ts", "src/cli/traceparent-option.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "node:async_hooks",
              message: "no AsyncLocalStorage on the request path: it switches on process-wide promise hooks (see eslint.config.mjs)",
            },
          ],
        },
      ],
    },
  },
  {
    // The web view's page script runs in the browser.
    files: ["src/web/static/**/*.js"],
    languageOptions: {
      globals: {
        document: "readonly",
        window: "readonly",
        sessionStorage: "readonly",
        requestAnimationFrame: "readonly",
        TextDecoderStream: "readonly",
        URLSearchParams: "readonly",
        console: "readonly",
      },
    },
  },
);
