/**
 * The Redis store addresses: which kind of deployment an address names and how to reach it. One grammar for every
 * option that takes a store address (`stateStore`, the passkey `store`, the demo's `STATE_STORE`):
 *
 * - `redis://[user:pass@]host:port[/db]`, `rediss://…` (TLS): one Redis server;
 * - `redis-cluster://[user:pass@]host:port,host:port,…` (`rediss-cluster://` with TLS): a Redis Cluster, given
 *   any of its nodes (the rest is discovered);
 * - `redis-sentinel://[user:pass@]host:port,host:port,…/<master name>` (`rediss-sentinel://`: TLS to the
 *   master): the master that these Sentinels name, followed through failovers.
 *
 * Errors never repeat the address: it may hold a password.
 */
import { OptionsError } from '../../lib/errors.js'

/** A host and port of a cluster node or a Sentinel. */
export interface RedisNode { host: string; port: number }

/** What an address names. */
export type RedisAddress =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; username?: string | undefined; password?: string | undefined; tls: boolean }
  | { kind: 'sentinel'; sentinels: RedisNode[]; name: string; username?: string | undefined; password?: string | undefined; tls: boolean }

/** True for the schemes a Redis store takes. */
export function isRedisAddress (address: string): boolean {
  return /^rediss?(-cluster|-sentinel)?:\/\//i.test(address)
}

/** Parses a Redis address (see the module comment); throws OptionsError naming `option` when it does not parse. */
export function parseRedisAddress (address: string, option: string): RedisAddress {
  const m = /^(rediss?)(-cluster|-sentinel)?:\/\/(.*)$/i.exec(address)
  if (m === null) throw new OptionsError(option, 'must be a redis://, rediss://, redis-cluster:// or redis-sentinel:// address')
  const tls = m[1]!.toLowerCase() === 'rediss'
  const kind = m[2]?.toLowerCase()
  if (kind === undefined) return { kind: 'single', url: address }
  let rest = m[3]!
  const at = rest.lastIndexOf('@')
  const auth = at < 0 ? undefined : rest.slice(0, at)
  rest = at < 0 ? rest : rest.slice(at + 1)
  const credentials = credentialsOf(auth)
  if (kind === '-cluster') {
    return { kind: 'cluster', nodes: nodesOf(rest.replace(/\/$/, ''), option), ...credentials, tls }
  }
  const slash = rest.indexOf('/')
  const name = slash < 0 ? '' : decodeURIComponent(rest.slice(slash + 1))
  if (name === '' || name.includes('/')) throw new OptionsError(option, 'needs the master name after the Sentinels: redis-sentinel://host:port,host:port/<master name>')
  return { kind: 'sentinel', sentinels: nodesOf(rest.slice(0, slash), option), name, ...credentials, tls }
}

function credentialsOf (auth: string | undefined): { username?: string | undefined; password?: string | undefined } {
  if (auth === undefined) return {}
  const colon = auth.indexOf(':')
  const user = decodeURIComponent(colon < 0 ? auth : auth.slice(0, colon))
  const password = colon < 0 ? undefined : decodeURIComponent(auth.slice(colon + 1))
  return { ...(user === '' ? {} : { username: user }), ...(password === undefined ? {} : { password }) }
}

function nodesOf (list: string, option: string): RedisNode[] {
  const nodes = list.split(',').map((part) => {
    const m = /^(\[[0-9a-f:.]+\]|[^:[\]/\s]+):(\d{1,5})$/i.exec(part.trim())
    const port = m === null ? NaN : Number(m[2])
    if (m === null || port < 1 || port > 65535) throw new OptionsError(option, 'has a node that is not host:port (nodes are separated by commas)')
    return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port }
  })
  return nodes
}
