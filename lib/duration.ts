/**
 * Durations are milliseconds (as everywhere in Fastify) or strings such as `'15m'`, `'31d'`, `'1h30m'`.
 */
export type Duration = number | string

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Parses a duration to milliseconds; returns undefined when it is not a positive, finite duration. */
export function parseDuration (value: Duration): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value : undefined
  if (typeof value !== 'string' || !/^(\d+(ms|s|m|h|d))+$/.test(value)) return undefined
  let total = 0
  for (const [, n, unit] of value.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * UNITS[unit as string]!
  return total > 0 && Number.isFinite(total) ? total : undefined
}
