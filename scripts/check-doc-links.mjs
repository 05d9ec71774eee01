#!/usr/bin/env node
// Checks that every relative link and #anchor in the repository's Markdown resolves: README.md,
// the top-level guides and docs/**/*.md. Anchors follow GitHub's heading slugs (lower case, spaces
// to hyphens, punctuation dropped, "-1", "-2", … for repeats), so a link that works here works on
// GitHub. Prints each broken link as file:line and exits 1 when there is one.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TOP_LEVEL = ["README.md", "CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md"];

/** Every Markdown file under `dir`, recursively. */
function markdownUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

/** The lines of a Markdown file outside fenced code blocks, with their 1-based numbers. */
function proseLines(text) {
  const lines = [];
  let fence = null;
  text.split("\n").forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker[0];
      else if (marker[0] === fence) fence = null;
      return;
    }
    if (fence === null) lines.push({ line, number: index + 1 });
  });
  return lines;
}

/** GitHub's slug of a heading's text. */
function slug(heading) {
  const text = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`/g, "");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

const anchorCache = new Map();

/** The anchors a Markdown file defines: its headings' slugs and explicit id/name attributes. */
function anchorsOf(file) {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const anchors = new Set();
  const seen = new Map();
  for (const { line } of proseLines(readFileSync(file, "utf8"))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** The link targets of a line: inline links and images, outside inline code spans. */
function targetsOf(line) {
  const prose = line.replace(/`+[^`]*`+/g, "");
  const targets = [];
  for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
  const reference = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(prose)?.[1];
  if (reference !== undefined) targets.push(reference);
  return targets;
}

const files = [...TOP_LEVEL.map((name) => join(root, name)).filter((path) => existsSync(path)), ...markdownUnder(join(root, "docs"))];
const broken = [];
for (const file of files) {
  for (const { line, number } of proseLines(readFileSync(file, "utf8"))) {
    for (const target of targetsOf(line)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …: not ours to check
      const [path = "", anchor] = target.split("#", 2);
      const resolved = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${relative(root, file)}:${number}`;
      if (!existsSync(resolved)) {
        broken.push(`${where}: ${target}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) {
        broken.push(`${where}: ${target}: an anchor into something that is not a Markdown file`);
        continue;
      }
      if (!anchorsOf(resolved).has(decodeURIComponent(anchor))) broken.push(`${where}: ${target}: no heading with that anchor`);
    }
  }
}

if (broken.length > 0) {
  process.stderr.write(`${broken.length} broken link(s):\n${broken.map((b) => `  ${b}`).join("\n")}\n`);
  process.exit(1);
}
process.stdout.write(`doc links: ${files.length} files checked, every relative link and anchor resolves\n`);
