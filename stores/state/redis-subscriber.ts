/**
 * The subscriber connection of the Redis state store. A connection in subscriber mode takes no other command, so
 * each subscription has one of its own, closed with it. One server (or a Sentinel-watched master): a duplicate of
 * the store's client, which reconnects by itself (behind Sentinels, to the master they name now). A Cluster: a
 * plain connection to the master serving the channel's slot (redis-slot.ts), where the store publishes too;
 * classic pub/sub is cluster-wide, so a subscriber elsewhere (that master unknown or lost, the subscription moved
 * to another master of the cluster's current list) still hears every message, only later.
 */
import { randomInt } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Subscription } from '../../lib/state-store.js'
import { isCluster, type RedisConnection } from './redis-client.js'
import { keySlot, slotMaster } from './redis-slot.js'

// How long a lost cluster node is waited for before the subscription moves to another node.
const MOVE_AFTER_MS = 250

/** Subscribes to `name`; `onLive` as StateStore.subscribe describes it. */
export function subscribeOn (client: RedisConnection, name: string, onMessage: (message: string) => void, onLive: (live: boolean) => void): Subscription {
  let live = false
  let closed = false
  let sub: Redis | undefined
  let timer: NodeJS.Timeout | undefined
  const setLive = (value: boolean): void => {
    if (value === live || closed) return
    live = value
    onLive(value)
  }
  const open = (): void => {
    if (closed) return
    const cluster = isCluster(client)
    // A master, not any node: a publisher counts the subscribers of the nodes its own client lists (see
    // RedisStateStore.publish), and clients list different replicas (CLUSTER SLOTS leaves out a replica whose
    // replication offset is still 0, until its master's first write or ping reaches it); every client lists every
    // master. (Subscribed on a replica, an instance heard revocations but was not counted.)
    const nodes = cluster ? client.nodes('master') : []
    if (cluster && nodes.length === 0) { timer = setTimeout(open, MOVE_AFTER_MS); return }
    const base = cluster ? slotMaster(client, keySlot(name)) ?? nodes[randomInt(nodes.length)]! : client as Redis
    // On a Cluster the connection does not retry a lost node: the subscription moves to a node alive now.
    const conn = base.duplicate({ autoResubscribe: false, lazyConnect: true, ...(cluster ? { retryStrategy: () => null } : {}) })
    sub = conn
    conn.on('message', (ch: string, message: string) => { if (ch === name && !closed) onMessage(message) })
    conn.on('ready', () => {
      conn.subscribe(name).then(() => { setLive(true) }, () => { conn.disconnect(!cluster) })
    })
    conn.on('close', () => { setLive(false) })
    if (cluster) conn.on('end', () => { if (sub === conn && !closed) timer = setTimeout(open, MOVE_AFTER_MS) })
    // Outages are reported once by the store's own client; the subscriber's errors would only repeat them.
    conn.on('error', () => {})
    conn.connect().catch(() => { /* retried by the reconnect strategy, or moved to another node */ })
  }
  open()
  return {
    close: async () => {
      closed = true
      clearTimeout(timer)
      sub?.removeAllListeners('message')
      sub?.disconnect()
    }
  }
}
