/**
 * `npm run bench:import`: what importing the package costs, against importing Fastify itself. Each entry is
 * imported in a fresh Node process, five times, alternating between entries; the medians of wall time and peak
 * RSS are printed with their ratio to `import('fastify')`. Measured with `/usr/bin/time -v` when it exists,
 * otherwise by the child itself (time since process start, `process.resourceUsage().maxRSS`).
 * Target: each package entry at most 1.3x Fastify's wall time and peak RSS.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const ROUNDS = 5
const TARGET = 1.3
const ENTRIES = ['fastify', 'fastify-gatehouse', 'fastify-gatehouse/toolkit']
const cwd = fileURLToPath(new URL('../..', import.meta.url))
const useTime = existsSync('/usr/bin/time')

interface Sample { wallMs: number; rssKb: number }

function once (entry: string): Sample {
  const script = `await import(${JSON.stringify(entry)}); if (!${useTime}) console.log(JSON.stringify({ wallMs: performance.now(), rssKb: process.resourceUsage().maxRSS }))`
  const args = ['--input-type=module', '-e', script]
  if (!useTime) {
    const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`import(${entry}) failed: ${r.stderr}`)
    return JSON.parse(r.stdout) as Sample
  }
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, ...args], { cwd, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`import(${entry}) failed: ${r.stderr}`)
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr)
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)
  if (wall === null || rss === null) throw new Error('/usr/bin/time -v printed no wall time or RSS')
  const wallMs = ((Number(wall[1] ?? 0) * 60 + Number(wall[2])) * 60 + Number(wall[3])) * 1000
  return { wallMs, rssKb: Number(rss[1]) }
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]! }

const samples = new Map<string, Sample[]>(ENTRIES.map((e) => [e, []]))
for (let round = 0; round < ROUNDS; round++) for (const entry of ENTRIES) samples.get(entry)!.push(once(entry))

console.log(`\n## Import cost (median of ${ROUNDS}, ${useTime ? '/usr/bin/time -v' : 'measured in the child'}; Node ${process.version})`)
console.log(`${'entry'.padEnd(30)} ${'wall ms'.padStart(8)} ${'ratio'.padStart(6)} ${'peak RSS MB'.padStart(12)} ${'ratio'.padStart(6)}  target <= ${TARGET}x`)
const base = samples.get('fastify')!
const baseWall = median(base.map((s) => s.wallMs))
const baseRss = median(base.map((s) => s.rssKb))
let below = false
for (const entry of ENTRIES) {
  const s = samples.get(entry)!
  const wall = median(s.map((x) => x.wallMs))
  const rss = median(s.map((x) => x.rssKb))
  const rw = wall / baseWall
  const rr = rss / baseRss
  const verdict = entry === 'fastify' ? 'baseline' : rw <= TARGET && rr <= TARGET ? 'ok' : 'ABOVE'
  if (verdict === 'ABOVE') below = true
  console.log(`${entry.padEnd(30)} ${wall.toFixed(0).padStart(8)} ${rw.toFixed(2).padStart(5)}x ${(rss / 1024).toFixed(1).padStart(12)} ${rr.toFixed(2).padStart(5)}x  ${verdict}`)
}
if (below) process.exitCode = 1
