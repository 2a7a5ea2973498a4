/**
 * Rules of the suite itself (CONTRIBUTING.md, "Running the suite"). No test bounds a measured duration from above:
 * a loaded machine makes everything later, so such a bound fails a correct program now and then (what the suite
 * issue saw once in six CI runs). A deadline is shown by the deadline's own answer (its error, its log line), by a
 * peer that never answers (so that only the deadline can end the wait), and by a lower bound; a wait for something
 * is an awaited event, or a poll with no deadline of its own (test/helpers/eventually.ts). A bound that must stay
 * says why on the line above (`time bound:`). And every group has its runner, every file a group, and the
 * Node-independent files (run once per CI run) name files of the suite.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GROUPS, NODE_INDEPENDENT } from './groups/groups.js'
import { allTestFiles, groupOf, runnerNames, skipReason } from './helpers/group.js'
import { parseDiagnostics } from './helpers/type-graph.js'
import { eventually } from './helpers/eventually.js'

const root = fileURLToPath(new URL('..', import.meta.url))

/** Every TypeScript file under test/ (tests, helpers, children, fixtures), relative to the repository root. */
function testSources (): string[] {
  // test/mutation/ quotes the product's own code (the mutants' texts), which measures nothing.
  return readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.startsWith('mutation/')).map((f) => `test/${f}`)
}

/** A duration measured with the wall clock: `performance.now() - x` or `Date.now() - x`. */
const MEASURED = /(?:performance|Date)\.now\(\) - [\w.]+/

/**
 * The lines of `text` that bound a measured duration from above: a comparison `<` (or `<=`) with a measured
 * duration, directly or through a variable assigned one, without `time bound:` on the line or the one above.
 */
export function upperTimeBounds (text: string): number[] {
  const lines = text.split('\n')
  const measured = new Set<string>()
  for (const line of lines) {
    const m = new RegExp(`(?:const|let) (\\w+) = (?:Math\\.round\\()?${MEASURED.source}`).exec(line)
    if (m !== null) measured.add(m[1]!)
  }
  const names = [...measured].map((n) => `\\b${n}\\b`)
  const operands = [MEASURED.source, ...names].join('|')
  const bound = new RegExp(`(?:${operands})\\)? *<=? *[\\w(]|[\\w)] *>=? *(?:${operands})`)
  const out: number[] = []
  lines.forEach((line, i) => {
    if (/^\s*(\/\/|\*)/.test(line) || !bound.test(line)) return
    if (/time bound:/.test(line) || /time bound:/.test(lines[i - 1] ?? '')) return
    out.push(i + 1)
  })
  return out
}

t.test('no test bounds a measured duration from above (a lower bound, or the deadline\'s own answer, instead)', async (t) => {
  // (This file's own examples of what the rule finds are left out.)
  const found = testSources().filter((f) => f !== 'test/suite-rules.test.ts').flatMap((f) => upperTimeBounds(readFileSync(join(root, f), 'utf8')).map((line) => `${f}:${line}`))
  t.same(found, [], 'a loaded machine only makes things later: such a bound fails a correct program now and then')
})

t.test('the rule finds the bounds it is about, and lets lower bounds and reasoned ones pass', async (t) => {
  t.same(upperTimeBounds('const took = Date.now() - started\nt.ok(took < 2000)'), [2])
  t.same(upperTimeBounds('t.ok(performance.now() - started < 400, "fast")'), [1])
  t.same(upperTimeBounds('const ms = Math.round(performance.now() - t0)\nt.ok(ms >= 500 && ms < 1000)'), [2])
  t.same(upperTimeBounds('const took = Date.now() - started\nt.ok(took >= 150, "at the deadline")'), [])
  t.same(upperTimeBounds('const took = Date.now() - started\n// time bound: 10 minutes, a hang otherwise\nt.ok(took < 600_000)'), [])
  t.same(upperTimeBounds('const n = list.length\nt.ok(n < 5)'), [], 'a count is not a duration')
})

t.test('every group has its runner file and every runner its group', async (t) => {
  t.same(runnerNames(), Object.keys(GROUPS).sort())
})

t.test('every test file runs in a group; a new folder\'s files join the group of the folder above', async (t) => {
  t.same(allTestFiles().filter((f) => groupOf(f) === undefined), [])
  t.equal(groupOf('test/e2e/saml/sign-in.test.ts'), 'saml', 'test/e2e/saml/ has a group of its own (SimpleSAMLphp)')
  t.equal(groupOf('test/e2e/newpeer/x.test.ts'), '10-peers')
  t.equal(groupOf('test/plugins/core/new.test.ts'), '05-core')
  t.equal(groupOf('test/newfolder/x.test.ts'), '07-rest')
})

t.test('the Node-independent entries name files of the suite, and only .ci/run\'s later Nodes skip them', async (t) => {
  const files = allTestFiles()
  t.same(NODE_INDEPENDENT.filter((start) => !files.some((f) => f.startsWith(start))), [], 'each entry names at least one test file')
  t.equal(skipReason('test/types/entries.test.ts', {}), undefined, 'npm test alone runs it')
  t.equal(skipReason('test/types/entries.test.ts', { GATEHOUSE_NODE_INDEPENDENT_ELSEWHERE: '' }), undefined, 'the Node of .ci/run that runs it')
  t.match(skipReason('test/types/entries.test.ts', { GATEHOUSE_NODE_INDEPENDENT_ELSEWHERE: 'v22.23.3' }), /^Node-independent, runs on Node v22\.23\.3 in this CI run/)
  t.equal(skipReason('test/plugins/core/keys.test.ts', { GATEHOUSE_NODE_INDEPENDENT_ELSEWHERE: 'v22.23.3' }), undefined, 'every other file runs on every Node')
})

t.test('tsc -b diagnostics are read per file, continuation lines included (test/helpers/type-graph.ts)', async (t) => {
  const output = [
    "test/fixtures/types/root.ts(6,10): error TS2339: Property 'auth' does not exist on type 'FastifyInstance'.",
    'test/types/index.tst.ts(3,1): error TS2322: Type \'string\' is not assignable to type \'number\'.',
    "  Type 'a' is not assignable to type 'b'.",
    "error TS5083: Cannot read file '/x/tsconfig.json'."
  ].join('\n')
  const found = parseDiagnostics(output)
  t.same(found.map((d) => [d.file, d.line, d.code]), [['test/fixtures/types/root.ts', 6, 'TS2339'], ['test/types/index.tst.ts', 3, 'TS2322'], ['', 0, 'TS5083']])
  t.match(found[1]!.message, /not assignable to type 'number'\.\nType 'a' is not assignable/, 'the indented line belongs to the error above it')
  t.same(parseDiagnostics(''), [], 'nothing printed, nothing found')
})

t.test('eventually() asks again until the answer is accepted, with no deadline of its own', async (t) => {
  let asked = 0
  t.equal(await eventually(async () => ++asked, (n) => n === 3, 0), 3)
  t.equal(asked, 3, 'asked three times')
})
