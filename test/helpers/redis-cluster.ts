/**
 * Test helper: a real Redis Cluster (3 masters, 3 replicas) or Sentinel setup on loopback, one per test file
 * (the processes are bench/redis-processes.ts, shared with `npm run bench -- scale`). Every process and its
 * folder are gone after the file, even when a test failed.
 */
import { spawnSync } from 'node:child_process'
import { RedisCluster, RedisSentinels } from '../../bench/redis-processes.js'
import { redisMissingReason } from './redis-server.js'

export { RedisCluster, RedisSentinels }

/** Why cluster tests cannot run here (no redis-server or redis-cli), or undefined. */
export function clusterMissingReason (): string | undefined {
  const server = redisMissingReason()
  if (server !== undefined) return server
  const cli = spawnSync('redis-cli', ['--version'], { encoding: 'utf8' })
  if (cli.error !== undefined || cli.status !== 0) return 'redis-cli is not installed (apt-get install -y redis-tools; CI installs it)'
  return undefined
}

/** Like `clusterForTests`, for a Sentinel setup. */
export async function sentinelsForTests (t: { test(name: string, opts: { skip: string }, fn: () => Promise<void>): unknown; teardown(fn: () => unknown): void }, name: string): Promise<RedisSentinels | undefined> {
  const missing = redisMissingReason()
  if (missing !== undefined) {
    t.test(name, { skip: missing }, async () => {})
    return undefined
  }
  const sentinels = new RedisSentinels()
  t.teardown(() => sentinels.stop())
  await sentinels.start()
  return sentinels
}

/**
 * A real Redis Cluster for a test file, stopped (processes and folder) at its end; undefined (and a skipped test
 * named `name` saying why) when redis-server or redis-cli is not installed.
 */
export async function clusterForTests (t: { test(name: string, opts: { skip: string }, fn: () => Promise<void>): unknown; teardown(fn: () => unknown): void }, name: string): Promise<RedisCluster | undefined> {
  const missing = clusterMissingReason()
  if (missing !== undefined) {
    t.test(name, { skip: missing }, async () => {})
    return undefined
  }
  const cluster = new RedisCluster()
  t.teardown(() => cluster.stop())
  await cluster.start()
  return cluster
}
