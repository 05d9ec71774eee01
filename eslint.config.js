import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", ".tmp/", "artifacts/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", setImmediate: "readonly", URL: "readonly", performance: "readonly", AbortController: "readonly", AbortSignal: "readonly", TextEncoder: "readonly", fetch: "readonly" } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
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
