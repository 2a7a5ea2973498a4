import { timingSafeEqual } from 'node:crypto'

/**
 * Constant-time string comparison: time depends only on the length of `b` (the expected value), never on
 * where the first difference is. A length mismatch still does a full comparison so that it costs the same.
 */
export function safeEqual (a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8')
  const bb = Buffer.from(b, 'utf8')
  if (ab.length !== bb.length) {
    timingSafeEqual(bb, bb)
    return false
  }
  return timingSafeEqual(ab, bb)
}
