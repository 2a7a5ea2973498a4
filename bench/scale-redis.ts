/**
 * The Redis side of the scale benchmark: the three stores it compares (one server, a Cluster of 3 masters + 3
 * replicas, 1 master + 1 replica + 3 Sentinels, all on loopback) and what is read of their masters: commands
 * run (`INFO commandstats`) and memory used (`INFO memory`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort, ownData, RedisCluster, RedisNodeProcess, RedisSentinels, startOnFreePorts } from './redis-processes.js'

/** A running store: its address for the instances, and the ports of its data nodes. */
export interface StoreSetup { label: string; address: string; nodes: () => number[]; stop: () => Promise<void> }

/** Commands that are the bench's own questions, the client's or the replicas' housekeeping, not the store's work. */
const NOT_COUNTED = new Set(['info', 'cluster', 'config', 'ping', 'command', 'client', 'hello', 'role', 'dbsize', 'readonly', 'select', 'memory', 'replconf', 'psync', 'sync'])

async function oneServer (): Promise<StoreSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-redis-'))
  const node = await startOnFreePorts(async () => {
    const port = await freePort()
    return new RedisNodeProcess(port, ownData(dir, port))
  })
  process.once('exit', () => { node.child?.kill('SIGKILL') })
  return {
    label: 'one Redis',
    address: `redis://127.0.0.1:${node.port}`,
    nodes: () => [node.port],
    stop: async () => { await node.kill(); rmSync(dir, { recursive: true, force: true }) }
  }
}

async function cluster (): Promise<StoreSetup> {
  const c = new RedisCluster()
  await c.start()
  return { label: 'Cluster 3+3', address: c.address, nodes: () => c.nodes.map((n) => n.port), stop: () => c.stop() }
}

async function sentinels (): Promise<StoreSetup> {
  const s = new RedisSentinels()
  await s.start()
  return { label: 'Sentinel 1+1', address: s.address, nodes: () => [s.master.port, s.replica.port], stop: () => s.stop() }
}

export const STORES = { one: oneServer, cluster, sentinel: sentinels } as const
export type StoreKind = keyof typeof STORES

/** What the masters of a store have done so far: commands run (scripts' inner calls included), bytes used, keys. */
export interface RedisTotals { commands: number; evals: number; memory: number; keys: number }

/** Sums the masters' counters (replicas repeat their master's writes and would count them twice). */
export async function totals (setup: StoreSetup): Promise<RedisTotals> {
  const sum: RedisTotals = { commands: 0, evals: 0, memory: 0, keys: 0 }
  for (const port of setup.nodes()) {
    const admin = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 })
    try {
      const role = await admin.role() as [string]
      if (role[0] !== 'master') continue
      for (const [, name, calls] of (await admin.info('commandstats')).matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) {
        if (NOT_COUNTED.has(name!.split('|')[0]!)) continue
        sum.commands += Number(calls)
        if (name === 'eval' || name === 'evalsha') sum.evals += Number(calls)
      }
      sum.memory += Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1] ?? 0)
      sum.keys += await admin.dbsize()
    } finally { admin.disconnect() }
  }
  return sum
}

/** The difference of two readings, per unit of work (`per`). */
export function perUnit (after: RedisTotals, before: RedisTotals, per: number): RedisTotals {
  const d = (k: keyof RedisTotals): number => (after[k] - before[k]) / Math.max(1, per)
  return { commands: d('commands'), evals: d('evals'), memory: d('memory'), keys: d('keys') }
}
