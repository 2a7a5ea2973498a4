/**
 * Every relative link of the README and the documentation pages resolves: the file it names exists in the
 * repository, and its `#anchor`, if any, is a heading of that page (GitHub's anchor rule). Links are what a
 * reader follows on GitHub or npm, so they are repository-relative; external ones (https:) are not fetched.
 */
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { docsPages, relativeLinks, root } from './pages.js'

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors (markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  const body = markdown.replace(/^```[\s\S]*?^```$/gm, '')
  for (const m of body.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

const pages = docsPages()

t.test('there are documentation pages in each part', async (t) => {
  for (const part of ['docs/guide/', 'docs/providers/', 'docs/toolkit/', 'docs/reference/', 'docs/internals/']) {
    t.ok(pages.some((p) => p.startsWith(part)), part)
  }
})

for (const page of pages) {
  t.test(`links of ${page}`, async (t) => {
    const text = readFileSync(join(root, page), 'utf8')
    const links = relativeLinks(text)
    const broken: string[] = []
    for (const href of links) {
      const [path, anchor] = href.split('#') as [string, string | undefined]
      const target = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)))
      if (target.startsWith('..') || !existsSync(join(root, target))) { broken.push(`${href}: no file ${target}`); continue }
      if (anchor !== undefined && target.endsWith('.md') && !anchors(readFileSync(join(root, target), 'utf8')).has(anchor)) {
        broken.push(`${href}: no heading #${anchor} in ${target}`)
      }
    }
    t.same(broken, [], `${links.length} relative links resolve`)
  })
}

t.test('the site (typedoc.json projectDocuments) carries every page of docs/, CONTRIBUTING.md and bench/RESULTS.md', async (t) => {
  const listed: string[] = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')).projectDocuments
  t.same(pages.filter((p) => p !== 'README.md').filter((p) => !listed.includes(p)), [], 'no page left out of the site')
  t.same(listed.filter((p) => !existsSync(join(root, p))), [], 'no listed page missing')
})
