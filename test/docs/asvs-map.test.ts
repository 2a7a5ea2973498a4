/**
 * The OWASP ASVS 5.0 map of docs/guide/security.md (issue 33): one table per chapter, columns
 * `item | level | in short | shown by`. Every row names a requirement of its chapter and a level, and is shown by at
 * least one test file of this repository (each cited file must exist, and each quoted title must occur in it) or
 * says "host:" (what the application must do) or "not met:" (and why). The list of Level 1 and 2 requirements
 * below is the standard's (5.0.0, May 2025), so that no row can go missing unnoticed.
 */
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './pages.js'

const PAGE = 'docs/guide/security.md'
const MAP_HEADING = '## OWASP ASVS 5.0 map'

/** Every Level 1 and 2 requirement of the mapped chapters, by chapter heading prefix, with its level. */
const REQUIRED: Record<string, Record<string, 'L1' | 'L2'>> = {
  V6: {
    '6.1.1': 'L1', '6.1.2': 'L2', '6.1.3': 'L2',
    '6.2.1': 'L1', '6.2.2': 'L1', '6.2.3': 'L1', '6.2.4': 'L1', '6.2.5': 'L1', '6.2.6': 'L1', '6.2.7': 'L1',
    '6.2.8': 'L2', '6.2.9': 'L2', '6.2.10': 'L2', '6.2.11': 'L2', '6.2.12': 'L2',
    '6.3.1': 'L1', '6.3.2': 'L2', '6.3.3': 'L2',
    '6.4.1': 'L1', '6.4.2': 'L1', '6.4.3': 'L2', '6.4.4': 'L2',
    '6.5.1': 'L2', '6.5.2': 'L2', '6.5.3': 'L2', '6.5.4': 'L2', '6.5.5': 'L2',
    '6.6.1': 'L2', '6.6.2': 'L2', '6.6.3': 'L2',
    '6.8.1': 'L2', '6.8.2': 'L2', '6.8.3': 'L2', '6.8.4': 'L2'
  },
  V7: {
    '7.1.1': 'L2', '7.1.2': 'L2', '7.1.3': 'L2',
    '7.2.1': 'L1', '7.2.2': 'L1', '7.2.3': 'L1', '7.2.4': 'L1',
    '7.3.1': 'L2', '7.3.2': 'L2',
    '7.4.1': 'L1', '7.4.2': 'L1', '7.4.3': 'L2', '7.4.4': 'L2', '7.4.5': 'L2',
    '7.5.1': 'L2', '7.5.2': 'L2',
    '7.6.1': 'L2', '7.6.2': 'L2'
  },
  V9: { '9.1.1': 'L1', '9.1.2': 'L1', '9.1.3': 'L1', '9.2.1': 'L1', '9.2.2': 'L2', '9.2.3': 'L2', '9.2.4': 'L2' },
  V10: {
    '10.1.1': 'L2', '10.1.2': 'L2', '10.2.1': 'L2', '10.2.2': 'L2',
    '10.3.1': 'L2', '10.3.2': 'L2', '10.3.3': 'L2', '10.3.4': 'L2',
    '10.4.1': 'L1', '10.4.2': 'L1', '10.4.3': 'L1', '10.4.4': 'L1', '10.4.5': 'L1',
    '10.4.6': 'L2', '10.4.7': 'L2', '10.4.8': 'L2', '10.4.9': 'L2', '10.4.10': 'L2', '10.4.11': 'L2',
    '10.5.1': 'L2', '10.5.2': 'L2', '10.5.3': 'L2', '10.5.4': 'L2', '10.5.5': 'L2',
    '10.6.1': 'L2', '10.6.2': 'L2', '10.7.1': 'L2', '10.7.2': 'L2', '10.7.3': 'L2'
  },
  V14: { '14.2.1': 'L1', '14.2.2': 'L2', '14.2.3': 'L2', '14.2.4': 'L2', '14.3.1': 'L1', '14.3.2': 'L2', '14.3.3': 'L2' },
  V16: {
    '16.1.1': 'L2', '16.2.1': 'L2', '16.2.2': 'L2', '16.2.3': 'L2', '16.2.4': 'L2', '16.2.5': 'L2',
    '16.3.1': 'L2', '16.3.2': 'L2', '16.3.3': 'L2', '16.3.4': 'L2', '16.4.1': 'L2', '16.4.2': 'L2', '16.4.3': 'L2',
    '16.5.1': 'L2', '16.5.2': 'L2', '16.5.3': 'L2'
  }
}

interface Row { chapter: string; line: number; item: string; level: string; gist: string; shownBy: string }
interface Citation { path: string; titles: string[] }

/** The map's tables: each `### V… …` heading of the map section and the rows of the table under it. */
function mapRows (text: string): { chapters: string[]; rows: Row[]; headers: string[] } {
  const lines = text.split('\n')
  const start = lines.indexOf(MAP_HEADING)
  if (start === -1) throw new Error(`${PAGE} has no "${MAP_HEADING}" section`)
  const chapters: string[] = []
  const rows: Row[] = []
  const headers: string[] = []
  let chapter = ''
  for (let i = start + 1; i < lines.length && !/^## /.test(lines[i]!); i++) {
    const line = lines[i]!
    const heading = /^### (V\d+)\b/.exec(line)
    if (heading !== null) { chapter = heading[1]!; chapters.push(chapter); continue }
    if (!line.startsWith('|')) continue
    const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split('|').map((c) => c.trim())
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue
    if (cells[0] === 'item') { headers.push(cells.join(' | ')); continue }
    rows.push({ chapter, line: i + 1, item: cells[0] ?? '', level: cells[1] ?? '', gist: cells[2] ?? '', shownBy: cells.slice(3).join('|') })
  }
  return { chapters, rows, headers }
}

/** The test files a "shown by" cell cites: `path` optionally followed by ("title", "title"). */
function citations (cell: string): Citation[] {
  return [...cell.matchAll(/`(test\/[^`\s]+?\.ts)`(?:\s*\(((?:"[^"]+"(?:,\s*)?)+)\))?/g)]
    .map((m) => ({ path: m[1]!, titles: [...(m[2] ?? '').matchAll(/"([^"]+)"/g)].map((x) => x[1]!) }))
}

const page = readFileSync(join(root, PAGE), 'utf8')
const { chapters, rows, headers } = mapRows(page)

t.test('one table per chapter, in order, with the columns item, level, in short, shown by', async (t) => {
  t.same(chapters, Object.keys(REQUIRED))
  t.same(headers, chapters.map(() => 'item | level | in short | shown by'))
})

t.test('every row: a requirement of its chapter with its level, a gist, and a test or a reason', async (t) => {
  const wrong: string[] = []
  for (const row of rows) {
    const where = `${PAGE}:${row.line} ${row.item}`
    const required = REQUIRED[row.chapter] ?? {}
    const inChapter = row.chapter === 'V14' ? /^14\.[23]\.\d+$/ : new RegExp(`^${row.chapter.slice(1)}\\.\\d+\\.\\d+$`)
    if (!inChapter.test(row.item)) wrong.push(`${where}: not a requirement of ${row.chapter}`)
    else if (required[row.item] === undefined) wrong.push(`${where}: not a Level 1 or 2 requirement of ${row.chapter}`)
    else if (row.level !== required[row.item]) wrong.push(`${where}: level ${row.level}, the standard says ${required[row.item]}`)
    if (row.gist.length < 10) wrong.push(`${where}: no gist`)
    const cited = citations(row.shownBy)
    const reason = /\b(host|not met(?: by default)?):/.test(row.shownBy)
    if (cited.length === 0 && !reason) wrong.push(`${where}: neither a test nor "host:" or "not met:"`)
    for (const { path, titles } of cited) {
      if (!existsSync(join(root, path))) { wrong.push(`${where}: ${path} does not exist`); continue }
      const source = readFileSync(join(root, path), 'utf8')
      for (const title of titles) if (!source.includes(title)) wrong.push(`${where}: "${title}" is not in ${path}`)
    }
  }
  t.same(wrong, [], `${rows.length} rows`)
})

t.test('every Level 1 and 2 requirement of the chapters has exactly one row', async (t) => {
  const seen = rows.map((r) => r.item)
  t.same(seen.filter((item, i) => seen.indexOf(item) !== i), [], 'no requirement twice')
  const missing = Object.values(REQUIRED).flatMap((items) => Object.keys(items)).filter((item) => !seen.includes(item))
  t.same(missing, [], 'none missing')
  for (const [chapter, items] of Object.entries(REQUIRED)) {
    const own = rows.filter((r) => r.chapter === chapter)
    t.same(own.map((r) => r.item), Object.keys(items), `${chapter}: in the standard's order`)
    // Counted by what leads: a row that starts with "host:" is the host's even if it points at a test on the way.
    const notMet = own.filter((r) => /\bnot met\b/.test(r.shownBy))
    const host = own.filter((r) => !notMet.includes(r) && r.shownBy.startsWith('host:'))
    t.comment(`${chapter}: ${own.length} rows, ${own.length - host.length - notMet.length} shown by a test, ${host.length} host, ${notMet.length} not met (${notMet.map((r) => r.item).join(', ')})`)
  }
})
