/**
 * Instructions per request, counted by valgrind's callgrind: a figure the machine's load does not move (CPU time
 * per request does, by ±3 µs between two processes of the same build on a shared machine). Each case's server
 * (bench/peer-server.ts) runs under `valgrind --tool=callgrind --separate-threads=yes`, its V8 single-threaded
 * (`--single-threaded`: optimising compiles and the collector's work on the main thread, when they are due,
 * instead of on helper threads that valgrind runs one at a time and a busy machine starves, which left the
 * measured phases running code not yet optimised). A load of connections kept open throughout
 * (bench/keep-alive-load.ts, same request bytes for every case) sends it a fixed number of requests to warm it up,
 * then `phases` times: a collection of the young generation (`--expose-gc`; so that no phase inherits a nursery
 * about to be collected from the one before; not a full collection, which would make V8 drop its optimised code:
 * see bench/peer-server.ts), the counters zeroed (`callgrind_control -z`), `requests` requests sent, the counters
 * dumped (`callgrind_control -d`). The young generation's collections fall within the phases, as often as
 * each case allocates. Reported per request, for the phase with the median count: the
 * instructions of the main thread (every request's JavaScript, Node's HTTP parsing and writing, the collector),
 * and those of the other threads apart (libuv's and Node's own; next to nothing). Instructions in the kernel (the
 * system calls' own work) are not counted.
 *
 * Valgrind runs the server some 50-100 times slower, so the load generator always finds it busy: every turn of
 * the event loop finds requests of all `connections` waiting, the same batching in every case.
 */
import { spawn, execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { median } from './lib.js'
import { KeepAliveLoad } from './keep-alive-load.js'
import { ask, stopServer, type Hello, type ProcessCase, type ServerProcess } from './server-process.js'

const SERVER = fileURLToPath(new URL('./peer-server.js', import.meta.url))
const run = promisify(execFile)

/** Lengths of a count, in requests; `profile`: name the JIT's functions (see `startUnderCallgrind`). */
export interface IrOptions { warmup: number; requests: number; phases: number; connections: number; profile: boolean }

/**
 * BENCH_IR_WARMUP (20,000 requests: with fewer the counts are still falling as V8 tiers code up; after 10,000 the
 * later phases were still 1% apart, after 20,000 0.02%), BENCH_IR_REQUESTS (1500 per phase), BENCH_IR_PHASES (5:
 * the first one or two after the warm-up count a few compiles more; the median is a later one), 10 connections;
 * BENCH_IR_PROFILE=1 names the JavaScript functions in the by-function tables; BENCH_IR_PROFILE_DIR, a directory,
 * receives each case's whole table by function (a `.tsv` per case).
 */
export function irOptions (): IrOptions {
  return {
    warmup: Number(process.env.BENCH_IR_WARMUP ?? 20000),
    requests: Number(process.env.BENCH_IR_REQUESTS ?? 1500),
    phases: Number(process.env.BENCH_IR_PHASES ?? 5),
    connections: 10,
    profile: process.env.BENCH_IR_PROFILE === '1'
  }
}

/** One case's count: per request, main thread (median phase), each phase's, other threads, by function. */
export interface IrCount {
  label: string
  main: number
  phases: number[]
  others: number
  /** Main-thread instructions per request by function (exclusive), of the median phase. */
  functions: Map<string, number>
  /**
   * Bytes of heap each request allocated (median of the phases: the heap in use after the phase, less what it was
   * on the empty young generation it started on; negative, or small, when a collection fell within the phase).
   */
  bytes: number
}

/** Whether valgrind and callgrind_control are installed. */
export async function callgrindAvailable (): Promise<boolean> {
  try {
    await run('valgrind', ['--version'])
    await run('callgrind_control', ['-h'])
    return true
  } catch {
    return false
  }
}

/**
 * With `profile`, V8 writes the address range and name of each function it compiles to /tmp/perf-<pid>.map
 * (`--perf-basic-prof`), and the dumps' JIT addresses are named from it (`jitNames`). Bytecode that still runs in
 * the interpreter counts as the interpreter's builtins (`--interpreted-frames-native-stack` would name it too, but
 * made the counts of later phases jump by 2x: V8 compiled functions again in every phase).
 */
async function startUnderCallgrind (app: string, outDir: string, profile: boolean): Promise<ServerProcess> {
  const child = spawn('valgrind', [
    '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${join(outDir, 'cg.%p')}`,
    // No memory reducer: it starts its collections when allocation per second of wall time is low, which under
    // valgrind's slowdown is always, and a memory-reducing collection drops optimised code: some phases then
    // counted 2x, as V8 compiled again (measured: phases of one case 79,000-178,000 with it, 74,700-77,100 without).
    process.execPath, '--single-threaded', '--expose-gc', '--no-memory-reducer',
    // The young generation pinned at 16 MB (what V8 grows it to under steady load): its size otherwise follows the
    // process's history, and with it how many scavenges a phase meets (two processes of one build counted a bare
    // route 5,000 instructions apart). A phase starts on an empty one and allocates less than that, so the counts
    // are the requests' own work, collections apart; the bytes each request allocated are reported beside them.
    '--min-semi-space-size=16', '--max-semi-space-size=16',
    ...(profile ? ['--perf-basic-prof'] : []),
    // More V8 flags for an experiment (e.g. `--trace-opt --trace-deopt`: what V8 still compiles while counted).
    ...(process.env.BENCH_IR_NODE_FLAGS ?? '').split(' ').filter((f) => f !== ''), SERVER, app
  ], { stdio: ['ignore', 'inherit', 'ignore', 'ipc'] })
  return { name: app, child, hello: await ask<Hello>(child) }
}

/** Counts the instructions of one case's server per request (see the module comment). */
export async function countInstructions (c: ProcessCase, o: IrOptions): Promise<IrCount> {
  const outDir = mkdtempSync(join(tmpdir(), 'gatehouse-callgrind-'))
  const server = await startUnderCallgrind(c.app, outDir, o.profile)
  const perfMap = `/tmp/perf-${server.child.pid}.map`
  try {
    const pid = String(server.child.pid)
    const load = await KeepAliveLoad.open(server.hello.port, c.req, o.connections)
    const phases: Array<{ main: number; others: number; functions: Map<string, number>; bytes: number }> = []
    try {
      await checkedLoad(c, load, o.warmup)
      for (let p = 1; p <= o.phases; p++) {
        // Each phase starts on an empty young generation: a scavenge due in one phase and not in another would
        // otherwise move a phase's count by more than the differences sought.
        const collected = await ask<{ gc: boolean; heap: number }>(server.child, { cmd: 'gc' })
        if (!collected.gc) throw new Error('the server has no gc()')
        await run('callgrind_control', ['-z', pid])
        await checkedLoad(c, load, o.requests)
        await run('callgrind_control', ['-d', pid])
        const { heap } = await ask<{ heap: number }>(server.child, { cmd: 'heap' })
        phases.push({ ...readDump(outDir, pid, p, o.requests, o.profile ? jitNames(perfMap) : undefined), bytes: (heap - collected.heap) / o.requests })
      }
    } finally {
      load.close()
    }
    const sorted = [...phases].sort((a, b) => a.main - b.main)
    const mid = sorted[Math.floor(sorted.length / 2)]!
    const dir = process.env.BENCH_IR_PROFILE_DIR
    if (dir !== undefined && dir !== '') {
      // Every function of the median phase, for reading beyond the printed top (one `Ir/req<TAB>name` a line).
      const lines = [...mid.functions].sort((a, b) => b[1] - a[1]).map(([fn, v]) => `${v.toFixed(1)}\t${fn}`)
      writeFileSync(join(dir, `${c.app}-${c.label.replace(/[^A-Za-z0-9]+/g, '-')}.tsv`), lines.join('\n') + '\n')
    }
    return { label: c.label, main: mid.main, phases: phases.map((p) => p.main), others: median(phases.map((p) => p.others)), functions: mid.functions, bytes: median(phases.map((p) => p.bytes)) }
  } finally {
    await stopServer(server)
    rmSync(outDir, { recursive: true, force: true })
    rmSync(perfMap, { force: true })
  }
}

async function checkedLoad (c: ProcessCase, load: KeepAliveLoad, requests: number): Promise<void> {
  const bad = await load.run(requests)
  if (bad > 0) throw new Error(`${c.label}: ${bad} answers not 2xx under callgrind`)
}

/** Dump `part` of process `pid`: thread 01 is the main thread. Counts per request. */
function readDump (dir: string, pid: string, part: number, requests: number, jit?: JitNames): { main: number; others: number; functions: Map<string, number> } {
  const prefix = `cg.${pid}.${part}-`
  let main: Map<string, number> | undefined
  let others = 0
  for (const file of readdirSync(dir).filter((f) => f.startsWith(prefix))) {
    const functions = selfCosts(readFileSync(join(dir, file), 'utf8'), jit)
    if (file.endsWith('-01')) main = functions
    else for (const v of functions.values()) others += v
  }
  if (main === undefined) throw new Error(`callgrind wrote no main-thread dump ${prefix}01`)
  const perRequest = new Map([...main].map(([k, v]) => [k, v / requests]))
  let total = 0
  for (const v of perRequest.values()) total += v
  return { main: total, others: others / requests, functions: perRequest }
}

/**
 * Exclusive instruction counts by function of one callgrind dump (format: valgrind's callgrind-format docs). The
 * cost line after a `calls=` line is the call's inclusive cost and is skipped; names are compressed as
 * `fn=(id) name` once, `fn=(id)` after. Code V8 compiled at run time has no symbol (callgrind names it by its
 * address): it is named by `jit` when given, else summed as one entry.
 */
export function selfCosts (text: string, jit?: JitNames): Map<string, number> {
  const names = new Map<string, string>()
  const costs = new Map<string, number>()
  let fn = '?'
  let skipNext = false
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) { fn = nameOf(line.slice(3), names, jit); continue }
    if (line.startsWith('cfn=')) { nameOf(line.slice(4), names, jit); continue }
    if (line.startsWith('calls=')) { skipNext = true; continue }
    const first = line.charCodeAt(0)
    const isCost = (first >= 48 && first <= 57) || first === 43 || first === 45 || first === 42
    if (!isCost) continue
    if (skipNext) { skipNext = false; continue }
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    costs.set(fn, (costs.get(fn) ?? 0) + value)
  }
  return costs
}

const JIT = 'JavaScript compiled at run time (no symbol)'

function nameOf (spec: string, names: Map<string, string>, jit: JitNames | undefined): string {
  const m = /^\((\d+)\)(?: (.*))?$/.exec(spec)
  let name: string
  if (m === null) name = spec
  else if (m[2] !== undefined) { name = m[2]; names.set(m[1]!, name) } else name = names.get(m[1]!) ?? spec
  if (!/^0x[0-9a-f]+$/.test(name)) return name
  return jit?.(parseInt(name.slice(2), 16)) ?? JIT
}

/** The name of the JIT function at an address, or undefined. */
export type JitNames = (address: number) => string | undefined

/**
 * Names from a perf map (`<start hex> <size hex> <name>` per line, in the order V8 compiled them; a later entry
 * over the same addresses is code that replaced the earlier one, so the last one wins). Names are shortened:
 * V8's tier marks kept (`*` optimised, `~` interpreted), a file URL reduced to its last two path parts.
 */
export function jitNames (perfMap: string): JitNames {
  let text: string
  try { text = readFileSync(perfMap, 'utf8') } catch { return () => undefined }
  const ranges: Array<{ start: number; end: number; name: string }> = []
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line)
    if (m === null) continue
    const start = parseInt(m[1]!, 16)
    ranges.push({ start, end: start + parseInt(m[2]!, 16), name: shortName(m[3]!) })
  }
  // Stable sort by start: of entries with one start, the last compiled stays last.
  ranges.sort((a, b) => a.start - b.start)
  return (address) => {
    let lo = 0
    let hi = ranges.length - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (ranges[mid]!.start <= address) { found = mid; lo = mid + 1 } else hi = mid - 1
    }
    // The latest entry starting at or before the address that still covers it.
    for (let i = found; i >= 0 && i > found - 64; i--) if (address < ranges[i]!.end) return ranges[i]!.name
    return undefined
  }
}

function shortName (name: string): string {
  return name.replace(/(?:file:\/\/)?\/[^\s]*\/([^/\s]+\/[^/\s]+)(:\d+)?(:\d+)?/g, '$1$2')
}

/** Counts the cases, `parallel` servers at a time (the counts do not depend on the machine's load). */
export async function countAll (cases: ProcessCase[], o: IrOptions, parallel = Number(process.env.BENCH_IR_PARALLEL ?? 2)): Promise<IrCount[]> {
  const out: IrCount[] = new Array(cases.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      const i = next++
      out[i] = await countInstructions(cases[i]!, o)
      // Counts take minutes each: each is shown as it comes (the table follows at the end).
      console.log(`  counted ${out[i]!.label}: ${Math.round(out[i]!.main)} Ir/req (phases ${out[i]!.phases.map((p) => Math.round(p)).join(' ')}; ${Math.round(out[i]!.bytes)} B/req allocated; other threads ${Math.round(out[i]!.others)})`)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, worker))
  return out
}

/** Prints instructions per request and the ratio to the first case, then each case's largest differences by function. */
export function printIrTable (title: string, counts: IrCount[], o: IrOptions, top = Number(process.env.BENCH_IR_TOP ?? 8)): void {
  const base = counts[0]!
  console.log(`\n## ${title} (callgrind: instructions per request, main thread, median of ${o.phases} phases of ${o.requests} requests after ${o.warmup}, ${o.connections} connections)`)
  console.log(`${'case'.padEnd(52)} ${'Ir/req'.padStart(9)} ${'ratio'.padStart(7)} ${'× base'.padStart(7)} ${'+Ir/req'.padStart(8)} ${'phases'.padStart(40)} ${'B/req'.padStart(6)} ${'other threads'.padStart(13)}`)
  for (const c of counts) {
    const phases = c.phases.map((p) => Math.round(p).toString()).join(' ')
    console.log(`${c.label.padEnd(52)} ${Math.round(c.main).toString().padStart(9)} ${(base.main / c.main).toFixed(3).padStart(6)}x ${(c.main / base.main).toFixed(3).padStart(6)}x ${Math.round(c.main - base.main).toString().padStart(8)} ${phases.padStart(40)} ${Math.round(c.bytes).toString().padStart(6)} ${Math.round(c.others).toString().padStart(13)}`)
  }
  console.log('(ratio: base / case, as the CPU tables\' marks; × base: case / base, as issue 46\'s targets)')
  if (o.profile && top > 0) {
    for (const c of counts) {
      console.log(`  ${c.label}, largest costs (Ir/req, by function, exclusive):`)
      for (const [fn, v] of [...c.functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${Math.round(v).toString().padStart(7)}  ${fn.length > 110 ? fn.slice(0, 107) + '...' : fn}`)
    }
  }
  if (top <= 0) return
  for (const c of counts.slice(1)) {
    const diffs = [...new Set([...c.functions.keys(), ...base.functions.keys()])]
      .map((fn) => ({ fn, d: (c.functions.get(fn) ?? 0) - (base.functions.get(fn) ?? 0) }))
      .sort((a, b) => Math.abs(b.d) - Math.abs(a.d)).slice(0, top)
    console.log(`  ${c.label} − ${base.label}, largest differences (Ir/req, by function):`)
    for (const { fn, d } of diffs) console.log(`    ${(d >= 0 ? '+' : '') + Math.round(d).toString().padStart(7)}  ${fn.length > 110 ? fn.slice(0, 107) + '...' : fn}`)
  }
}
