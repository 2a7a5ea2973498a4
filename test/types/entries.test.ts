/**
 * Which entry declares what (issue 23 item 7): each fixture is a project of its own in the TypeScript graph
 * (test/fixtures/types/tsconfig.<fixture>.json, checked against the package's emitted declarations), so only the
 * declaration merging its imports bring is in effect (in the package's project every file is, so this cannot be a
 * .tst.ts file). The graph is built once (test/helpers/type-graph.ts); after `npm run typecheck` it is up to date.
 */
import t from 'tap'
import { diagnosticsIn, typeGraph } from '../helpers/type-graph.js'

// `tsc -b` of the whole graph: a fraction of a second when up to date, about 40 CPU seconds from nothing (minutes
// on a loaded 2-core machine).
t.setTimeout(600_000)

t.test('the TypeScript graph builds: every project compiles', async (t) => {
  const { code, output } = await typeGraph()
  t.equal(code, 0, 'tsc -b tsconfig.json', { output: output.slice(-5000) })
})

t.test('fastify-gatehouse/toolkit alone declares no fastify.auth', async (t) => {
  t.same(await diagnosticsIn('test/fixtures/types/toolkit-alone.ts'), [])
})

t.test('the root entry declares them', async (t) => {
  t.same(await diagnosticsIn('test/fixtures/types/root.ts'), [])
})
