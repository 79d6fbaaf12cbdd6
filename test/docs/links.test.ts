import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The pages a reader is sent through: the README and every page of docs/. */
function documentationPages(): string[] {
  const docs = join(ROOT, 'docs');
  const pages = readdirSync(docs)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(docs, name));
  return [join(ROOT, 'README.md'), ...pages];
}

/** Markdown without fenced code blocks and inline code spans, where brackets are not links. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
}

/** Link targets: inline `[text](target)` and `![alt](target)`, and reference definitions `[label]: target`. */
function linkTargets(markdown: string): string[] {
  const text = withoutCode(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const definitions = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  return [...inline, ...definitions];
}

/**
 * The anchors GitHub gives a file's headings: the heading's text without its markup, lower-cased,
 * punctuation and symbols removed (letters, digits, `_`, `-` and spaces stay), each space a `-`,
 * and `-1`, `-2`… after a repeated one.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of prose.matchAll(/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/gm)) {
    const text = heading!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every relative link of the page at `file` (its text `markdown`) that leads nowhere, with why. */
export function brokenLinks(file: string, markdown: string): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // https:, mailto: …: not ours to check
    const [path = '', anchor] = target.split('#', 2);
    const linked = path === '' ? file : resolve(dirname(file), decodeURIComponent(path.split('?')[0]!));
    const where = `${relative(ROOT, file)}: (${target})`;
    if (path !== '' && !existsSync(linked)) {
      broken.push(`${where} leads to no file`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (path !== '' && (statSync(linked).isDirectory() || !linked.endsWith('.md'))) {
      broken.push(`${where} has an anchor into a file that is not Markdown`);
      continue;
    }
    const text = linked === file ? markdown : readFileSync(linked, 'utf8');
    if (!headingAnchors(text).has(decodeURIComponent(anchor).toLowerCase())) broken.push(`${where} names no heading of that file`);
  }
  return broken;
}

describe('documentation links', () => {
  it('every relative link in README.md and docs/*.md leads to an existing file and heading', () => {
    const pages = documentationPages();
    expect(pages.length).to.be.above(5);
    const broken = pages.flatMap((page) => brokenLinks(page, readFileSync(page, 'utf8')));
    expect(broken).to.deep.equal([]);
  });

  it('reports a missing file, a missing heading and nothing inside code', () => {
    const page = join(ROOT, 'docs', 'example.md');
    const markdown = [
      '# Example',
      '## Traces (`INDEXER_TRACES`)',
      '## Real-world traffic (`--realistic`)',
      '## Repeated',
      '## Repeated',
      'Fine: [api](api.md), [top](#example), [traces](#traces-indexer_traces), [it](#real-world-traffic---realistic),',
      '[second](#repeated-1), [readme](../README.md#two-commands), [web](https://example.com/nowhere.md).',
      'Broken: [gone](missing.md), [no heading](api.md#no-such-heading), [here](#nowhere).',
      '`[code](not-a-link.md)`',
      '```',
      '[fenced](not-a-link-either.md)',
      '```',
      '[ref]: ./gone-too.md',
    ].join('\n');
    expect(brokenLinks(page, markdown)).to.deep.equal([
      'docs/example.md: (missing.md) leads to no file',
      'docs/example.md: (api.md#no-such-heading) names no heading of that file',
      'docs/example.md: (#nowhere) names no heading of that file',
      'docs/example.md: (./gone-too.md) leads to no file',
    ]);
  });
});
