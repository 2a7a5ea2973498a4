/**
 * Summarises V8 CPU profiles of benchmark servers (`BENCH_CPU_PROF=<dir> npm run bench -- ladder` writes one per
 * server process into `<dir>/<app>/`): `node dist/bench/profile-summary.js <dir or .cpuprofile> …`. For each
 * argument (a folder's profiles merged) it prints the busy time (everything but `(idle)`) split by where the code
 * lives: Node's own (`node:`), Fastify, @fastify/cookie, other packages, this package, the collector, `(program)`
 * (native code V8 does not attribute to a function: the HTTP parser, system calls); then the functions with the
 * most self time. Shares of busy time times a table's CPU µs per request give µs per request.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

/** Self time (µs) by function key, of one or more profiles. */
function selfTimes (files: string[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const file of files) {
    const p = JSON.parse(readFileSync(file, 'utf8')) as Profile
    const byId = new Map(p.nodes.map((n) => [n.id, n]))
    // A sample's time is the delta to the next one.
    for (let i = 0; i < p.samples.length - 1; i++) {
      const f = byId.get(p.samples[i]!)!.callFrame
      const key = `${f.functionName === '' ? '(anonymous)' : f.functionName} ${shortUrl(f.url)}:${f.lineNumber + 1}`
      out.set(key, (out.get(key) ?? 0) + p.timeDeltas[i + 1]!)
    }
  }
  return out
}

function shortUrl (url: string): string {
  const nm = url.lastIndexOf('node_modules/')
  if (nm !== -1) return url.slice(nm + 'node_modules/'.length)
  const dist = url.lastIndexOf('/dist/')
  return dist !== -1 ? url.slice(dist + 1) : url
}

const AREAS: Array<[string, (key: string) => boolean]> = [
  ['idle', (k) => k.startsWith('(idle)')],
  ['garbage collector', (k) => k.startsWith('(garbage collector)')],
  ['(program): native, unattributed', (k) => k.startsWith('(program)')],
  ['Node (node:…)', (k) => k.includes(' node:')],
  ['Fastify', (k) => / fastify\/|find-my-way\/|light-my-request\/|avvio\//.test(k)],
  ['@fastify/cookie, cookie', (k) => / @fastify\/cookie\/| cookie\//.test(k)],
  ['this package (dist/)', (k) => k.includes(' dist/')],
  ['other', () => true]
]

function filesOf (arg: string): string[] {
  if (!statSync(arg).isDirectory()) return [arg]
  return readdirSync(arg).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(arg, f))
}

function summarise (arg: string, top: number): void {
  const files = filesOf(arg)
  const times = selfTimes(files)
  const idle = [...times].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0)
  let total = 0
  for (const v of times.values()) total += v
  const busy = total - idle
  console.log(`\n## ${arg}: ${files.length} profile(s), ${(busy / 1e6).toFixed(2)} s busy of ${(total / 1e6).toFixed(2)} s`)
  const areas = new Map<string, number>()
  for (const [k, v] of times) {
    const area = AREAS.find(([, test]) => test(k))![0]
    if (area !== 'idle') areas.set(area, (areas.get(area) ?? 0) + v)
  }
  for (const [area] of AREAS.slice(1)) console.log(`${area.padEnd(36)} ${(100 * (areas.get(area) ?? 0) / busy).toFixed(1).padStart(5)}% of busy`)
  console.log(`top ${top} functions by self time (% of busy):`)
  const sorted = [...times].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)
  for (const [k, v] of sorted) console.log(`  ${(100 * v / busy).toFixed(2).padStart(6)}%  ${k}`)
}

const args = process.argv.slice(2)
if (args.length === 0) {
  console.error('usage: node dist/bench/profile-summary.js <dir or .cpuprofile> [...]')
  process.exit(2)
}
for (const arg of args) summarise(arg, Number(process.env.BENCH_PROFILE_TOP ?? 30))
