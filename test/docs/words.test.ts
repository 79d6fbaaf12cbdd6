/**
 * The words a reader meets first: comments, test titles and docs state what the code does now and
 * point only inside the repository. This test fails on
 * - a migration number (`0034`, `migration 0034`) in a comment, a test title or a page of docs/
 *   (the migrations themselves and the test of one migration, test/shared/db/migrationNNNN.test.ts,
 *   may name theirs);
 * - a pointer to a folder outside the repository: `research/`, `notes/`, `../shared/` (other than an
 *   import that resolves to a file of the repository), or the handbook;
 * - an issue number (`issue 41`) in a comment, a test title or a page of docs/.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Code (not words) that reads a folder outside the repository on purpose, with why. Each entry is
 * the file and the exact text allowed there.
 */
const READS_OUTSIDE_THE_REPOSITORY: readonly { file: string; text: string; why: string }[] = [
  {
    file: 'test/helpers/recordedChain.ts',
    text: '../../../shared/realchain/fixtures/blockscout-rs',
    why: 'the real-chain fixtures are not copied into the repository: REALCHAIN_FIXTURES_DIR, else this folder beside it',
  },
];

/** Folders never read: installed, built or generated. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.git', '.data', 'out', 'artifacts']);

/**
 * Migration files are checked against the checksum recorded when a database applied them
 * (shared/db/migrate.ts): their text, comments included, cannot change, so they are not read.
 */
const MIGRATIONS = 'shared/db/migrations/';
const MIGRATION_TEST = /^test\/shared\/db\/migration\d{4}\.test\.ts$/;

const CODE = new Set(['.ts', '.mts', '.js', '.mjs', '.cjs']);
const TEXT = new Set([...CODE, '.md', '.json', '.sql', '.sh', '.html', '.css', '.sol', '.yml', '.yaml', '.example', '']);

function repositoryFiles(dir = ROOT): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name)) files.push(...repositoryFiles(path));
    } else if (entry.isFile() && TEXT.has(extname(entry.name))) {
      files.push(relative(ROOT, path).split(sep).join('/'));
    }
  }
  return files;
}

/** The migration numbers of shared/db/migrations (`0001` … ). */
function migrationNumbers(): Set<string> {
  return new Set(
    readdirSync(join(ROOT, MIGRATIONS))
      .map((name) => /^(\d{4})_/.exec(name)?.[1])
      .filter((n): n is string => n !== undefined),
  );
}

type Prose = { line: number; text: string; kind: 'comment' | 'test title' | 'doc' | 'doc example' };

const TEST_CALLS = new Set(['describe', 'context', 'it', 'specify']);

/** A source file's comments and test titles, each with its line. */
function proseOfCode(file: string, text: string): Prose[] {
  const kind = file.endsWith('.ts') || file.endsWith('.mts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const prose: Prose[] = [];
  const seen = new Set<number>();
  /** Each line of the text from `pos` to `end` on its own, so that a finding names its line. */
  const lines = (pos: number, end: number) =>
    text
      .slice(pos, end)
      .split('\n')
      .forEach((line, i) => prose.push({ line: lineOf(pos) + i, text: line, kind: 'comment' }));
  const comments = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      lines(range.pos, range.end);
    }
  };
  const visit = (node: ts.Node) => {
    comments(ts.getLeadingCommentRanges(text, node.pos));
    comments(ts.getTrailingCommentRanges(text, node.end));
    // SQL comments (`-- …`) in the statements of template and string literals.
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
      const start = node.getStart(source);
      for (const m of node.getText(source).matchAll(/(?<=^|\s)-- [^\n]*/g)) lines(start + m.index, start + m.index + m[0].length);
    }
    if (ts.isCallExpression(node)) {
      const callee = ts.isPropertyAccessExpression(node.expression) ? node.expression.expression : node.expression;
      const title = node.arguments[0];
      if (ts.isIdentifier(callee) && TEST_CALLS.has(callee.text) && title !== undefined && ts.isStringLiteralLike(title)) {
        prose.push({ line: lineOf(title.getStart(source)), text: title.text, kind: 'test title' });
      } else if (ts.isIdentifier(callee) && TEST_CALLS.has(callee.text) && title !== undefined && ts.isTemplateExpression(title)) {
        prose.push({ line: lineOf(title.getStart(source)), text: title.getText(source), kind: 'test title' });
      }
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return prose;
}

/**
 * A page's lines without their links' targets (a heading's anchor is the heading's, not the page's
 * words). Lines of a code block (fenced, or indented after a blank line) are examples of what a
 * command prints, kind 'doc example'.
 */
function proseOfDoc(text: string): Prose[] {
  let fenced = false;
  let indented = false;
  let previous = '';
  return text.split('\n').map((line, i) => {
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    indented = /^( {4}|\t)(?!\s*([-*+]|\d+\.) )/.test(line) && (indented || previous.trim() === '');
    previous = line;
    const kind = fenced || indented || /^\s{0,3}(```|~~~)/.test(line) ? 'doc example' : 'doc';
    return { line: i + 1, text: line.replace(/\]\([^)\s]*\)/g, ']()'), kind };
  });
}

const OUTSIDE_FOLDER = /(?<![\w.@/-])(research|notes)\/|spec\/api-v0|DESIGN\.md|handbook/i;
const ISSUE_NUMBER = /\bissues? #?\d+/i;
const PARENT_SHARED = /((?:\.\.\/)+)shared\/[^\s'"`)\]]*/g;

/** `../shared/…` text of `file` that is not an import resolving to a file of the repository. */
function pathsOutside(file: string, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(PARENT_SHARED)) {
    const path = match[0].replace(/[.,;:]+$/, '');
    const target = resolve(ROOT, dirname(file), path);
    const before = text.slice(Math.max(0, match.index - 8), match.index);
    const imported = CODE.has(extname(file)) && /(from |import\()\s*['"]$/.test(before);
    const inside = target.startsWith(ROOT + sep) && (existsSync(target) || existsSync(target.replace(/\.js$/, '.ts')));
    if (imported && inside) continue;
    if (READS_OUTSIDE_THE_REPOSITORY.some((r) => r.file === file && r.text === path)) continue;
    found.push(path);
  }
  return found;
}

/** What is wrong with the words of `file` (its path from the root), whose text is `text`. */
function findingsIn(file: string, text: string, migrations: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const ext = extname(file);
  for (const path of pathsOutside(file, text)) out.push(`${file}: points outside the repository: ${path}`);
  if (!CODE.has(ext) && ext !== '.md') {
    text.split('\n').forEach((line, i) => {
      if (OUTSIDE_FOLDER.test(line)) out.push(`${file}:${i + 1}: points outside the repository: ${line.trim()}`);
    });
    return out;
  }
  for (const { line, text: words, kind } of CODE.has(ext) ? proseOfCode(file, text) : proseOfDoc(text)) {
    const where = `${file}:${line} (${kind})`;
    const outside = OUTSIDE_FOLDER.exec(words);
    if (outside) out.push(`${where}: points outside the repository (${outside[0]})`);
    const issue = ISSUE_NUMBER.exec(words);
    if (issue) out.push(`${where}: names an issue (${issue[0]})`);
    if (!MIGRATION_TEST.test(file) && kind !== 'doc example') {
      const cited = [...words.matchAll(/(?<![\w.+:-])(\d{4})(?!\d|\.\d)/g)].map((m) => m[1]!).filter((n) => migrations.has(n));
      if (cited.length > 0) out.push(`${where}: cites migration ${cited.join(', ')}`);
    }
  }
  return out;
}

/** The findings of every file of the repository but the migrations, this file and those being rewritten. */
function findings(): string[] {
  const migrations = migrationNumbers();
  return repositoryFiles()
    .filter((file) => !file.startsWith(MIGRATIONS) && file !== 'test/docs/words.test.ts' && file !== 'package-lock.json')
    .flatMap((file) => findingsIn(file, readFileSync(join(ROOT, file), 'utf8'), migrations));
}

describe('the words of comments, test titles and docs', function () {
  this.timeout(120_000);

  it('cite no migration number, point only inside the repository and name no issue', () => {
    const found = findings();
    expect(found, `\n${found.join('\n')}\n`).to.deep.equal([]);
  });

  it('finds each kind of word it checks, and only where it is not allowed', () => {
    const migrations = new Set(['0031', '0034']);
    const code = [
      '// kept as bytes (migration 0034)',
      'const sql = `select 1 -- one row (0031)`;',
      '/** See research/indexer.md §1.4 and notes/chains.md. */',
      "import { x } from '../../shared/networks.js';",
      "describe('reads a reorg (issue 41)', () => undefined);",
      'const port = 8034; // 0x0034 and U+0034 are no migrations',
    ].join('\n');
    expect(findingsIn('test/server/example.test.ts', code, migrations)).to.deep.equal([
      'test/server/example.test.ts:1 (comment): cites migration 0034',
      'test/server/example.test.ts:2 (comment): cites migration 0031',
      'test/server/example.test.ts:3 (comment): points outside the repository (research/)',
      'test/server/example.test.ts:5 (test title): names an issue (issue 41)',
    ]);
    // The test of one migration names it; an issue number is wrong there too.
    expect(findingsIn('test/shared/db/migration0034.test.ts', code.replace('../../shared/', '../../../shared/'), migrations)).to.deep.equal(
      [
        'test/shared/db/migration0034.test.ts:3 (comment): points outside the repository (research/)',
        'test/shared/db/migration0034.test.ts:5 (test title): names an issue (issue 41)',
      ],
    );
    // A page: its words are checked, what a command prints (a code block) may name a migration.
    const page = [
      'The filter (migration 0034) is stored.',
      '',
      '    pending: 0031_user_ops, …',
      '',
      'See ../shared/realchain/fixtures.',
    ].join('\n');
    expect(findingsIn('docs/example.md', page, migrations)).to.deep.equal([
      'docs/example.md: points outside the repository: ../shared/realchain/fixtures',
      'docs/example.md:1 (doc): cites migration 0034',
    ]);
  });
});
