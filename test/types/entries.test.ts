/**
 * Which entry declares what (issue 23 item 7): each fixture is compiled as its own program, so only the
 * declaration merging its imports bring is in effect (in the repository's program every file is, so this cannot
 * be a .tst.ts file).
 */
import t from 'tap'
import ts from 'typescript'
import { fileURLToPath } from 'node:url'

// One TypeScript program over the whole package: about 40 s on a quiet 2-core machine, 90 s or more on a loaded one.
t.setTimeout(300_000)

const root = fileURLToPath(new URL('../../', import.meta.url))

function diagnostics (fixture: string): string[] {
  const config = ts.readConfigFile(`${root}tsconfig.json`, (f) => ts.sys.readFile(f))
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
  const program = ts.createProgram([`${root}test/fixtures/types/${fixture}`], { ...options, noEmit: true, incremental: false })
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}

t.test('fastify-gatehouse/toolkit alone declares no fastify.auth', async (t) => {
  t.same(diagnostics('toolkit-alone.ts'), [])
})

t.test('the root entry declares them', async (t) => {
  t.same(diagnostics('root.ts'), [])
})
