/**
 * What a direct provider's checker answered, read into the one user it signs in. `true` signs in the typed name as
 * the lockout counts it (`accountName`: NFKC, lower case, … by default), so `Alice`, ` alice` and `ａｌｉｃｅ` are one
 * user; `{ ok: true, user }` names the account (a canonical name, or a user with its own key). The session's id is
 * `<provider>_<sha1>` of the account's key either way, as every provider's.
 *
 * Anything else (`undefined`, a number, `{ ok: 'yes' }`, a user without a name, an unknown field) is not an answer:
 * the login is refused exactly as a wrong password is (the client cannot tell them apart, and the lockout counts it,
 * so a checker that answers wrongly for some names neither tells which accounts exist nor lifts the limit on
 * guesses), and the reason is logged for the host.
 */
import { userId, type UserData } from '../lib/user.js'
import type { CheckedUser } from '../plugins/core/kit.js'

/** The user a checker's answer signs in; `refused` when it does not (`malformed` says why the answer was not one). */
export type CheckerVerdict = { user: UserData } | { refused: true; malformed?: string | undefined }

const MAX_NAME = 256
const RESULT_KEYS = new Set(['ok', 'user'])
const USER_KEYS = new Set(['name', 'id', 'email', 'attrs', 'role'])

/** Reads `answer` for the login of `typed` through provider `provider`; `accountName` is the lockout's rule. */
export function readCheckerAnswer (answer: unknown, typed: string, provider: string, accountName: (name: string) => string): CheckerVerdict {
  if (answer === true) return typedUser(provider, typed, accountName)
  if (answer === false) return { refused: true }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return malformed(`${describe(answer)}, not true, false or { ok, user }`)
  const extra = Object.keys(answer).find((k) => !RESULT_KEYS.has(k))
  if (extra !== undefined) return malformed(`an unknown field "${extra}" (expected { ok, user })`)
  const { ok, user } = answer as { ok?: unknown; user?: unknown }
  if (typeof ok !== 'boolean') return malformed(`ok: ${describe(ok)}, not true or false`)
  const problem = user === undefined ? undefined : userProblem(user)
  if (problem !== undefined) return malformed(problem)
  if (!ok) return { refused: true }
  if (user === undefined) return typedUser(provider, typed, accountName)
  return checkedUserOf(provider, typeof user === 'string' ? { name: user } : user as CheckedUser, accountName)
}

/**
 * The user of a typed name: the account as the lockout counts it, as its name and the source of its id. A name
 * that counts as empty (only white space and invisible characters) names no account.
 */
function typedUser (provider: string, typed: string, accountName: (name: string) => string): CheckerVerdict {
  const account = accountName(typed)
  if (account === '') return malformed('true for a name that is empty as the lockout counts it (answer { ok: true, user } to name the account)')
  return { user: { name: account, id: userId(provider, account) } }
}

/** The user the checker named: its name as given; its id from its key, else from its name as the lockout counts it. */
function checkedUserOf (provider: string, u: CheckedUser, accountName: (name: string) => string): CheckerVerdict {
  const key = u.id ?? accountName(u.name)
  if (key === '') return malformed('a user name that is empty as the lockout counts it (give the account its id)')
  const out: UserData = { name: u.name, id: userId(provider, key) }
  if (u.email !== undefined) out.email = u.email
  if (u.attrs !== undefined) out.attrs = { ...u.attrs }
  if (u.role !== undefined) out.role = u.role
  return { user: out }
}

/** Why `user` is not a canonical name or a `CheckedUser`, or undefined when it is one. */
function userProblem (user: unknown): string | undefined {
  if (typeof user === 'string') return nameProblem('user', user)
  if (user === null || typeof user !== 'object' || Array.isArray(user)) return `user: ${describe(user)}, not a name or { name, id?, email?, attrs?, role? }`
  const extra = Object.keys(user).find((k) => !USER_KEYS.has(k))
  if (extra !== undefined) return `an unknown user field "${extra}" (expected name, id, email, attrs, role)`
  const u = user as Record<string, unknown>
  for (const key of ['name', 'id'] as const) {
    if (key === 'id' && u.id === undefined) continue
    const problem = typeof u[key] === 'string' ? nameProblem(`user.${key}`, u[key]) : `user.${key}: ${describe(u[key])}, not a string`
    if (problem !== undefined) return problem
  }
  for (const key of ['email', 'role'] as const) {
    if (u[key] !== undefined && typeof u[key] !== 'string') return `user.${key}: ${describe(u[key])}, not a string`
  }
  const attrs = u.attrs
  if (attrs !== undefined && (attrs === null || typeof attrs !== 'object' || Array.isArray(attrs))) return `user.attrs: ${describe(attrs)}, not an object`
  return undefined
}

function nameProblem (field: string, value: string): string | undefined {
  if (value.trim() === '') return `${field}: an empty name`
  if (value.length > MAX_NAME) return `${field}: longer than ${MAX_NAME} characters`
  return undefined
}

function malformed (why: string): CheckerVerdict {
  return { refused: true, malformed: why }
}

/** A value's kind for the log, never its content (a checker may answer with a password hash by mistake). */
function describe (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return 'a string'
  if (typeof value === 'object') return 'an object'
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`
}
