/**
 * Option types under `exactOptionalPropertyTypes`, a default of `tsc --init` (issue 37 item 15). Every optional
 * property of the package's types takes `undefined` (so `stateStore: process.env.REDIS_URL` compiles), and an app
 * that fills its options from the environment compiles with that flag: test/fixtures/types/exact-optional.ts,
 * compiled here with the package's sources as its library (only the fixture's own diagnostics count, as
 * `skipLibCheck` counts only an app's own files). test/package/scratch-app.test.ts compiles the README's tutorial
 * against the packed declarations with `tsc --init`'s whole configuration.
 */
import t from 'tap'
import ts from 'typescript'
import { fileURLToPath } from 'node:url'
import { exactOptionalProgram, offenders, where } from './optional-properties.js'

// One TypeScript program over the whole package: about 40 s on a quiet 2-core machine, 90 s or more on a loaded one.
t.setTimeout(300_000)

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/types/${name}`, import.meta.url))
const program = exactOptionalProgram([fixture('exact-optional.ts'), fixture('exact-optional-refused.ts')])
const errors = (file: string): string[] => ts.getPreEmitDiagnostics(program, program.getSourceFile(file))
  .map((d) => `${d.start === undefined ? '' : `${d.file!.getLineAndCharacterOfPosition(d.start).line + 1}: `}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)

t.test('every optional property of the package\'s types takes undefined', async (t) => {
  t.same(offenders(program).map(where), [],
    'write `name?: T | undefined` (or run node --import ./test/helpers/ts-loader.mjs test/types/optional-properties.ts --fix)')
})

t.test('an app filling its options from process.env compiles with exactOptionalPropertyTypes', async (t) => {
  t.same(errors(fixture('exact-optional.ts')), [])
})

t.test('the flag is on: an optional property without undefined refuses process.env', async (t) => {
  const refused = errors(fixture('exact-optional-refused.ts'))
  t.equal(refused.length, 1, 'one error')
  t.match(refused[0], /^\d+: Type '\{ store: string \| undefined; \}' is not assignable to type 'Strict' with 'exactOptionalPropertyTypes: true'/)
})
