/**
 * CPU seconds (user + system) a test process has used so far, and its child processes (those that ended and those
 * still running, such as a shared Chromium): what a test file costs whatever the machine's load, read from Linux's
 * /proc (clock ticks of 1/100 s). Elsewhere: this process's own time alone.
 */
import { readdirSync, readFileSync } from 'node:fs'

export interface CpuSeconds { own: number; children: number }

interface ProcessStat { ppid: number; cpu: number; endedChildrenCpu: number }

/** Fields of /proc/<pid>/stat (`man 5 proc`): field n is at index n - 3 after the command name in parentheses. */
function statOf (pid: string): ProcessStat | undefined {
  let text: string
  try { text = readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { return undefined }
  const fields = text.slice(text.lastIndexOf(') ') + 2).split(' ')
  const ticks = (n: number): number => Number(fields[n - 3]) / 100
  return { ppid: Number(fields[4 - 3]), cpu: ticks(14) + ticks(15), endedChildrenCpu: ticks(16) + ticks(17) }
}

/** The CPU time of the running processes below this one (each with its own ended children). */
function runningDescendantsCpu (): number {
  const stats = new Map<number, ProcessStat>()
  const childrenOf = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    const stat = /^\d+$/.test(name) ? statOf(name) : undefined
    if (stat === undefined) continue
    stats.set(Number(name), stat)
    childrenOf.set(stat.ppid, [...childrenOf.get(stat.ppid) ?? [], Number(name)])
  }
  let sum = 0
  const pending = [...childrenOf.get(process.pid) ?? []]
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    const stat = stats.get(pid)!
    sum += stat.cpu + stat.endedChildrenCpu
    pending.push(...childrenOf.get(pid) ?? [])
  }
  return sum
}

/** This process's CPU time, and that of every process below it, ended or running. */
export function cpuSeconds (): CpuSeconds {
  const self = statOf('self')
  if (self === undefined) {
    const { user, system } = process.cpuUsage()
    return { own: (user + system) / 1e6, children: 0 }
  }
  return { own: self.cpu, children: self.endedChildrenCpu + runningDescendantsCpu() }
}
