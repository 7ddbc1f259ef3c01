#!/usr/bin/env node
// Checks the links of README.md and the book (docs/src/**/*.md):
// - every relative link's target exists, relative to the linking file;
// - a `#fragment` into a markdown file names a heading of that file, by the
//   slugs GitHub and mdBook give headings (lowercase; letters, digits, `-` and
//   `_` kept, spaces become `-`, other punctuation dropped; a repeated heading
//   gets -1, -2, ...);
// - every chapter SUMMARY.md lists exists, and every .md under docs/src is
//   listed in SUMMARY.md.
// http(s) and mailto links, and links inside code (fenced blocks, code spans),
// are not checked. Prints `file:line: link -> reason` for each broken link and
// exits 1 if there is any. Usage: node js/scripts/check-docs.mjs [repository root]

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
const bookSrc = join(root, 'docs', 'src');
const summary = join(bookSrc, 'SUMMARY.md');

const problems = [];
const report = (file, line, link, reason) =>
  problems.push(`${relative(root, file)}:${line}: ${link} -> ${reason}`);

function markdownFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.isFile() && entry.name.endsWith('.md')) out.push(path);
  }
  return out.sort();
}

// The lines of a markdown file outside fenced code blocks, each with its
// 1-based number; lines inside a fence come back as null.
function proseLines(text) {
  const lines = text.split(/\r?\n/);
  let fence = null; // the opening fence: its character and length
  return lines.map((line) => {
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length && m[2].trim() === '') fence = null;
      return null;
    }
    if (m && !(m[1][0] === '`' && m[2].includes('`'))) {
      fence = m[1];
      return null;
    }
    return line;
  });
}

// Code spans replaced by spaces of the same length (so columns stay put),
// since a link inside a code span is text. Backtick runs must match in length.
function withoutCodeSpans(line) {
  return line.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (span) => ' '.repeat(span.length));
}

// The text a heading renders to: inline code kept without its backticks,
// links and images reduced to their text, emphasis and HTML tags dropped.
function headingText(raw) {
  let text = raw.replace(/\s+#+\s*$/, '').trim(); // closing hashes of an ATX heading
  const codes = [];
  text = text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, __, code) => {
    codes.push(code.trim());
    return `\uE000${codes.length - 1}\uE000`;
  });
  text = text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/!?\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\*+/g, '')
    .replace(/(^|\W)_+|_+(?=\W|$)/g, '$1');
  return text.replace(/\uE000(\d+)\uE000/g, (_, i) => codes[Number(i)]);
}

function slug(text) {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map();
function anchors(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const seen = new Map();
  const ids = new Set();
  const lines = proseLines(readFileSync(file, 'utf8'));
  lines.forEach((line, i) => {
    if (line === null) return;
    let text = null;
    const atx = /^ {0,3}#{1,6}(?:\s+(.*))?$/.exec(line);
    if (atx) text = atx[1] ?? '';
    else if (i > 0 && lines[i - 1] !== null && lines[i - 1].trim() !== '' && /^ {0,3}(=+|-+)\s*$/.test(line)
      && !/^ {0,3}([-*+]|\d+[.)])\s/.test(lines[i - 1]) && !/^ {0,3}#/.test(lines[i - 1])) {
      text = lines[i - 1]; // a setext heading (a line of `-` under a paragraph line)
    }
    if (text === null) return;
    const base = slug(headingText(text));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  });
  anchorCache.set(file, ids);
  return ids;
}

// Link destinations of one line: inline links and images, reference
// definitions, and autolinks; each with the destination as written.
function linksOf(line) {
  const found = [];
  const text = withoutCodeSpans(line);
  const inline = /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+("[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
  for (const m of text.matchAll(inline)) found.push(m[1].replace(/^<(.*)>$/, '$1'));
  const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(text);
  if (definition) found.push(definition[1].replace(/^<(.*)>$/, '$1'));
  for (const m of text.matchAll(/<([a-zA-Z][a-zA-Z0-9+.-]*:[^\s<>]*)>/g)) found.push(m[1]);
  return found;
}

function checkLink(file, lineNo, link) {
  if (link === '') return report(file, lineNo, '(empty)', 'empty link target');
  if (/^(https?:|mailto:)/i.test(link)) return;
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(link)) return report(file, lineNo, link, 'a scheme other than http(s) or mailto');
  if (link.startsWith('/')) return report(file, lineNo, link, 'an absolute path (links must be relative)');
  const hash = link.indexOf('#');
  const pathPart = hash === -1 ? link : link.slice(0, hash);
  const fragment = hash === -1 ? null : link.slice(hash + 1);
  let decodedPath;
  let decodedFragment;
  try {
    decodedPath = decodeURIComponent(pathPart.split('?')[0]);
    decodedFragment = fragment === null ? null : decodeURIComponent(fragment);
  } catch {
    return report(file, lineNo, link, 'malformed percent-encoding');
  }
  const target = decodedPath === '' ? file : resolve(dirname(file), decodedPath);
  if (!existsSync(target)) return report(file, lineNo, link, `${relative(root, target) || '.'} does not exist`);
  if (decodedFragment === null) return;
  if (statSync(target).isDirectory()) return report(file, lineNo, link, 'a fragment into a directory');
  if (!target.endsWith('.md')) return; // anchors of other files are not checked
  if (!anchors(target).has(decodedFragment)) {
    return report(file, lineNo, link, `no heading of ${relative(root, target)} has the anchor #${decodedFragment}`);
  }
}

function checkFile(file) {
  const lines = proseLines(readFileSync(file, 'utf8'));
  lines.forEach((line, i) => {
    if (line === null) return;
    for (const link of linksOf(line)) checkLink(file, i + 1, link);
  });
}

const files = [join(root, 'README.md')];
if (existsSync(bookSrc)) files.push(...markdownFiles(bookSrc));
for (const file of files) {
  if (existsSync(file)) checkFile(file);
  else problems.push(`${relative(root, file)}:0: (file) -> does not exist`);
}

// SUMMARY.md: every chapter exists (reported above as a broken link) and
// every markdown file of the book is a chapter.
if (existsSync(summary)) {
  const listed = new Set();
  proseLines(readFileSync(summary, 'utf8')).forEach((line, i) => {
    if (line === null) return;
    for (const link of linksOf(line)) {
      if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(link) || link === '') continue;
      const path = decodeURIComponent(link.split('#')[0]);
      if (path === '') continue;
      const target = resolve(dirname(summary), path);
      listed.add(target);
      if (!target.endsWith('.md')) report(summary, i + 1, link, 'a chapter must be a .md file');
    }
  });
  for (const file of markdownFiles(bookSrc)) {
    if (file !== summary && !listed.has(file)) {
      problems.push(`${relative(root, summary)}:0: ${relative(bookSrc, file).split(sep).join('/')} -> not listed in SUMMARY.md`);
    }
  }
} else if (existsSync(bookSrc)) {
  problems.push(`${relative(root, summary)}:0: (file) -> does not exist`);
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  console.error(`${problems.length} broken link${problems.length === 1 ? '' : 's'}`);
  process.exit(1);
}
console.log(`check-docs: ${files.length} files, every link resolves`);
