/**
 * What the documentation site makes of a page's markdown (issue 37 items 4 and 5). TypeDoc files a page without
 * front matter under a catch-all "Documents" group with its path as title, and drops inline code from a heading's
 * anchor and table-of-contents entry ("Routes (under )"). A `\|` is a pipe only inside a table row: in a shell line
 * or any other code it is pasted as a backslash and a pipe, which runs a different command.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { docsPages, root } from './pages.js'

const typedoc = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { projectDocuments: string[]; groupOrder: string[] }
const groups = typedoc.groupOrder.filter((g) => g !== '*')

/** The YAML front matter's `key: value` lines, or undefined when the page has none. */
function frontMatter (text: string): Record<string, string> | undefined {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text)
  if (m === null) return undefined
  return Object.fromEntries(m[1]!.split('\n').map((line) => /^(\w+):\s*(.*)$/.exec(line)).filter((x) => x !== null)
    .map((x) => [x[1]!, x[2]!.replace(/^"(.*)"$/, '$1')]))
}

t.test('every page of the site has front matter with a title and one of the site\'s groups', async (t) => {
  const wrong: string[] = []
  for (const page of typedoc.projectDocuments) {
    const fm = frontMatter(readFileSync(join(root, page), 'utf8'))
    if (fm === undefined) wrong.push(`${page}: no front matter (the site files it under "Documents" as ${page.replace(/\.md$/, '')})`)
    else if (fm.title === undefined || fm.title === '') wrong.push(`${page}: no title`)
    else if (!groups.includes(fm.group ?? '')) wrong.push(`${page}: group ${JSON.stringify(fm.group)} is not one of ${groups.join(', ')}`)
  }
  t.same(wrong, [], `${typedoc.projectDocuments.length} pages`)
})

/** Every line of a page outside fenced code blocks, with its number. */
function proseLines (text: string): Array<[number, string]> {
  let fenced = false
  const out: Array<[number, string]> = []
  text.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) { fenced = !fenced; return }
    if (!fenced) out.push([i + 1, line])
  })
  return out
}

t.test('no heading holds inline code (the site drops it from the anchor and the page\'s contents)', async (t) => {
  const found = [...new Set([...docsPages(), ...typedoc.projectDocuments])].flatMap((page) => proseLines(readFileSync(join(root, page), 'utf8'))
    .filter(([, line]) => /^#{1,6} .*`/.test(line)).map(([n, line]) => `${page}:${n}: ${line}`))
  t.same(found, [])
})

t.test('no code outside a table row has a table\'s escaped pipe \\|', async (t) => {
  const found: string[] = []
  for (const page of docsPages()) {
    const text = readFileSync(join(root, page), 'utf8')
    let fenced = false
    text.split('\n').forEach((line, i) => {
      if (/^\s*```/.test(line)) { fenced = !fenced; return }
      const tableRow = !fenced && /^\s*\|/.test(line)
      const code = fenced ? [line] : [...line.matchAll(/`[^`]*`/g)].map((m) => m[0])
      if (!tableRow && code.some((c) => c.includes('\\|'))) found.push(`${page}:${i + 1}: ${line}`)
    })
  }
  t.same(found, [], 'a shell line pasted from the docs runs as written')
})
