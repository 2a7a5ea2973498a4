/**
 * Where the suite's time goes: per group, the wall time (tap's `# time=` of the group's runner) and the CPU time
 * (user + system, the group process's own and its child processes'), heaviest first, then the heaviest files,
 * and the whole run's wall and CPU time with the load average before and after. CPU seconds are what to judge a
 * change on while the machine is shared: load stretches wall time much more than it moves CPU time.
 *
 *   npm run test:profile                     runs `npm test` (tap's arguments after `--`), then prints the table
 *   npm run test:profile -- --log run.log    prints the table of a saved run (`npm test 2>&1 | tee run.log`)
 *
 * A run's log is kept in .tap/profile.log.
 */
import { spawn } from 'node:child_process'
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { cpuSeconds } from './cpu-time.js'

interface Row { name: string; wall: number; own: number; children: number }

const cpu = (r: Row): number => r.own + r.children
const s = (n: number): string => n.toFixed(1).padStart(7)

/** The groups and files of a tap log of `npm test` (stdout and stderr). */
export function parseLog (log: string): { groups: Row[]; files: Row[]; total?: string; wall?: number } {
  const groups = new Map<string, Row>()
  const files = new Map<string, Row>()
  const row = (map: Map<string, Row>, name: string): Row => map.get(name) ?? map.set(name, { name, wall: 0, own: 0, children: 0 }).get(name)!
  for (const line of log.split('\n')) {
    let m = /^(?:not )?ok \d+ - test\/groups\/(.+)\.test\.ts(?: # time=([\d.]+)ms)?/.exec(line)
    if (m !== null) { row(groups, m[1]!).wall = Number(m[2] ?? 0) / 1000; continue }
    m = /^# group (\S+): cpu ([\d.]+) s \+ ([\d.]+) s in child processes/.exec(line)
    if (m !== null) { const r = row(groups, m[1]!); r.own = Number(m[2]); r.children = Number(m[3]); continue }
    m = /^ {4}(?:not )?ok \d+ - (test\/\S+\.test\.ts)(?: # (?:SKIP.*|time=([\d.]+)ms))?/.exec(line)
    if (m !== null) { row(files, m[1]!).wall = Number(m[2] ?? 0) / 1000; continue }
    m = /^ +# cpu ([\d.]+) s \+ ([\d.]+) s in child processes: (\S+)/.exec(line)
    if (m !== null) { const r = row(files, m[3]!); r.own = Number(m[1]); r.children = Number(m[2]) }
  }
  const total = /^# \{ total: .+\}$/m.exec(log)?.[0]
  const wall = /^# time=([\d.]+)ms$/m.exec(log.slice(log.lastIndexOf('# time=')))?.[1]
  return { groups: [...groups.values()], files: [...files.values()], total, ...(wall === undefined ? {} : { wall: Number(wall) / 1000 }) }
}

/** The table: groups by CPU time, then the `top` heaviest files. */
export function table (log: string, top = 25): string {
  const { groups, files, total, wall } = parseLog(log)
  const head = (what: string, width: number, cols = ['wall s', 'cpu s', 'own', 'child']): string => what.padEnd(width) + cols.map((c) => c.padStart(7)).join('')
  const out = [head('group', 28)]
  for (const g of [...groups].sort((a, b) => cpu(b) - cpu(a))) out.push(`${g.name.padEnd(28)}${s(g.wall)}${s(cpu(g))}${s(g.own)}${s(g.children)}`)
  out.push(`${'all groups'.padEnd(28)}${s(groups.reduce((n, g) => n + g.wall, 0))}${s(groups.reduce((n, g) => n + cpu(g), 0))}`)
  out.push('', head(`heaviest files by CPU (of ${files.length})`, 52))
  for (const f of [...files].sort((a, b) => cpu(b) - cpu(a)).slice(0, top)) out.push(`${f.name.padEnd(52).slice(-52)}${s(f.wall)}${s(cpu(f))}${s(f.own)}${s(f.children)}`)
  out.push('', head('heaviest files by wall time', 52, ['wall s', 'cpu s']))
  for (const f of [...files].sort((a, b) => b.wall - a.wall).slice(0, top)) out.push(`${f.name.padEnd(52).slice(-52)}${s(f.wall)}${s(cpu(f))}`)
  if (total !== undefined) out.push('', total)
  if (wall !== undefined) out.push(`tap's wall time: ${wall.toFixed(1)} s`)
  return out.join('\n')
}

async function main (args: string[]): Promise<number> {
  const at = args.indexOf('--log')
  if (at >= 0) {
    process.stdout.write(table(readFileSync(args[at + 1]!, 'utf8')) + '\n')
    return 0
  }
  const root = fileURLToPath(new URL('../..', import.meta.url))
  mkdirSync(`${root}.tap`, { recursive: true })
  const logFile = `${root}.tap/profile.log`
  const log = createWriteStream(logFile)
  const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ')
  const loadBefore = load()
  const started = performance.now()
  const before = cpuSeconds()
  const child = spawn('npm', ['test', ...(args.length > 0 ? ['--', ...args] : [])], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let text = ''
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (d: Buffer) => { text += d.toString(); log.write(d); process.stdout.write(d) })
  }
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  log.end()
  const after = cpuSeconds()
  const wall = (performance.now() - started) / 1000
  process.stdout.write(`\n${table(text)}\n\nnpm test: exit ${code}, wall ${wall.toFixed(1)} s, cpu ${(after.children - before.children).toFixed(1)} s (user + system of every process it started); load average ${loadBefore} before, ${load()} after; log in ${logFile}\n`)
  return code ?? 1
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main(process.argv.slice(2))
