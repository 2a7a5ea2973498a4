import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * Constant-time string comparison. Both sides are hashed first so that neither the content nor the
 * length of the secret leaks through timing.
 */
export function safeEqual (a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest()
  const hb = createHash('sha256').update(b, 'utf8').digest()
  return timingSafeEqual(ha, hb) && a.length === b.length
}
