/**
 * The suite-wide secret check, loaded into every test process (package.json `tap.node-arg`: `--import` of this
 * file): every audit event published on `gatehouse:audit` during any test is searched for
 * - a test secret or password (secrets.ts),
 * - a JWT-shaped string (three base64url parts, the first starting `eyJ`),
 * - a key named like a token, password, secret or code.
 * A hit fails the test process: the message names the event and the field, and the exit code is 1 whatever the
 * test's own verdict. `assertNoSecret` is the same check for other telemetry (span attributes, metric labels).
 */
import diagnostics from 'node:diagnostics_channel'
import { TEST_SECRETS } from './secrets.js'

const JWT_SHAPE = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/
const SECRET_KEY = /token|passw|secret|code/i

/** What is wrong with `value` (the first finding, with its path), or undefined when nothing is. */
export function findSecret (value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') {
    if (JWT_SHAPE.test(value)) return `${path || 'value'} holds a JWT-shaped string`
    const secret = TEST_SECRETS.find((s) => value.includes(s))
    return secret === undefined ? undefined : `${path || 'value'} holds the test secret "${secret}"`
  }
  if (value === null || typeof value !== 'object') return undefined
  for (const [key, inner] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`
    if (SECRET_KEY.test(key)) return `${at} is a key named like a token, password, secret or code`
    const found = findSecret(inner, at)
    if (found !== undefined) return found
  }
  return undefined
}

/** Throws (and marks the process failed) when `value` holds a secret; `where` names it (`audit event login.failed`). */
export function assertNoSecret (where: string, value: unknown): void {
  const found = findSecret(value)
  if (found === undefined) return
  const message = `secret check: ${where}: ${found}`
  failures.push(message)
  process.stderr.write(`${message}\n`)
  process.exitCode = 1
  throw new Error(message)
}

const failures: string[] = []

// Whatever the test's verdict, a process in which a secret showed up exits non-zero (the last word on the code).
process.on('exit', () => {
  if (failures.length > 0) {
    process.stderr.write(`secret check failed ${failures.length} time(s); first: ${failures[0]}\n`)
    process.exitCode = 1
  }
})

/** The check's subscriber (exported so that a test of "nobody listens" can take it off for a moment). */
export function checkAuditEvent (event: unknown): void {
  const type = (event as { type?: unknown } | null)?.type
  assertNoSecret(`audit event ${String(type)}`, event)
}

diagnostics.subscribe('gatehouse:audit', checkAuditEvent)
