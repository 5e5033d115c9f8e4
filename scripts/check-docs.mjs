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
  return raw
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*\*|\*|~~/g, '')
    // `_` marks emphasis only at a word's edge; inside a word (snake_case) it is text
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1')
    .trim();
}

/** GitHub's heading slug (as github-slugger): lower case, drop all but letters, marks, numbers, `_`, `-` and spaces; spaces become `-`. */
function slug(text) {
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
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
    else if (i + 1 < lines.length && line.trim() !== '' && /^\s{0,3}(=+|-+)\s*$/.test(lines[i + 1]) && !/^\s{0,3}([-*_]\s*){3,}$/.test(line) && !/^\s*[|>-]/.test(line)) {
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
    if (FORBIDDEN.test(line)) problems.push(`${name}:${i + 1}: refers to a path outside the repository (${FORBIDDEN.exec(line)[0]}); the repository must stand alone`);
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

for (const problem of problems) console.error(problem);
if (problems.length > 0) {
  console.error(`check-docs: ${problems.length} problem(s) in ${files.length} file(s)`);
  process.exit(1);
}
console.log(`check-docs: ${files.length} file(s), every relative link resolves`);
