/**
 * health: GET on a chosen path runs the application's checks in parallel and answers a JSON array
 * `[{name, status: "ok"|"failed", error?}]`, 200 when all pass and 503 when any fails. A check that throws,
 * rejects or does not settle within `timeout` is reported failed; none can turn the answer into a 500.
 * Expose it behind a rate limit and, if its errors are sensitive, behind auth.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { OptionsError } from '../../lib/errors.js'

/** What a check reports: its name and, when it failed, why. */
export interface CheckResult { name: string; error?: string | Error | null | undefined }
/**
 * A check function: resolves to its result; throwing or rejecting means failure. The signal aborts when the
 * time limit passes, so a check that honours it (fetch, database drivers) stops instead of lingering.
 */
export type CheckFunc = (signal: AbortSignal) => CheckResult | Promise<CheckResult>
/** A named check: resolves (to anything) when healthy, throws or rejects when not. */
export interface NamedCheck { name: string; check: (signal: AbortSignal) => unknown }

/** One entry of the answer. */
export interface HealthEntry { name: string; status: 'ok' | 'failed'; error?: string | undefined }

export interface HealthOptions {
  /** Path of the endpoint. Default `/health`. */
  path?: string | undefined
  /** The checks: functions returning `{name, error?}`, or `{name, check}` objects. */
  checks: Array<CheckFunc | NamedCheck>
  /** Milliseconds a check may take before it is reported failed. Default 5000. */
  timeout?: number | undefined
}

/** Runs every check under the time limit; never rejects. */
export async function runChecks (checks: Array<CheckFunc | NamedCheck>, timeoutMs: number): Promise<HealthEntry[]> {
  return await Promise.all(checks.map(async (c, i) => {
    const fallbackName = typeof c === 'function' ? (c.name || `check-${i + 1}`) : c.name
    let timer: NodeJS.Timeout | undefined
    const abort = new AbortController()
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`timed out after ${timeoutMs} ms`)
        reject(err)
        abort.abort(err)
      }, timeoutMs)
    })
    try {
      const run = typeof c === 'function'
        ? Promise.resolve(abort.signal).then(c)
        : Promise.resolve(abort.signal).then(c.check).then(() => ({ name: c.name }))
      const result = await Promise.race([run, timedOut])
      return entry(result, fallbackName)
    } catch (err) {
      return { name: fallbackName, status: 'failed' as const, error: message(err) }
    } finally {
      clearTimeout(timer)
    }
  }))
}

function entry (result: unknown, fallbackName: string): HealthEntry {
  if (result === null || typeof result !== 'object') return { name: fallbackName, status: 'failed', error: 'check returned no result' }
  const r = result as CheckResult
  const name = typeof r.name === 'string' && r.name !== '' ? r.name : fallbackName
  if (r.error === undefined || r.error === null || r.error === '') return { name, status: 'ok' }
  return { name, status: 'failed', error: message(r.error) }
}

function message (err: unknown): string {
  if (err instanceof Error) return err.message || err.name
  return typeof err === 'string' ? err : 'check failed'
}

/**
 * Encapsulated (fastify-plugin with `encapsulate: true`): it only adds a route, so it honours the register
 * `prefix` and picks up the hooks (auth, rate limit) of the context it is registered in.
 */
const healthPluginImpl: FastifyPluginAsync<HealthOptions> = async (fastify, opts) => {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('health', 'must be an object')
  const path = opts.path ?? '/health'
  if (typeof path !== 'string' || !path.startsWith('/')) throw new OptionsError('health.path', 'must be a path starting with "/"')
  const timeout = opts.timeout ?? 5000
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1) throw new OptionsError('health.timeout', 'must be a positive integer (ms)')
  if (!Array.isArray(opts.checks)) throw new OptionsError('health.checks', 'must be an array')
  opts.checks.forEach((c, i) => {
    const ok = typeof c === 'function' || (c !== null && typeof c === 'object' && typeof c.name === 'string' && c.name !== '' && typeof c.check === 'function')
    if (!ok) throw new OptionsError(`health.checks[${i}]`, 'must be a function or { name, check }')
  })
  const checks = [...opts.checks]
  fastify.get(path, async (_request, reply) => {
    const entries = await runChecks(checks, timeout)
    const failed = entries.some((e) => e.status === 'failed')
    return reply.code(failed ? 503 : 200).header('cache-control', 'no-store')
      .type('application/json; charset=utf-8').send(entries)
  })
}

export const healthPlugin = fp(healthPluginImpl, { name: 'gatehouse-health', fastify: '5.x', encapsulate: true })
