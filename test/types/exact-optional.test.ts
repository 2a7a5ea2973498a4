/**
 * Option types under `exactOptionalPropertyTypes`, a default of `tsc --init` (issue 37 item 15). Every optional
 * property of the package's types takes `undefined` (so `stateStore: process.env.REDIS_URL` compiles), and an app
 * that fills its options from the environment compiles with that flag: test/fixtures/types/exact-optional.ts, a
 * project of the TypeScript graph (tsconfig.exact-optional.json) compiled against the package's emitted
 * declarations, as an app is. test/package/scratch-app.test.ts compiles the README's tutorial against the packed
 * declarations with `tsc --init`'s whole configuration.
 */
import t from 'tap'
import ts from 'typescript'
import { fileURLToPath } from 'node:url'
import { exactOptionalProgram, offenders, where } from './optional-properties.js'
import { diagnosticsIn, typeGraph } from '../helpers/type-graph.js'

// `tsc -b` of the whole graph (test/helpers/type-graph.ts): a fraction of a second when up to date, about 40 CPU
// seconds from nothing (minutes on a loaded 2-core machine).
t.setTimeout(600_000)

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/types/${name}`, import.meta.url))

t.test('every optional property of the package\'s types takes undefined', async (t) => {
  t.equal((await typeGraph()).code, 0, 'the declarations are built')
  t.same(offenders(exactOptionalProgram([], 'declarations'), 'declarations').map(where), [],
    'write `name?: T | undefined` (or run node --import ./test/helpers/ts-loader.mjs test/types/optional-properties.ts --fix)')
})

t.test('an app filling its options from process.env compiles with exactOptionalPropertyTypes', async (t) => {
  t.same(await diagnosticsIn('test/fixtures/types/exact-optional.ts'), [])
})

t.test('the flag is on: an optional property without undefined refuses process.env', async (t) => {
  // A file of its own (it must fail to compile, so it is in no project of the graph): the flag as the fixture
  // project sets it, and nothing else to load but Node's types.
  const file = fixture('exact-optional-refused.ts')
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, exactOptionalPropertyTypes: true, skipLibCheck: true, noEmit: true, types: ['node']
  })
  const refused = ts.getPreEmitDiagnostics(program, program.getSourceFile(file))
    .map((d) => `${d.start === undefined ? '' : `${d.file!.getLineAndCharacterOfPosition(d.start).line + 1}: `}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
  t.equal(refused.length, 1, 'one error')
  t.match(refused[0], /^\d+: Type '\{ store: string \| undefined; \}' is not assignable to type 'Strict' with 'exactOptionalPropertyTypes: true'/)
  const config = ts.readConfigFile(fixture('tsconfig.exact-optional.json'), (f) => ts.sys.readFile(f)).config as { compilerOptions: Record<string, unknown> }
  t.equal(config.compilerOptions.exactOptionalPropertyTypes, true, 'and the fixture project compiles with it')
})
