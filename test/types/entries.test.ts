/**
 * Which entry declares what (issue 23 item 7): each fixture is compiled as its own program, so only the
 * declaration merging its imports bring is in effect (in the repository's program every file is, so this cannot
 * be a .tst.ts file).
 */
import t from 'tap'
import ts from 'typescript'
import { fileURLToPath } from 'node:url'
import { sharedFilesHost } from '../helpers/compiler-host.js'

// One TypeScript program over the whole package: about 40 s on a quiet 2-core machine, 90 s or more on a loaded one.
t.setTimeout(300_000)

// One TypeScript program over the whole package: about 40 s on a quiet 2-core machine, 90 s or more on a loaded one.
t.setTimeout(300_000)

const root = fileURLToPath(new URL('../../', import.meta.url))

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
