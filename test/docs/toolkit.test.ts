/**
 * The toolkit pages (docs/toolkit/*.md) checked against the toolkit's source, so that a new plugin, helper or
 * option cannot stay undocumented and a ratio cannot drift from the dated results: every value exported from
 * `fastify-gatehouse/toolkit` is named on a page (each `…Plugin` in a page's Example), each page's
 * `## Options: XOptions` table lists exactly the properties of the exported type `XOptions` (read with the
 * TypeScript compiler), every exported `…Options` type has such a table, every page has an example (compiled:
 * readme-examples.test.ts checks every registration and route-hook example appears in test/types), and its
 * Cost section carries the ratios bench/RESULTS.md gives for it, or says it is not measured separately.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as toolkit from '../../toolkit.js'
import { root } from './pages.js'
import { DEPRECATIONS } from '../../lib/deprecation.js'
import { exportedProperties } from './option-types.js'

// The option types are read from the declarations of the TypeScript graph (test/helpers/type-graph.ts): up to date
// in a fraction of a second, built from nothing in about 40 CPU seconds (minutes on a loaded 2-core machine).
t.setTimeout(600_000)

/** Re-exported from the core and documented there (the error reference, the logging guide). */
const CORE_EXPORTS = new Set(['ErrorCodes', 'GatehouseError', 'HttpError', 'OptionsError', 'sendError', 'funcLogger', 'noopLogger', 'pinoLogger', 'stdLogger'])

const pages = readdirSync(join(root, 'docs/toolkit')).filter((f) => f.endsWith('.md') && f !== 'index.md').sort()
  .map((f) => ({ file: `docs/toolkit/${f}`, text: readFileSync(join(root, 'docs/toolkit', f), 'utf8') }))

/** The text of a page's `## title` section (title matched at the start), up to the next `##` heading. */
function sectionOf (text: string, title: string): string | undefined {
  return new RegExp(`^## ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*\\n([\\s\\S]*?)(?=^## |(?![\\s\\S]))`, 'm').exec(text)?.[1]
}

t.test('every value the toolkit exports is named on a toolkit page; every plugin in a page\'s Example', async (t) => {
  const all = pages.map((p) => p.text).join('\n')
  const examples = pages.map((p) => sectionOf(p.text, 'Example') ?? '').join('\n')
  const named = (name: string, text: string): boolean => new RegExp(`\`[^\`]*\\b${name}\\b[^\`]*\``).test(text)
  const values = Object.keys(toolkit).filter((name) => !CORE_EXPORTS.has(name))
  t.ok(values.length > 40, `${values.length} exports`)
  t.same(values.filter((name) => !named(name, all)), [], 'no export left without a mention')
  // A renamed plugin's old name (deprecated until 1.0) is named on its page, not in its example.
  t.same(values.filter((name) => name.endsWith('Plugin') && !Object.hasOwn(DEPRECATIONS, name) && !named(name, examples)), [], 'each plugin has an example')
})

t.test('each Options table lists exactly the properties of its type, and every Options type has a table', async (t) => {
  const types = await exportedProperties('toolkit.ts', (name) => name.endsWith('Options'))
  const documented = new Set<string>()
  for (const { file, text } of pages) {
    for (const m of text.matchAll(/^## Options: (\w+)\n([\s\S]*?)(?=^## |(?![\s\S]))/gm)) {
      const [, type, body] = m as unknown as [string, string, string]
      documented.add(type)
      const rows = [...body.matchAll(/^\| `(\w+)` \|/gm)].map((r) => r[1]!).sort()
      t.same(rows, types.get(type) ?? [`(no exported type ${type})`], `${file}: ${type}`)
    }
  }
  t.same([...types.keys()].filter((type) => !documented.has(type)).sort(), [], 'no exported Options type without a table')
})

t.test('every page has an example (a ts block, a registration or route hooks: compiled by the type tests)', async (t) => {
  for (const { file, text } of pages) {
    const example = sectionOf(text, 'Example')
    if (file.endsWith('hash-cli.md')) { t.match(example, /npx fastify-gatehouse hash/, `${file}: the shell line (a CLI, not a plugin)`); continue }
    t.match(example, /```ts\n|`app\.register\(|`\{ (?:onRequest|preHandler|preParsing): |`Fastify\(\{|`app\.(?:get|post)\(/, `${file}: an example`)
  }
})

/** The newest toolkit table of bench/RESULTS.md: case → the ratios of its row. */
function benchRows (): Array<{ case: string; ratios: string[] }> {
  const results = readFileSync(join(root, 'bench/RESULTS.md'), 'utf8')
  // The newest toolkit run: from its first mention to the next heading (older runs stay below as history).
  const start = results.indexOf('npm run bench -- toolkit')
  const end = results.indexOf('\n#', start)
  const table = results.slice(start, end < 0 ? undefined : end)
  return [...table.matchAll(/^\| (.+?) \| (.*?) \| .*\|$/gm)].filter((m) => m[1] !== 'case' && !m[1]!.startsWith('---'))
    .map((m) => ({ case: m[1]!, ratios: m[2]!.match(/\d+\.\d+x/g) ?? [] })).filter((r) => r.ratios.length > 0)
}

t.test('each page\'s Cost gives the ratios bench/RESULTS.md has for it, or says it is not measured', async (t) => {
  const rows = benchRows()
  t.ok(rows.length >= 8, `${rows.length} measured rows`)
  for (const { file, text } of pages) {
    const title = /^# (.+)$/m.exec(text)![1]!
    const names = title.split(' / ').map((n) => new RegExp(`(?<![\\w@/])${n.replace(/ /g, '\\s')}(?![\\w/])`, 'i'))
    const cost = sectionOf(text, 'Cost') ?? ''
    const mine = rows.filter((r) => names.some((n) => n.test(r.case)))
    if (mine.length === 0) { t.match(cost, /Not measured separately/, `${file}: not measured`); continue }
    t.same(mine.flatMap((r) => r.ratios).filter((ratio) => !cost.includes(ratio)), [], `${file}: the ratios of ${mine.map((r) => r.case).join('; ')}`)
  }
})
