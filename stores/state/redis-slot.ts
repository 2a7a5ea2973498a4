/**
 * Where a Redis Cluster keeps a name: its hash slot (CRC16/XMODEM of the name, or of its `{hash tag}`, modulo
 * 16384, as the Cluster specification defines it) and the master serving that slot now. The revocation channel
 * lives on that master: every instance subscribes there and publishes there, so a message reaches the
 * subscribers without crossing the cluster bus, whose node-to-node links Redis opens without TCP_NODELAY (a
 * message relayed over them was measured arriving up to ~40 ms late: Nagle's algorithm waiting on a delayed ACK).
 */
import type { Cluster, Redis } from 'ioredis'

const SLOTS = 16384

function crc16 (bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = (crc & 0x8000) !== 0 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc
}

/** The hash slot of `name`: only the part between the first `{` and the next `}` counts when it is not empty. */
export function keySlot (name: string): number {
  const open = name.indexOf('{')
  const close = open === -1 ? -1 : name.indexOf('}', open + 1)
  const hashed = close > open + 1 ? name.slice(open + 1, close) : name
  return crc16(Buffer.from(hashed, 'utf8')) % SLOTS
}

/** The client's connection to the master serving `slot` as the client's slot map has it now, if it has one. */
export function slotMaster (cluster: Cluster, slot: number): Redis | undefined {
  const key = cluster.slots[slot]?.[0]
  if (key === undefined) return undefined
  return cluster.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === key)
}
