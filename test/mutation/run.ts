/**
 * The mutation run over the security code (`npm run mutation`; SPEC §6.16, issue 43). Each mutant of mutants.ts is
 * one deliberate bug (a comparison flipped, a check dropped, a constant changed): the run writes it into the source
 * file, runs the test files that should notice it, each in a process of its own with the suite's loaders, and puts
 * the file back. A mutant is killed when a test file fails (or runs past its time limit), and survives when they
 * all pass: then no test holds that behaviour. The run ends non-zero below a 90% score.
 *
 * Before the mutants, every test file named is run once unmutated (the baseline: a file failing already would kill
 * every mutant and prove nothing) and its time sets its limit under a mutant. A mutant's original text must occur
 * exactly once in its file, so that a later edit of the code makes the run say which mutant to update rather than
 * mutate something else.
 *
 * The source is restored after each mutant, on Ctrl-C and on a crash of this process; should the process be killed
 * outright, the next run restores the file from the journal it left in `.tap/` before anything else.
 *
 * Options: `--only <regexp>` (mutants whose id, area or file match), `--list` (the mutants, nothing run), `--check`
 * (the list checked against the sources, nothing run), `--threshold <percent>` (default 90). A test file named here
 * runs under plain `node` with the suite's loaders (package.json `tap.node-arg`), not under tap's runner: it cannot
 * use `t.mockImport`, which needs tap's own loader (the baseline would fail and say so). Not part of `npm test` or CI: it runs each mutant's files again, some
 * minutes in all (CONTRIBUTING.md gives the last figure).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MUTANTS, type Mutant } from './mutants.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const JOURNAL = join(root, '.tap', 'mutation-journal.json')
const REPORT = join(root, '.tap', 'mutation-report.json')
/** A test file under a mutant may take this many times its baseline (and at least MIN_LIMIT_MS) before it counts as hung. */
const LIMIT_FACTOR = 5
const MIN_LIMIT_MS = 30_000

type Verdict = 'killed' | 'timeout' | 'survived'
interface Outcome { mutant: Mutant; verdict: Verdict; by?: string | undefined; ms: number }
interface FileRun { ok: boolean; timedOut: boolean; ms: number; output: string }

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(name)
  return i === -1 ? undefined : args[i + 1]
}
const only = option('--only')
const threshold = Number(option('--threshold') ?? 90)
/** The suite's loaders (package.json `tap.node-arg`): the TypeScript loader and the audit-event secret check. */
const nodeArgs = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { tap: { 'node-arg': string[] } }).tap['node-arg']

let applied: { file: string; original: string } | undefined
let child: ChildProcess | undefined

/** Puts the mutated file back (and forgets the journal). Safe to call at any time, any number of times. */
function restore (): void {
  if (applied !== undefined) {
    writeFileSync(join(root, applied.file), applied.original)
    applied = undefined
  }
  rmSync(JOURNAL, { force: true })
}

/** A journal left by a run that was killed outright: its file is restored before this run starts. */
function restoreLeftover (): void {
  if (!existsSync(JOURNAL)) return
  const left = JSON.parse(readFileSync(JOURNAL, 'utf8')) as { file: string; original: string }
  writeFileSync(join(root, left.file), left.original)
  rmSync(JOURNAL)
  console.log(`# restored ${left.file} from the journal of an interrupted run`)
}

function apply (mutant: Mutant, source: string): void {
  mkdirSync(dirname(JOURNAL), { recursive: true })
  writeFileSync(JOURNAL, JSON.stringify({ file: mutant.file, original: source }))
  applied = { file: mutant.file, original: source }
  writeFileSync(join(root, mutant.file), source.replace(mutant.from, () => mutant.to))
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (child?.pid !== undefined) try { process.kill(-child.pid, 'SIGKILL') } catch {}
    restore()
    console.log(`\n# ${signal}: the source is restored`)
    process.exit(130)
  })
}
process.on('exit', restore)

/** Runs one test file in a process (group) of its own; killed past `limitMs`. */
async function runFile (file: string, limitMs: number): Promise<FileRun> {
  const started = Date.now()
  return await new Promise((resolve) => {
    let output = ''
    const proc = spawn(process.execPath, [...nodeArgs, file], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    child = proc
    const keep = (chunk: Buffer): void => { output = (output + chunk.toString()).slice(-20_000) }
    proc.stdout!.on('data', keep)
    proc.stderr!.on('data', keep)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try { process.kill(-proc.pid!, 'SIGKILL') } catch {}
    }, limitMs)
    proc.on('close', (code, signal) => {
      clearTimeout(timer)
      child = undefined
      // A test file left a process behind in its group (a server it started): ended with the file.
      try { process.kill(-proc.pid!, 'SIGKILL') } catch {}
      resolve({ ok: code === 0 && signal === null && !timedOut, timedOut, ms: Date.now() - started, output })
    })
  })
}

/** Problems that make the list itself wrong: a snippet missing or ambiguous, a test file missing, an id twice. */
function check (mutants: readonly Mutant[]): string[] {
  const problems: string[] = []
  const ids = new Set<string>()
  for (const m of mutants) {
    if (ids.has(m.id)) problems.push(`${m.id}: the id is used twice`)
    ids.add(m.id)
    if (!existsSync(join(root, m.file))) { problems.push(`${m.id}: ${m.file} does not exist`); continue }
    const count = readFileSync(join(root, m.file), 'utf8').split(m.from).length - 1
    if (count !== 1) problems.push(`${m.id}: its original text occurs ${count} times in ${m.file} (it must occur once): update the mutant`)
    if (m.from === m.to) problems.push(`${m.id}: the mutant changes nothing`)
    for (const test of m.tests) if (!existsSync(join(root, test))) problems.push(`${m.id}: ${test} does not exist`)
    if (m.tests.length === 0) problems.push(`${m.id}: no test file named`)
  }
  return problems
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

async function main (): Promise<number> {
  restoreLeftover()
  const pattern = only === undefined ? undefined : new RegExp(only)
  const mutants = MUTANTS.filter((m) => pattern === undefined || pattern.test(m.id) || pattern.test(m.area) || pattern.test(m.file))
  if (args.includes('--list')) {
    for (const m of mutants) console.log(`${m.id.padEnd(28)} ${m.area.padEnd(22)} ${m.file}: ${m.breaks}`)
    console.log(`# ${mutants.length} mutants`)
    return 0
  }
  const problems = check(mutants)
  if (problems.length > 0) {
    for (const p of problems) console.log(`not ok - ${p}`)
    return 2
  }
  if (args.includes('--check')) {
    console.log(`ok - ${mutants.length} mutants: each original text occurs once, each test file exists`)
    return 0
  }
  const started = Date.now()
  const files = [...new Set(mutants.flatMap((m) => m.tests))]
  console.log(`# baseline: ${files.length} test files, unmutated`)
  const limits = new Map<string, number>()
  for (const file of files) {
    const run = await runFile(file, 10 * 60_000)
    if (!run.ok) {
      console.log(run.output)
      console.log(`not ok - baseline: ${file} fails without any mutant: fix it first`)
      return 2
    }
    limits.set(file, Math.max(MIN_LIMIT_MS, LIMIT_FACTOR * run.ms))
    console.log(`ok - baseline ${file} (${seconds(run.ms)})`)
  }
  const baselineMs = Date.now() - started
  console.log(`# ${mutants.length} mutants`)
  const outcomes: Outcome[] = []
  for (const [i, mutant] of mutants.entries()) {
    const source = readFileSync(join(root, mutant.file), 'utf8')
    const began = Date.now()
    let outcome: Outcome = { mutant, verdict: 'survived', ms: 0 }
    apply(mutant, source)
    try {
      for (const file of mutant.tests) {
        const run = await runFile(file, limits.get(file)!)
        if (!run.ok) { outcome = { mutant, verdict: run.timedOut ? 'timeout' : 'killed', by: file, ms: 0 }; break }
      }
    } finally {
      restore()
    }
    outcome.ms = Date.now() - began
    outcomes.push(outcome)
    const mark = outcome.verdict === 'survived' ? 'not ok' : 'ok'
    console.log(`${mark} ${i + 1} - ${outcome.verdict.padEnd(8)} ${mutant.id} (${mutant.file}: ${mutant.breaks})${outcome.by === undefined ? '' : ` by ${outcome.by}`} ${seconds(outcome.ms)}`)
  }
  const killed = outcomes.filter((o) => o.verdict !== 'survived').length
  const survivors = outcomes.filter((o) => o.verdict === 'survived')
  const score = outcomes.length === 0 ? 100 : 100 * killed / outcomes.length
  const areas = [...new Set(outcomes.map((o) => o.mutant.area))]
  console.log('\n# area                    mutants  killed')
  for (const area of areas) {
    const own = outcomes.filter((o) => o.mutant.area === area)
    console.log(`# ${area.padEnd(24)} ${String(own.length).padStart(7)} ${String(own.filter((o) => o.verdict !== 'survived').length).padStart(7)}`)
  }
  if (survivors.length > 0) {
    console.log('\n# survivors')
    for (const s of survivors) console.log(`# - ${s.mutant.id} (${s.mutant.file}): ${s.mutant.breaks}${s.mutant.accepted === undefined ? '  [NOT ACCEPTED: add a test that kills it]' : `\n#   accepted: ${s.mutant.accepted}`}`)
  }
  const totalMs = Date.now() - started
  console.log(`\n# ${outcomes.length} mutants: ${killed} killed (${outcomes.filter((o) => o.verdict === 'timeout').length} by time limit), ${survivors.length} survived`)
  console.log(`# score ${score.toFixed(1)}% (threshold ${threshold}%); ${seconds(totalMs)} in all, the baseline ${seconds(baselineMs)}`)
  writeFileSync(REPORT, JSON.stringify({ score, threshold, totalMs, baselineMs, outcomes: outcomes.map((o) => ({ id: o.mutant.id, area: o.mutant.area, verdict: o.verdict, by: o.by, ms: o.ms })) }, null, 2))
  return score >= threshold ? 0 : 1
}

process.exitCode = await main().catch((err: unknown) => {
  restore()
  console.error(err)
  return 2
})
