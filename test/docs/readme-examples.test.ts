/**
 * Every line of every TypeScript/JavaScript example in the README and the docs/ pages appears in code that is compiled or run:
 * the type tests (test/types, compiled by `npm run typecheck`) or the scratch apps installed from the packed
 * tarball (test/package/scratch-apps.ts, run for real by scratch-app.test.ts, which also runs the examples of
 * RUN_AS_WRITTEN straight from their page). So do the short examples in its
 * prose and tables (`app.register(…)`, `{ preHandler: … }`, `Fastify({ … })`). An example edited in the README but not there
 * fails here, so no example goes untested.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { docsPages } from './pages.js'
import { RUN_AS_WRITTEN } from '../package/scratch-apps.js'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
// The README, CONTRIBUTING.md and every page under docs/.
const readme = docsPages().map((f) => readFileSync(join(root, f), 'utf8')).join('\n')
// test/types/dom holds the browser-side examples, compiled with the DOM library (its own tsconfig).
const typeTests = ['test/types', 'test/types/dom'].flatMap((dir) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.tst.ts')).map((f) => join(root, dir, f)))
// Examples the package test writes from their page and runs (and type-checks) as they are: RUN_AS_WRITTEN.
const corpusLines = [...[...typeTests, join(root, 'test/package/scratch-apps.ts')].map((f) => readFileSync(f, 'utf8')), ...RUN_AS_WRITTEN]
  .flatMap((text) => text.split('\n').map((l) => l.trim()))
const corpus = new Set(corpusLines)
const corpusText = corpusLines.join('\n')

// The type tests import the sources by path; the README imports the package entries by name.
const ENTRIES: Record<string, string> = {
  '../../index.js': 'fastify-gatehouse',
  '../../providers/index.js': 'fastify-gatehouse/providers',
  '../../toolkit.js': 'fastify-gatehouse/toolkit',
  '../../stores/index.js': 'fastify-gatehouse/stores',
  '../../servers/index.js': 'fastify-gatehouse/servers',
  '../../testing.js': 'fastify-gatehouse/testing'
}
const IMPORT = /^import\s+(.+?)\s+from\s+'([^']+)'$/

/** `default` and the named bindings of an import clause, `type` markers dropped. */
function importedNames (clause: string): string[] {
  const names: string[] = []
  const braces = /\{([^}]*)\}/.exec(clause)
  const head = clause.replace(/\{[^}]*\}/, '').replace(/,/g, ' ').trim()
  if (head !== '') names.push('default')
  for (const part of braces?.[1]?.split(',') ?? []) {
    const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!.trim()
    if (name !== '') names.push(name)
  }
  return names
}

/** Every `module:name` the corpus imports. */
const imported = new Set(corpusLines.flatMap((line) => {
  const m = IMPORT.exec(line)
  if (m === null) return []
  const mod = ENTRIES[m[2]!] ?? m[2]!
  return importedNames(m[1]!).map((n) => `${mod}:${n}`)
}))

/** A README line is covered when it appears as is, or (an import) each name it imports is imported there too. */
function covered (line: string): boolean {
  if (corpus.has(line)) return true
  const m = IMPORT.exec(line)
  return m !== null && importedNames(m[1]!).every((n) => imported.has(`${m[2]!}:${n}`))
}

const blocks = [...readme.matchAll(/^```(ts|js)\n([\s\S]*?)^```$/gm)]

t.test('the README has code examples', async (t) => {
  t.ok(blocks.length >= 8, `${blocks.length} examples`)
})

for (const [, lang, body] of blocks) {
  const lines = body!.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('//'))
  t.test(`README ${lang} example starting "${lines[0]?.slice(0, 60)}"`, async (t) => {
    const missing = lines.filter((l) => !covered(l))
    t.same(missing, [], 'every line is compiled or run by a test')
  })
}

// Examples inside the README's prose and tables: registrations, route hooks and constructor options.
// A placeholder such as `<family>Provider`, or optional options written `apiUrl?`, mark a signature, not an example.
const inline = [...new Set([...readme.matchAll(/`((?:app\.register\(|\{ (?:onRequest|preHandler|preParsing): |Fastify\(\{)[^`]*)`/g)].map((m) => m[1]!))]
  .filter((code) => !/<[a-z]+>/.test(code) && !/\w\?[,)}\s]/.test(code))

t.test('the inline examples (registrations, route hooks, constructor options) are compiled', async (t) => {
  t.ok(inline.length >= 20, `${inline.length} inline examples`)
  t.same(inline.filter((code) => !corpusText.includes(code)), [], 'each appears in a type test as written')
})
