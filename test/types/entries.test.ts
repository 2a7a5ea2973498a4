/**
 * Which entry declares what (issue 23 item 7): each fixture is compiled as its own program, so only the
 * declaration merging its imports bring is in effect (in the repository's program every file is, so this cannot
 * be a .tst.ts file).
 */
import t from 'tap'
import ts from 'typescript'
import { fileURLToPath } from 'node:url'
import { sharedFilesHost } from '../helpers/compiler-host.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

// Each program type-checks the whole project it reaches (about twenty CPU seconds each when nothing is known from
// an earlier run): on a loaded 2-core machine, beside another job and a CPU-bound process, that is minutes.
t.setTimeout(600_000)

const config = ts.readConfigFile(`${root}tsconfig.json`, (f) => ts.sys.readFile(f))
const options: ts.CompilerOptions = { ...ts.parseJsonConfigFileContent(config.config, ts.sys, root).options, noEmit: true }
// Both programs have the same options: each file is parsed once for both.
const host = sharedFilesHost(options, ts.createIncrementalCompilerHost(options))

/**
 * Every diagnostic of the fixture's program (as `tsc --noEmit` would report them). TypeScript's own incremental
 * check (`tsc --incremental`): what an earlier run found is kept in .tap/ts-cache/, and only the files that changed
 * since, and those whose view of a changed file's declarations changed, are checked again.
 */
function diagnostics (fixture: string): string[] {
  const program = ts.createIncrementalProgram({
    rootNames: [`${root}test/fixtures/types/${fixture}`],
    options: { ...options, incremental: true, tsBuildInfoFile: `${root}.tap/ts-cache/entries-${fixture}.tsbuildinfo` },
    host
  })
  const found = [
    ...program.getConfigFileParsingDiagnostics(), ...program.getOptionsDiagnostics(), ...program.getSyntacticDiagnostics(),
    ...program.getGlobalDiagnostics(), ...program.getSemanticDiagnostics(), ...program.getDeclarationDiagnostics()
  ]
  // With noEmit, emitting writes the build info alone.
  program.emit()
  return found.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}

t.test('fastify-gatehouse/toolkit alone declares no fastify.auth', async (t) => {
  t.same(diagnostics('toolkit-alone.ts'), [])
})

t.test('the root entry declares them', async (t) => {
  t.same(diagnostics('root.ts'), [])
})
