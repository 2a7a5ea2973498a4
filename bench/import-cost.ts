/**
 * `npm run bench:import`: what importing the package costs, against importing Fastify itself (issue 46 item 3).
 * Each entry is imported in a fresh Node process, seven times, alternating between entries (so that a change of
 * the machine's load falls on every entry alike); the medians of wall time and peak RSS are printed with their
 * ratio to `import('fastify')`. Measured with `/usr/bin/time -v` when it exists, otherwise by the child itself
 * (time since process start, `process.resourceUsage().maxRSS`).
 *
 * Beside the times, the modules each import loads (ES modules of the package, of node_modules, Node's own, and
 * CommonJS modules): a figure the machine's load does not move, so a change can be judged on a busy machine.
 *
 * Targets (wall time): the root entry at most 1.20x Fastify's, the toolkit entry at most 1.15x.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROUNDS = 7
const TARGETS: Record<string, number | undefined> = { fastify: undefined, 'fastify-gatehouse': 1.2, 'fastify-gatehouse/toolkit': 1.15 }
const ENTRIES = Object.keys(TARGETS)
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

interface Modules { packageEsm: number; otherEsm: number; builtin: number; commonJs: number }

/**
 * The modules one import loads: a loader hook (in its own thread) writes each ES module's URL to a file; the
 * CommonJS modules are the `require` cache's entries.
 */
function modules (entry: string, dir: string): Modules {
  const log = join(dir, `${entry.replace(/\W/g, '_')}.log`)
  const hooks = join(dir, 'hooks.mjs')
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs'\nexport async function load (url, ctx, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, ctx) }\n`)
  const register = join(dir, 'register.mjs')
  writeFileSync(register, `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)
  const script = `await import(${JSON.stringify(entry)}); const { createRequire } = await import('node:module'); console.log(Object.keys(createRequire(import.meta.url).cache).length)`
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, '--input-type=module', '-e', script], { cwd, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`import(${entry}) failed: ${r.stderr}`)
  const urls = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((u) => u !== '') : []
  const own = urls.filter((u) => u.startsWith(pathToFileURL(join(cwd, 'dist')).href) || (u.includes('/fastify-gatehouse/') && !u.includes('/node_modules/fastify-gatehouse/node_modules/')))
  const builtin = urls.filter((u) => u.startsWith('node:'))
  return { packageEsm: own.length, otherEsm: urls.length - own.length - builtin.length, builtin: builtin.length, commonJs: Number(r.stdout.trim()) }
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]! }

const samples = new Map<string, Sample[]>(ENTRIES.map((e) => [e, []]))
for (let round = 0; round < ROUNDS; round++) for (const entry of ENTRIES) samples.get(entry)!.push(once(entry))
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-import-'))
const loaded = new Map(ENTRIES.map((e) => [e, modules(e, dir)]))
rmSync(dir, { recursive: true, force: true })

console.log(`\n## Import cost (median of ${ROUNDS}, alternated, ${useTime ? '/usr/bin/time -v' : 'measured in the child'}; Node ${process.version})`)
console.log(`${'entry'.padEnd(28)} ${'wall ms'.padStart(8)} ${'ratio'.padStart(6)} ${'target'.padStart(7)} ${'peak RSS MB'.padStart(12)} ${'ratio'.padStart(6)}   modules: package ESM, other ESM, node:, CommonJS`)
const base = samples.get('fastify')!
const baseWall = median(base.map((s) => s.wallMs))
const baseRss = median(base.map((s) => s.rssKb))
let above = false
for (const entry of ENTRIES) {
  const s = samples.get(entry)!
  const wall = median(s.map((x) => x.wallMs))
  const rss = median(s.map((x) => x.rssKb))
  const rw = wall / baseWall
  const target = TARGETS[entry]
  const verdict = target === undefined ? 'baseline' : rw <= target ? 'ok' : 'ABOVE'
  if (verdict === 'ABOVE') above = true
  const m = loaded.get(entry)!
  console.log(`${entry.padEnd(28)} ${wall.toFixed(0).padStart(8)} ${rw.toFixed(2).padStart(5)}x ${(target === undefined ? '' : `${target.toFixed(2)}x`).padStart(7)} ${(rss / 1024).toFixed(1).padStart(12)} ${(rss / baseRss).toFixed(2).padStart(5)}x   ${m.packageEsm}, ${m.otherEsm}, ${m.builtin}, ${m.commonJs}  ${verdict}`)
}
if (above) process.exitCode = 1
