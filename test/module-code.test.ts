/**
 * The scanner the lane classifier reads modules with (test/module-code.ts): its run-time imports
 * and its code without comments or literal text, on small texts and, against TypeScript's own
 * parser, on every module under test/.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { OUTSIDE_CODE } from "./lanes.js";
import { moduleCode } from "./module-code.js";

describe("moduleCode", () => {
  it.each([
    ["a default import", 'import pg from "pg";', ["pg"]],
    ["an import for its effects", 'import "./setup.js";', ["./setup.js"]],
    ["named and namespace imports", 'import a, { b, c as d } from "./a.js";\nimport * as e from "./e.js";', ["./a.js", "./e.js"]],
    ["a re-export", 'export { x } from "./x.js";\nexport * from "./y.js";\nexport * as z from "./z.js";', ["./x.js", "./y.js", "./z.js"]],
    ["dynamic imports and require", 'await import("node:child_process");\nconst m = require("pg");', ["node:child_process", "pg"]],
    [
      "type-only imports and exports left out",
      'import type { A } from "./a.js";\nimport { type B, type C } from "./b.js";\nexport type { D } from "./d.js";',
      [],
    ],
    [
      "a value beside type-only names kept",
      'import { type B, c } from "./b.js";\nimport D, { type E } from "./d.js";',
      ["./b.js", "./d.js"],
    ],
    ["a default import named type", 'import type from "./t.js";', ["./t.js"]],
    ["no module for an export of own names", 'export { a };\nconst s = "pg";\nexport const b = "pg";\nexport default "pg";', []],
    [
      "no module for import.meta or a property named import",
      'const u = import.meta.url;\nconst o = { import: "pg" };\no.require("pg");',
      [],
    ],
    [
      "imports in comments, strings and templates left out",
      '// import pg from "pg";\n/* require("pg") */\nconst s = \'import "pg"\';\nconst t = `import("pg") ${1}`;',
      [],
    ],
    ["a regular expression with quotes and slashes", 'const r = /from "pg"|\\/"[/]"/g;\nimport "./after.js";', ["./after.js"]],
    ["a division is not a regular expression", 'const half = a / 2; const third = (b) / 3;\nimport "./after.js";', ["./after.js"]],
    [
      "code inside a template's placeholders, nested",
      'const t = `a ${`b ${await import("./x.js")}`} c ${ { k: 1 }.k }`;\nimport "./after.js";',
      ["./x.js", "./after.js"],
    ],
  ])("%s", (_, text, imports) => {
    expect(moduleCode(text).imports).toEqual(imports);
  });

  it("keeps the code's names and member accesses, never the text of a literal or a comment", () => {
    const { code } = moduleCode(
      '// process.execPath in a comment\nconst a = "process.execPath";\nspawn(process . execPath, [`${process.execPath}`], /x/);',
    );
    expect(code).toBe('const a = "" ; spawn ( process.execPath , [ "" process.execPath "" ] , "" ) ;');
  });
});

/** Every .ts module under `dir`. */
function modulesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modulesUnder(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** What TypeScript's parser finds in `text`: the run-time imports, and whether each {@link OUTSIDE_CODE} name is used. */
function parsed(text: string): { imports: string[]; names: boolean[] } {
  const source = ts.createSourceFile("module.ts", text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const imports: string[] = [];
  let execPath = false;
  let stdio = false;
  const onlyTypes = (elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>): boolean =>
    elements.length > 0 && elements.every((element) => element.isTypeOnly);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            onlyTypes(clause.namedBindings.elements)));
      if (!typeOnly) imports.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined && ts.isNamedExports(node.exportClause) && onlyTypes(node.exportClause.elements));
      if (!typeOnly) imports.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === "require"))
    ) {
      const [first] = node.arguments;
      if (first !== undefined && ts.isStringLiteral(first)) imports.push(first.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      imports.push(node.argument.literal.text); // the scanner cannot tell `import("x")` in a type from a dynamic import
    } else if (ts.isPropertyAccessExpression(node) && node.getText(source).replace(/\s/g, "") === "process.execPath") {
      execPath = true;
    } else if (ts.isIdentifier(node) && node.text === "StdioClientTransport") {
      stdio = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports: imports.sort(), names: [execPath, stdio] };
}

describe("moduleCode against TypeScript's parser", () => {
  const root = import.meta.dirname;

  it.each(modulesUnder(root).map((path) => [path.slice(root.length + 1), path]))("%s", (_, path) => {
    const text = readFileSync(path, "utf8");
    const { imports, code } = moduleCode(text);
    expect({ imports: [...imports].sort(), names: OUTSIDE_CODE.map((name) => name.test(code)) }).toEqual(parsed(text));
  });
});
