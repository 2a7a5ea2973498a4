/**
 * The tables of the toolkit suites: a baseline and rows, each case's server in processes of its own
 * (bench/server-process.ts), printed CPU first; or, for the `:ir` suites, instructions per request under
 * callgrind (bench/callgrind.ts).
 */
import { countAll, irOptions, printIrTable, type IrCount } from './callgrind.js'
import { alternateProcesses, loadAverage, printCpuTable, type LoadLengths, type ProcessCase } from './server-process.js'

/** BENCH_ONLY, a regular expression: only the rows whose label it matches are measured (the baseline always is). */
function selected (rows: ProcessCase[]): ProcessCase[] {
  const only = process.env.BENCH_ONLY
  if (only === undefined || only === '') return rows
  const re = new RegExp(only, 'i')
  return rows.filter((r) => re.test(r.label))
}

/**
 * Measures the baseline and the rows alternately (`rounds` times, default BENCH_ROUNDS or 3), each in its own
 * process, and prints them CPU first; a table none of whose rows BENCH_ONLY selects is skipped. With
 * BENCH_MEASURE=callgrind (the `:ir` suites), counts instructions per request under callgrind instead, and
 * answers the counts (baseline first).
 */
export async function printProcessTable (title: string, baseline: ProcessCase, rows: ProcessCase[], len: LoadLengths, rounds = Number(process.env.BENCH_ROUNDS ?? 3)): Promise<IrCount[] | undefined> {
  const picked = selected(rows)
  if (picked.length === 0) return undefined
  const cases = [baseline, ...picked]
  if (process.env.BENCH_MEASURE === 'callgrind') {
    const o = irOptions()
    const counts = await countAll(cases, o)
    printIrTable(title, counts, o)
    return counts
  }
  const loadAtStart = loadAverage()
  const results = await alternateProcesses(cases, len, rounds)
  printCpuTable(`${title} (median of ${rounds} alternating rounds, a process per server per round)`, results, loadAtStart)
  return undefined
}
