#!/usr/bin/env node
/**
 * Checks the repository's own documentation: README.md and every docs/**\/*.md file.
 *
 * - Every relative link (`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`, reference
 *   definitions `[id]: path`) must resolve to an existing file or folder; a `#fragment` on a
 *   Markdown target must name one of its headings, slugged as GitHub does (lower case, punctuation
 *   dropped, spaces to hyphens, `-1`, `-2`… for repeated headings) or an explicit `<a id>`/`<a name>`.
 * - No text may point outside the repository into a sibling `shared` folder (the pattern built in
 *   FORBIDDEN below): the repository must stand alone.
 * - No file under src/, test/, scripts/, bench/, docs/, nor README.md, CHANGELOG.md or
 *   .spectral.yaml, may cite a document users do not have — the upper-case word of the internal
 *   specification's name, or a `§` section of a specification or of "conventions" (the patterns
 *   built in CITATIONS below) — nor an issue number: a reference names a page of docs/ or states
 *   the rule in words.
 * - Every `docs/<file>.md`, `docs/<file>.md#<anchor>`, `README.md#<anchor>` or `docs/<folder>/`
 *   that a comment or string in src/, test/, scripts/, bench/ or .spectral.yaml names must exist,
 *   relative to the repository root, with the anchor one of the file's headings (the same slugs as
 *   links).
 * Links inside fenced code blocks and inline code are ignored; absolute URLs (`https:`, `mailto:`)
 * are not fetched.
 *
 * Usage: `node scripts/check-docs.mjs [repository root]` (default: the parent of this folder).
 * Prints one line per problem (`file:line: message`) and exits 1 when there is any, else 0.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
/** Text that must never appear: a path into a `shared` folder beside the repository. */
const FORBIDDEN = new RegExp(['\\.\\.', 'shared'].join('\\/'));

/** README.md plus every Markdown file under docs/, as absolute paths. */
function documentationFiles() {
  const files = [];
  const readme = join(root, 'README.md');
  if (existsSync(readme)) files.push(readme);
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk(join(root, 'docs'));
  return files.sort();
}

/**
 * The lines of a Markdown text with fenced code blocks blanked out (so line numbers stay right);
 * inline code spans are removed too unless `keepInlineCode` (headings keep their code text).
 */
function proseLines(text, keepInlineCode = false) {
  let fence = null;
  return text.split('\n').map((line) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      // a closing fence: the same character, at least as long, nothing after it
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length && marker[2].trim() === '') fence = null;
      return '';
    }
    if (marker) {
      fence = marker[1];
      return '';
    }
    return keepInlineCode ? line : line.replace(/(`+)[\s\S]*?\1/g, '');
  });
}

/** The visible text of a heading: links reduced to their text, emphasis and code marks dropped. */
function headingText(raw) {
  return (
    raw
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/`/g, '')
      .replace(/\*\*|\*|~~/g, '')
      // `_` marks emphasis only at a word's edge; inside a word (snake_case) it is text
      .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1')
      .trim()
  );
}

/** GitHub's heading slug (as github-slugger): lower case, drop all but letters, marks, numbers, `_`, `-` and spaces; spaces become `-`. */
function slug(text) {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map();

/** Every anchor a Markdown file defines: heading slugs (with GitHub's `-N` suffixes) and `<a id|name>`. */
function anchorsOf(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const anchors = new Set();
  const seen = new Map();
  const add = (base) => {
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  };
  const lines = proseLines(readFileSync(file, 'utf8'), true);
  lines.forEach((line, i) => {
    const atx = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) add(slug(headingText(atx[1])));
    else if (
      i + 1 < lines.length &&
      line.trim() !== '' &&
      /^\s{0,3}(=+|-+)\s*$/.test(lines[i + 1]) &&
      !/^\s{0,3}([-*_]\s*){3,}$/.test(line) &&
      !/^\s*[|>-]/.test(line)
    ) {
      add(slug(headingText(line)));
    }
    for (const match of line.matchAll(/<a\s+[^>]*?(?:id|name)\s*=\s*["']([^"']+)["']/gi)) anchors.add(match[1]);
  });
  anchorCache.set(file, anchors);
  return anchors;
}

/** The link targets of one prose line: inline links/images and reference definitions. */
function targetsOf(line) {
  const targets = [];
  for (const match of line.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+["'][^"']*["'])?\s*\)/g)) targets.push(match[1]);
  const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+["'(].*)?$/.exec(line);
  if (definition) targets.push(definition[1]);
  return targets;
}

const problems = [];
const files = documentationFiles();
for (const file of files) {
  const name = relative(root, file);
  const text = readFileSync(file, 'utf8');
  text.split('\n').forEach((line, i) => {
    if (FORBIDDEN.test(line))
      problems.push(`${name}:${i + 1}: refers to a path outside the repository (${FORBIDDEN.exec(line)[0]}); the repository must stand alone`);
  });
  proseLines(text).forEach((line, i) => {
    for (const target of targetsOf(line)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // absolute URL
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash)).split('?')[0];
      const fragment = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const destination = pathPart === '' ? file : resolve(dirname(file), pathPart);
      const where = `${name}:${i + 1}`;
      if (relative(root, destination).startsWith('..')) {
        problems.push(`${where}: link ${target} leaves the repository`);
        continue;
      }
      if (!existsSync(destination)) {
        problems.push(`${where}: link ${target}: ${relative(root, destination)} does not exist`);
        continue;
      }
      if (fragment === undefined || fragment === '') continue;
      if (statSync(destination).isDirectory() || !destination.endsWith('.md')) continue;
      if (!anchorsOf(destination).has(fragment)) problems.push(`${where}: link ${target}: no heading #${fragment} in ${relative(root, destination)}`);
    }
  });
}

/** Folders and files no text of which may cite a document users do not have or an issue number. */
const CITATION_SCOPE = ['src', 'test', 'scripts', 'bench', 'docs', 'README.md', 'CHANGELOG.md', '.spectral.yaml'];
/** Folders whose comments and strings may name docs/ pages: every such reference must resolve. */
const REFERENCE_SCOPE = ['src', 'test', 'scripts', 'bench', '.spectral.yaml'];
/** The files read: source, scripts, Markdown and data in text form. */
const TEXT_FILE = /\.(ts|mts|cts|js|mjs|cjs|sh|md|json|ya?ml)$/;
/** Folders never read: dependencies, build output and dot-folders (caches, worktrees). */
const SKIPPED_FOLDER = /^(node_modules|dist|coverage|\..*)$/;
/** The upper-case name of the internal specification, assembled so that this file does not cite it. */
const CONTRACT_NAME = ['S', 'PEC'].join('');
/** Citation patterns (assembled from parts, so that this file passes its own check), each with the fix. */
const CITATIONS = [
  [
    new RegExp(`\\b${CONTRACT_NAME}\\b`),
    `cites the internal specification (${CONTRACT_NAME}), which users do not have; link docs/<page>.md#<anchor> or state the rule in words`,
  ],
  [
    new RegExp(['\\b(spec|specification|conventions)\\s*', '§\\s*\\d'].join(''), 'i'),
    'cites a section (§) of a document users do not have; link docs/<page>.md#<anchor> or state the rule in words',
  ],
  [new RegExp(['\\bissues?\\s+#?', '\\d'].join(''), 'i'), 'cites an issue number; say what is meant instead'],
];
/** A repository-relative reference to the documentation: `docs/…` or `README.md`, with an optional `#anchor`. */
const DOC_REFERENCE = /(?<![\w./-])(docs(?:\/[\w.-]*)*|README\.md)(#[\p{L}\p{N}_-]+)?/gu;

/** Every text file under the repository-relative `entries` (folders walked, files taken as they are), as absolute paths. */
function textFiles(entries) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDER.test(entry.name)) walk(path);
      } else if (entry.isFile() && TEXT_FILE.test(entry.name)) files.push(path);
    }
  };
  for (const entry of entries) {
    const path = join(root, entry);
    if (!existsSync(path)) continue;
    if (statSync(path).isDirectory()) walk(path);
    else files.push(path);
  }
  return files.sort();
}

/**
 * The problem with one documentation reference found in a source file (`target` as written, without
 * trailing sentence punctuation), or undefined when it resolves. Only `.md` files and folders are
 * references: `docs/openapi.json` and the like are HTTP paths of the service, not files.
 */
function referenceProblem(target, fragment) {
  const isFolder = target === 'docs' || target.endsWith('/');
  if (!isFolder && !target.endsWith('.md')) return undefined;
  const destination = join(root, target);
  if (!existsSync(destination)) return `names ${target}${fragment ?? ''}, but ${target} does not exist`;
  if (fragment === undefined) return undefined;
  if (isFolder || statSync(destination).isDirectory()) return `names ${target}${fragment}, but ${target} is a folder`;
  if (!anchorsOf(destination).has(fragment.slice(1))) return `names ${target}${fragment}, but ${target} has no heading #${fragment.slice(1)}`;
  return undefined;
}

const sources = textFiles(CITATION_SCOPE);
const referencing = new Set(textFiles(REFERENCE_SCOPE));
for (const file of sources) {
  const name = relative(root, file);
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      for (const [pattern, message] of CITATIONS) {
        if (pattern.test(line)) problems.push(`${name}:${i + 1}: ${message}`);
      }
      if (!referencing.has(file)) return;
      for (const match of line.matchAll(DOC_REFERENCE)) {
        const problem = referenceProblem(match[1].replace(/[.-]+$/, ''), match[2]);
        if (problem) problems.push(`${name}:${i + 1}: ${problem}`);
      }
    });
}

for (const problem of problems) console.error(problem);
if (problems.length > 0) {
  console.error(`check-docs: ${problems.length} problem(s) in ${files.length} documentation and ${sources.length} source file(s)`);
  process.exit(1);
}
console.log(
  `check-docs: ${files.length} documentation file(s), every relative link resolves; ${sources.length} source file(s), no citation of the internal specification or of an issue, every docs/ reference resolves`,
);
