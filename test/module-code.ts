/**
 * What a TypeScript or JavaScript module's code says, apart from its comments and the text of its
 * strings, template literals and regular expressions: the modules it loads when it runs, and its
 * code as plain text. test/lanes.ts classifies a test file by these, so a URL in a string or a word
 * in a comment never decides where the file runs.
 *
 * A small scanner rather than TypeScript's parser: the vitest config classifies every test file at
 * each start, and loading the compiler would add over a second to it. test/module-code.test.ts
 * checks that this scanner finds exactly what TypeScript's parser finds in every module under test/.
 */

export interface ModuleCode {
  /**
   * The specifiers of the modules the code loads at run time: `import` and `export … from`
   * declarations (`import type` and `export type` left out), `import("x")` and `require("x")`. An
   * `import("x")` in a type is read as a dynamic import too: it may count a module that is never
   * loaded, never miss one that is.
   */
  readonly imports: string[];
  /**
   * The code's words and punctuation separated by spaces (a member access kept whole:
   * `process.execPath`), without comments, and every string, template or regular expression as `""`.
   */
  readonly code: string;
}

type Token = { kind: "word" | "punct"; text: string } | { kind: "string"; text: string };

/** Words after which a `/` starts a regular expression rather than a division. */
const BEFORE_EXPRESSION = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

/** Word characters beyond ASCII (identifiers may use any letter). */
const WIDE_WORD_CHAR = /[\p{ID_Continue}\u200c\u200d]/u;

/** Whether the character at `at` belongs to a word (an identifier, a keyword, a number). */
function isWordChar(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  if (code < 128)
    return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95 || code === 36;
  return WIDE_WORD_CHAR.test(text[at] ?? "");
}

/** The end of the word that starts at `at`. */
function wordEnd(text: string, at: number): number {
  let end = at;
  while (end < text.length && isWordChar(text, end)) end++;
  return end;
}

/** The words, punctuation and literals of `text`, comments left out (a literal's text kept only for strings). */
function tokens(text: string): Token[] {
  const out: Token[] = [];
  // For each template literal being read, the depth of `{` inside its current `${…}`.
  const templates: number[] = [];
  let i = 0;

  /** Reads a string literal opened by `quote` at `i`; returns its value (escapes kept as written). */
  const readString = (quote: string): string => {
    const start = ++i;
    while (i < text.length && text[i] !== quote && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1;
    return text.slice(start, i++);
  };

  /** Skips template text from `i` up to and past the closing backquote, or into a `${`. */
  const readTemplateText = (): void => {
    while (i < text.length) {
      const c = text[i];
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        return;
      } else if (c === "$" && text[i + 1] === "{") {
        i += 2;
        templates.push(0);
        return;
      } else i++;
    }
  };

  const regexAllowed = (): boolean => {
    const last = out[out.length - 1];
    if (last === undefined) return true;
    if (last.kind === "string") return false;
    if (last.kind === "word") return BEFORE_EXPRESSION.has(last.text);
    return !")]}".includes(last.text);
  };

  const readRegex = (): void => {
    i++;
    let inClass = false;
    while (i < text.length && text[i] !== "\n") {
      const c = text[i];
      if (c === "\\") i++;
      else if (c === "[") inClass = true;
      else if (c === "]") inClass = false;
      else if (c === "/" && !inClass) break;
      i++;
    }
    i++;
    i = wordEnd(text, i); // flags
  };

  while (i < text.length) {
    const c = text[i] ?? "";
    const next = text[i + 1];
    if (c === " " || c === "\n" || c === "\t" || c === "\r" || /\s/.test(c)) i++;
    else if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === "/" && regexAllowed()) {
      readRegex();
      out.push({ kind: "string", text: "" }); // a value, like a literal: a `/` after it divides
    } else if (c === '"' || c === "'") {
      out.push({ kind: "string", text: readString(c) });
    } else if (c === "`") {
      i++;
      readTemplateText();
      out.push({ kind: "string", text: "" });
    } else if (c === "}" && templates.length > 0 && templates[templates.length - 1] === 0) {
      templates.pop();
      i++;
      readTemplateText();
      out.push({ kind: "string", text: "" }); // the template's text after a placeholder: a value again
    } else if (isWordChar(text, i)) {
      const end = wordEnd(text, i);
      out.push({ kind: "word", text: text.slice(i, end) });
      i = end;
    } else {
      if (templates.length > 0 && (c === "{" || c === "}")) templates[templates.length - 1]! += c === "{" ? 1 : -1;
      out.push({ kind: "punct", text: c });
      i++;
    }
  }
  return out;
}

/**
 * The module an `import … from "x"` or `export … from "x"` declaration starting at `at` loads, or
 * null when it loads none at run time: a type-only import or export (`import type`, every name
 * marked `type`), or an export of the module's own names.
 */
function declarationSpecifier(list: Token[], at: number): string | null {
  const keyword = list[at]!.text;
  let j = at + 1;
  if (keyword === "import" && list[j]?.kind === "string") return list[j]!.text; // import "x": for its effects
  // `import type X from`, `import type { … } from`, `export type { … } from` (`import type from "x"`
  // imports a default export named `type`).
  if (list[j]?.text === "type" && list[j + 1]?.text !== "from" && list[j + 1]?.text !== ",") return null;
  if (keyword === "export" && list[j]?.text !== "{" && list[j]?.text !== "*") return null; // export const, function, default…
  // The clause: a default name, `* as name`, `{ a, type B, c as d }`, joined by commas.
  const named: string[] = [];
  for (; j < list.length; j++) {
    const token = list[j]!;
    if (token.kind === "word" && token.text === "from" && list[j + 1]?.kind === "string") break;
    if (token.text === "{") {
      let entry: string[] = [];
      for (j++; j < list.length && list[j]!.text !== "}"; j++) {
        if (list[j]!.text === ",") {
          named.push(entry.join(" "));
          entry = [];
        } else entry.push(list[j]!.text);
      }
      named.push(entry.join(" "));
      continue;
    }
    if (token.kind === "string" || !(token.kind === "word" || token.text === "," || token.text === "*")) return null;
  }
  const specifier = list[j + 1];
  if (specifier?.kind !== "string") return null;
  const entries = named.filter((entry) => entry !== "");
  const onlyTypes = entries.length > 0 && entries.every((entry) => entry.startsWith("type ")) && list[at + 1]?.text === "{";
  return onlyTypes ? null : specifier.text;
}

/** Whether `token` is the `.` of a member access. */
function isDot(token: Token | undefined): boolean {
  return token?.kind === "punct" && token.text === ".";
}

/** Reads `text` (TypeScript or JavaScript) for its run-time imports and its code. */
export function moduleCode(text: string): ModuleCode {
  const list = tokens(text);
  const imports: string[] = [];
  list.forEach((token, at) => {
    if (token.kind !== "word") return;
    const before = list[at - 1];
    if (before?.kind === "punct" && before.text === ".") return; // a property named import or require
    const after = list[at + 1];
    const called = after?.kind === "punct" && after.text === "(" && list[at + 2]?.kind === "string" ? list[at + 2]!.text : null;
    if (token.text === "import" && after?.text === "(") {
      if (called !== null) imports.push(called);
    } else if (token.text === "require" && called !== null) {
      imports.push(called);
    } else if ((token.text === "import" && after?.text !== ".") || token.text === "export") {
      const specifier = declarationSpecifier(list, at);
      if (specifier !== null) imports.push(specifier);
    }
  });
  const code = list.reduce((text, token, at) => {
    const word = token.kind === "string" ? '""' : token.text;
    const joined = at === 0 || isDot(token) || isDot(list[at - 1]);
    return joined ? text + word : `${text} ${word}`;
  }, "");
  return { imports, code };
}
