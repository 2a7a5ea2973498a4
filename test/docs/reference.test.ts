/**
 * The reference pages are checked against the source, both ways, so that a new option key or error code cannot
 * stay undocumented and a removed one cannot stay documented: docs/reference/options.md has a heading for every
 * key of every option group (in that group's section, with a type, a default and a meaning; the key lists come
 * from the exported lists, or from the source where they are not exported), and
 * docs/reference/errors.md a row for every `ErrorCodes` value with the status its JSDoc in lib/errors.ts gives.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { AVATAR_KEYS } from '../../plugins/avatar/options.js'
import {
  BASIC_AUTH_KEYS, CORE_OPTION_KEYS, COOKIE_KEYS, LOGIN_KEYS, MOVED_OPTION_KEYS, REAUTHENTICATION_KEYS, REVOCATION_KEYS, TRUSTED_DEVICES_KEYS, SESSION_LIST_KEYS,
  SESSION_KEYS, TOKEN_SOURCE_KEYS, XSRF_KEYS
} from '../../plugins/core/options.js'
import { ErrorCodes } from '../../lib/errors.js'
import { MIGRATION_KEYS } from '../../plugins/core/sessions/migration.js'
import { root } from './pages.js'

const options = readFileSync(join(root, 'docs/reference/options.md'), 'utf8')

/** The text of the `## title` section, up to the next `##` heading. */
function section (text: string, title: string): string | undefined {
  const start = text.indexOf(`\n## ${title}\n`)
  if (start === -1) return undefined
  const rest = text.slice(start + 1)
  const end = rest.slice(3).search(/^## /m)
  return end === -1 ? rest : rest.slice(0, end + 3)
}

/** The rows of the markdown tables in `text`, as trimmed cells (the header and the `---` line dropped). */
function rows (text: string): string[][] {
  return text.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('|---'))
    .map((l) => l.replace(/\\\|/g, '\u0000').split('|').slice(1, -1).map((c) => c.trim().replace(/\u0000/g, '|')))
}

/** The keys of `keyList<Type>({ a: true, … })` in a source file: for the groups whose key lists are not exported. */
function sourceKeys (file: string, type: string): string[] {
  const source = readFileSync(join(root, file), 'utf8')
  const m = new RegExp(`keyList<${type}>\\(\\{([^}]*)\\}`).exec(source)
  if (m === null) throw new Error(`no keyList<${type}> in ${file}`)
  return [...m[1]!.matchAll(/(\w+): true/g)].map((k) => k[1]!)
}

const under = (prefix: string, keys: readonly string[]): string[] => keys.map((k) => `${prefix}${k}`)
/** A group's keys with the keys of its sub-groups spelt out (`rateLimit.login.max`). */
function expand (group: string, keys: readonly string[], subs: Record<string, readonly string[]>): string[] {
  return keys.flatMap((k) => subs[k] !== undefined ? under(`${group}.${k}.`, subs[k]) : [`${group}.${k}`])
}

const GROUPED = ['session', 'cookies', 'xsrf', 'tokenSources', 'basicAuth', 'revocation', 'login', 'factors', 'migration']
// The top-level keys that moved into `login` and `factors` (deprecated until 1.0): in the "Deprecated names" table only.
const MOVED = Object.keys(MOVED_OPTION_KEYS)
const THROTTLE = 'lib/throttle/options.ts'
const GROUPS: Array<[string, readonly string[]]> = [
  // The root adds `providers` (and `avatar`, its own section) to the core's keys (auth.ts ROOT_KEYS).
  ['Top level', [...CORE_OPTION_KEYS.filter((k) => !GROUPED.includes(k) && !MOVED.includes(k)), 'providers']],
  ['session', under('session.', SESSION_KEYS)], ['cookies', under('cookies.', COOKIE_KEYS)], ['xsrf', under('xsrf.', XSRF_KEYS)],
  ['tokenSources', under('tokenSources.', TOKEN_SOURCE_KEYS)], ['basicAuth', under('basicAuth.', BASIC_AUTH_KEYS)],
  // Groups that may be `false` have a heading of their own besides their keys.
  ['revocation', ['revocation', 'revocation.sessionList', ...expand('revocation', REVOCATION_KEYS, { sessionList: SESSION_LIST_KEYS })]],
  // The login group's own keys; its two sub-groups have sections of their own.
  ['login', under('login.', LOGIN_KEYS.filter((k) => k !== 'rateLimit' && k !== 'crossSite'))],
  ['login.rateLimit', ['login.rateLimit', ...expand('login.rateLimit', sourceKeys(THROTTLE, 'RateLimitOptions'), {
    login: sourceKeys(THROTTLE, 'LoginLimit'), failures: sourceKeys(THROTTLE, 'FailureOptions'), grants: sourceKeys(THROTTLE, 'GrantLimit'), sends: sourceKeys(THROTTLE, 'SendLimit')
  })]],
  ['login.crossSite', ['login.crossSite', ...under('login.crossSite.', sourceKeys('lib/login/cross-site.ts', 'CrossSiteOptions'))]],
  ['factors.reauthentication', under('factors.reauthentication.', REAUTHENTICATION_KEYS)],
  ['factors.trustedDevices', ['factors.trustedDevices', ...under('factors.trustedDevices.', TRUSTED_DEVICES_KEYS)]],
  ['migration', expand('migration', MIGRATION_KEYS, { goPkgz: sourceKeys('plugins/core/sessions/migration.ts', 'GoPkgzMigrationOptions') }).concat('migration.goPkgz')],
  ['avatar', ['avatar', ...expand('avatar', AVATAR_KEYS, { fetch: sourceKeys('plugins/avatar/options.ts', 'AvatarFetchOptions') })]]
]

t.test('the options reference has one heading per option of every group, each with a type, a default and a meaning', async (t) => {
  for (const [title, keys] of GROUPS) {
    const text = section(options, title)
    if (text === undefined) { t.fail(`docs/reference/options.md has a section ${title}`); continue }
    const headings = [...text.matchAll(/^### (.+)\n\n(.*)\n\n(.*)$/gm)]
    t.same(headings.map((h) => h[1]).sort(), [...keys].sort(), `${title}: the headings are exactly the options`)
    for (const [, path, typeLine, meaning] of headings) {
      t.match(typeLine, /^Type: .+ · Default: .+$/, `${path}: type and default`)
      t.ok(meaning !== undefined && meaning.length > 3, `${path}: what it does`)
    }
  }
})

t.test('every option of the reference has an example of its own that sets it (compiled: test/types/docs-options.tst.ts)', async (t) => {
  const blocks = new Map([...options.matchAll(/^### (.+)\n([\s\S]*?)(?=^##|(?![\s\S]))/gm)].map((m) => [m[1]!, m[2]!]))
  for (const path of GROUPS.flatMap(([, keys]) => keys)) {
    const example = /^```ts\n(.+)\n```$/m.exec(blocks.get(path) ?? '')?.[1]
    if (example === undefined) { t.fail(`${path}: an example`); continue }
    const [first, ...rest] = path.split('.')
    // The example sets the option: its group, then each key of the path, in order (`avatar: { fetch: { maxBytes:`).
    t.match(example, new RegExp([first, ...rest].map((k) => `\\b${k}: `).join('(?:\\{ |.*?)')), `${path}: the example sets it`)
  }
})

t.test('every group of the options reference has a compiled example', async (t) => {
  for (const [title] of GROUPS.slice(1)) t.match(section(options, title) ?? '', /```ts\n.*\n```/, `${title}: an example`)
})

/** The status each code's JSDoc names (`/** 401/403: …`), from the source of lib/errors.ts. */
function statusesFromSource (): Map<string, string> {
  const source = readFileSync(join(root, 'lib/errors.ts'), 'utf8')
  const found = new Map<string, string>()
  for (const m of source.matchAll(/\/\*\* (?:(\d{3}(?:\/\d{3})*): )?[^*]*\*\/\n\s+\w+: '(GATEHOUSE_\w+)'/g)) found.set(m[2]!, m[1] ?? 'none (startup)')
  return found
}

t.test('the error-code reference has one row per ErrorCodes value, with the status of its JSDoc, and nothing else', async (t) => {
  const errors = readFileSync(join(root, 'docs/reference/errors.md'), 'utf8')
  const table = rows(errors).filter((r) => /^`GATEHOUSE_/.test(r[0]!))
  const statuses = statusesFromSource()
  t.equal(statuses.size, Object.keys(ErrorCodes).length, 'every code in lib/errors.ts has a JSDoc the test reads')
  t.same(table.map((r) => r[0]!.replace(/`/g, '')).sort(), Object.values(ErrorCodes).sort(), 'one row per code, no other')
  for (const [code, status, when, todo] of table) {
    const name = code!.replace(/`/g, '')
    t.equal(status, statuses.get(name), `${name}: the status its JSDoc gives`)
    t.ok(when !== '' && todo !== undefined && todo !== '', `${name}: when it happens and what the client should do`)
  }
})

t.test('every top-level key that moved into a group is in the table of deprecated names of the reference, with its new place', async (t) => {
  const table = section(options, 'Deprecated names') ?? ''
  for (const [old, now] of Object.entries(MOVED_OPTION_KEYS)) t.match(table, `| \`${old}\` | \`${now}\` |`, `${old} → ${now}`)
})
