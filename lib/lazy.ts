/**
 * Loading dependencies only when a feature needs them, so that importing the package stays as cheap as
 * importing Fastify. The optional drivers (ioredis, lmdb, mongodb, sharp, nodemailer, argon2, …) load through
 * lib/optional-driver.ts, which also says what to install when one is missing; this is for what is always there.
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** Loads a CommonJS dependency or a built-in module synchronously, on first use. */
export function requireLazy<T> (name: string): T {
  return require(name) as T
}
