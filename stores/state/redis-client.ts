/**
 * The Redis connection a store makes from an address (see redis-address.ts) or a node list: one server, a
 * Cluster, or a Sentinel-watched master. Every kind is tuned the same way: fail fast while Redis (or the part of
 * the cluster holding a key) is down, so a request answers 503 instead of waiting, and reconnect in the
 * background so the store recovers by itself (after a failover: once the replica is promoted).
 */
import type { Cluster, Redis, RedisOptions } from 'ioredis'
import { OptionsError } from '../../lib/errors.js'
import { requireDriver } from '../../lib/optional-driver.js'
import { parseRedisAddress, type RedisNode } from './redis-address.js'

/** A connection the stores work with: one Redis (plain or behind Sentinels) or a Cluster. */
export type RedisConnection = Redis | Cluster

/** True for an ioredis `Cluster` (its commands are routed by key slot). */
export function isCluster (client: RedisConnection): client is Cluster {
  return (client as { isCluster?: boolean | undefined }).isCluster === true
}

/** The client for `target` (an address or a cluster's node list); `option` names the option in errors. */
export function createRedisClient (target: string | Array<RedisNode | string>, timeoutMs: number, option: string): RedisConnection {
  // ioredis is loaded here, when a Redis store is really wanted, not when the package is imported.
  const ioredis = requireDriver<typeof import('ioredis')>('ioredis', { option, feature: 'a Redis store' })
  const base: RedisOptions = {
    maxRetriesPerRequest: 1,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    // Keep reconnecting (up to every 2 s) so the store recovers by itself when Redis returns.
    retryStrategy: (times) => Math.min(times * 100, 2000)
  }
  if (Array.isArray(target)) return cluster(ioredis, target, base, {})
  const address = parseRedisAddress(target, option)
  if (address.kind === 'cluster') {
    const { nodes, tls, ...auth } = address
    return cluster(ioredis, nodes, base, { ...auth, ...(tls ? { tls: {} } : {}) })
  }
  if (address.kind === 'sentinel') {
    const { sentinels, name, tls, ...auth } = address
    return new ioredis.Redis({
      ...base,
      ...auth,
      sentinels,
      name,
      ...(tls ? { tls: {} } : {}),
      sentinelCommandTimeout: timeoutMs,
      // Asking the Sentinels again after a failed round: quickly at first, then every 2 s at most.
      // A lost master is looked up again at the Sentinels on every reconnect, so a failover is followed once the
      // old master's connection breaks. (ioredis's failoverDetector is left off: with it, a test process did not
      // exit after close() once the Sentinels were gone; its Sentinel connections kept reconnecting.)
      sentinelRetryStrategy: (times) => Math.min(times * 100, 2000)
    })
  }
  try {
    return new ioredis.Redis(address.url, base)
  } catch {
    // Neither the address nor the parser's error (which carries the address as `input`) goes into the
    // error: the address may hold a password.
    throw new OptionsError(option, 'was given an address that is not a valid Redis URL')
  }
}

function cluster (ioredis: typeof import('ioredis'), nodes: Array<RedisNode | string>, base: RedisOptions, extra: Partial<RedisOptions>): Cluster {
  const { retryStrategy: _perNode, ...redisOptions } = base
  return new ioredis.Cluster(nodes, {
    redisOptions: { ...redisOptions, ...extra },
    clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
    // A command for a slot whose master just failed is retried a few times over ~1 s (MOVED/ASK during a
    // resharding, CLUSTERDOWN/TRYAGAIN during a failover), then fails with 503 rather than hang.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    maxRedirections: 8,
    slotsRefreshTimeout: base.connectTimeout ?? 2000
  })
}
