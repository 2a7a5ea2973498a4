/**
 * The TypeScript graph of tsconfig.json, built with `tsc -b` for the tests that need its output: the package's
 * emitted declarations and dist/ (the packed tarball, the docs' option types) and the diagnostics of its projects
 * (the type tests, the docs' examples, the entry and exact-optional fixtures). `tsc -b` rebuilds only what changed
 * since its build info (dist/*.tsbuildinfo): after `npm run build` or `npm run typecheck` (as in CI) it is an
 * up-to-date check of a fraction of a second; `npm test` alone on a fresh clone builds once.
 *
 * Once per test process, and one process at a time: two group processes building dist/ at once would read each
 * other's half-written files, so a lock file (.tap/tsc-b.lock, with the holder's pid) makes the second wait and then
 * find everything up to date. tsc runs in a child process (none of this project's code: no coverage).
 */
import { spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** One diagnostic of `tsc -b --pretty false`: the file (from the repository root), its line, and the message. */
export interface GraphDiagnostic { file: string; line: number; code: string; message: string }

export interface GraphBuild {
  /** tsc's exit code: 0 when every project compiled without error. */
  code: number | null
  /** Everything tsc printed. */
  output: string
  diagnostics: GraphDiagnostic[]
}

/** The diagnostics of `tsc --pretty false` output: `file(line,col): error TS1234: message` and its indented lines. */
export function parseDiagnostics (output: string): GraphDiagnostic[] {
  const out: GraphDiagnostic[] = []
  for (const line of output.split('\n')) {
    const m = /^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/.exec(line)
    if (m !== null) out.push({ file: m[1]!, line: Number(m[2]), code: m[3]!, message: m[4]! })
    else if (/^\s+\S/.test(line) && out.length > 0) out.at(-1)!.message += `\n${line.trim()}`
    else if (/^error (TS\d+): (.*)$/.test(line)) out.push({ file: '', line: 0, code: /TS\d+/.exec(line)![0], message: line })
  }
  return out
}

/** Whether the process `pid` is alive (a lock left by a process that died is taken over). */
function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM' }
}

/** Holds .tap/tsc-b.lock while `fn` runs; another process's lock is waited for (polled: it announces nothing). */
async function locked<T> (fn: () => Promise<T>): Promise<T> {
  mkdirSync(`${root}.tap`, { recursive: true })
  const file = `${root}.tap/tsc-b.lock`
  for (;;) {
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      let holder = NaN
      try { holder = Number(readFileSync(file, 'utf8')) } catch {}
      if (Number.isInteger(holder) && holder > 0 && !alive(holder)) { try { unlinkSync(file) } catch {} continue }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  try {
    return await fn()
  } finally {
    unlinkSync(file)
  }
}

/** Runs `tsc -b <project> --pretty false` from the repository root. */
async function tscBuild (project: string): Promise<GraphBuild> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && k !== 'NODE_V8_COVERAGE' && !k.startsWith('TAP')))
  const child = spawn(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-b', project, '--pretty', 'false'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  return { code, output, diagnostics: parseDiagnostics(output) }
}

let graph: Promise<GraphBuild> | undefined

/** The whole graph (tsconfig.json) built and checked: dist/ up to date, and every project's diagnostics. */
export async function typeGraph (): Promise<GraphBuild> {
  graph ??= locked(async () => await tscBuild('tsconfig.json'))
  return await graph
}

/** The diagnostics of the graph in `file` (a path from the repository root). */
export async function diagnosticsIn (file: string): Promise<GraphDiagnostic[]> {
  return (await typeGraph()).diagnostics.filter((d) => d.file === file)
}
