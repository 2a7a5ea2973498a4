/**
 * The API reports (issue 44 item 1): one `etc/<entry>.api.md` per entry of package.json `exports`, written by
 * @microsoft/api-extractor from the emitted declarations (`dist/`) with every signature, and `etc/names.md`, the
 * names of each entry as the compiler sees them (kind, and whether deprecated: the extractor shows a name's own
 * `@deprecated`, not one on its export), with the name limits of each entry (test/helpers/api-surface.ts).
 *
 *   npm run api          builds, then rewrites the reports (commit them with the change that moved the surface)
 *   npm run api:check    fails when a report differs from the built surface or an entry is above its limit
 *
 * A changed report is a change of the public API: see CONTRIBUTING.md ("The public API").
 */
import { Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from '@microsoft/api-extractor'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ENTRIES, kept, surface, surfaceProblems, surfaceSummary, type Entry, type ExportedName } from './api-surface.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const update = process.argv.includes('--update')

/** The report's file name: `root` for `.`, else the subpath's name (`providers`, `toolkit`, …). */
export function reportName (entry: Entry): string {
  return entry.subpath === '.' ? 'root' : entry.subpath.slice(2)
}

/** The extractor's configuration for one entry: a report only (no doc model, no rollup), messages into the report. */
function config (entry: Entry): IConfigFile {
  return {
    projectFolder: root,
    mainEntryPointFilePath: join(root, entry.dts),
    compiler: {
      // The declarations alone, with the options the package is built with (tsconfig.json), less what is not
      // about declarations.
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023'], types: ['node'], strict: true, skipLibCheck: true
        },
        include: [entry.dts]
      }
    },
    apiReport: {
      enabled: true,
      reportFolder: join(root, 'etc'),
      reportTempFolder: join(root, '.tap/api-report'),
      reportFileName: reportName(entry)
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      // The package uses no release tags (@public, @beta…); a name referenced by the surface but exported by no
      // entry is written into the report, where a reviewer sees it, and so is nothing else.
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: true }
      },
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } }
    }
  }
}

/** Sources newer than their build: the reports would describe an older one. */
function staleBuild (): string[] {
  const stale: string[] = []
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir === '' ? e.name : `${dir}/${e.name}`
      if (e.isDirectory()) { if (!['node_modules', 'dist', 'test', 'example', 'bench', 'docs', 'etc', '.tap', '.git'].includes(e.name)) walk(path); continue }
      if (!path.endsWith('.ts') || path.endsWith('.d.ts')) continue
      const dts = join(root, 'dist', path.replace(/\.ts$/, '.d.ts'))
      let built: number
      // tsc leaves a declaration file alone when its text is unchanged (a function's body edited): the later of
      // the two outputs tells when the source was last built.
      try { built = Math.max(statSync(dts).mtimeMs, statSync(dts.replace(/\.d\.ts$/, '.js')).mtimeMs) } catch { stale.push(`${path} (not built)`); continue }
      if (statSync(join(root, path)).mtimeMs > built) stale.push(path)
    }
  }
  walk('')
  return stale
}

const stale = staleBuild()
if (stale.length > 0) {
  console.error(`api: dist/ is older than ${stale.slice(0, 5).join(', ')}${stale.length > 5 ? ` and ${stale.length - 5} more` : ''}: run npm run build first`)
  process.exit(1)
}

mkdirSync(join(root, 'etc'), { recursive: true })
let failed = false
for (const entry of ENTRIES) {
  const prepared = ExtractorConfig.prepare({
    configObject: config(entry),
    configObjectFullPath: join(root, 'etc/api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json')
  })
  const result = Extractor.invoke(prepared, { localBuild: update, messageCallback: (m) => { if (m.logLevel === ExtractorLogLevel.Info) m.handled = true } })
  const file = relative(root, join(root, 'etc', `${reportName(entry)}.api.md`))
  if (result.apiReportChanged && !update) {
    failed = true
    console.error(`api: ${file} is not the surface of fastify-gatehouse${entry.subpath.slice(1)}: the public API changed.`)
    console.error(`     Review the difference (diff ${file} .tap/api-report/${reportName(entry)}.api.md), then run npm run api and commit ${file}`)
    console.error('     with a CHANGELOG entry (a public API change; a moved or renamed name keeps a deprecated alias: CONTRIBUTING.md).')
  } else if (!result.succeeded) {
    failed = true
    console.error(`api: API Extractor failed on ${entry.dts} (${result.errorCount} errors)`)
  } else if (result.apiReportChanged) {
    console.log(`api: ${file} updated`)
  }
}

const names = surface(root, 'dts')
console.log(surfaceSummary(names).map((l) => `api: ${l}`).join('\n'))
for (const problem of surfaceProblems(names)) { failed = true; console.error(`api: ${problem}`) }
const namesFile = join(root, 'etc/names.md')
const text = namesReport(names)
let committed: string | undefined
try { committed = readFileSync(namesFile, 'utf8') } catch {}
if (committed !== text) {
  if (update) {
    writeFileSync(namesFile, text)
    console.log('api: etc/names.md updated')
  } else {
    failed = true
    writeFileSync(join(root, '.tap/api-report/names.md'), text)
    console.error('api: etc/names.md is not the names of the built entries: the public API changed.')
    console.error('     Review the difference (diff etc/names.md .tap/api-report/names.md), then run npm run api and commit it.')
  }
}
if (failed) process.exitCode = 1

/** etc/names.md: per entry, its names in 1.0 and the deprecated ones it keeps until then. */
function namesReport (all: Map<Entry, ExportedName[]>): string {
  const line = (n: ExportedName): string => `\`${n.name}\` ${n.kind === 'type' ? '' : n.kind === 'value' ? '(value)' : '(value, type)'}`.trim()
  const out = [
    '# The names of each entry',
    '',
    'Written by `npm run api` from the built declarations (test/helpers/api-report.ts); `npm run api:check` fails when',
    'it differs from the build. The signatures are in the `<entry>.api.md` reports beside this file.',
    ''
  ]
  for (const [entry, list] of all) {
    const now = kept(list)
    const old = list.filter((n) => n.deprecated)
    out.push(`## fastify-gatehouse${entry.subpath.slice(1)}: ${now.length} names${entry.limit === undefined ? '' : ` (limit ${entry.limit})`}`, '')
    out.push(...now.map((n) => `- ${line(n)}`), '')
    if (old.length > 0) out.push(`Deprecated until 1.0 (${old.length}):`, '', ...old.map((n) => `- ${line(n)}`), '')
  }
  return out.join('\n')
}
