/**
 * Renames with a path (issue 44 item 6): every deprecated name still works as the new one does, and warns once per
 * process (a DeprecationWarning with its code) when it is used. Each name is used twice in a fresh process
 * (uses-child.ts: a warning is once per process, so no earlier test may have used it); the child reports what each
 * use gave next to what the new name gives, and the warnings in between.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { DEPRECATIONS, MOVED_CODE } from '../../lib/deprecation.js'
import { ENTRIES, surface } from '../helpers/api-surface.js'

t.setTimeout(240_000)
const root = fileURLToPath(new URL('../../', import.meta.url))
const loader = process.execArgv.filter((a) => a.includes('ts-loader'))

const report = await new Promise<Record<string, { works: boolean; warnings: string[] }>>((resolve, reject) => {
  execFile(process.execPath, [...loader, fileURLToPath(new URL('uses-child.ts', import.meta.url))], { cwd: root, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
    if (err !== null) { reject(new Error(`${err.message}\n${stderr}`)); return }
    resolve(JSON.parse(stdout) as Record<string, { works: boolean; warnings: string[] }>)
  })
})

/** A string, a number or a RegExp cannot warn: these carry the `@deprecated` mark alone. */
const MARK_ONLY = new Set(['root:DEV_PORT', 'root:BREACHED_PASSWORD_HEADER', 'stores:AVATAR_ID_RE', 'providers:DEV_PORT'])
/** The same object as a root name used before in the child: it warned then, once for the process. */
const WARNED_BEFORE = new Set([
  'providers:verifyProvider', 'providers:SendError', 'providers:senderFunc', 'providers:isMailAddress', 'providers:RESERVED_PROVIDER_NAMES',
  'toolkit:funcLogger', 'toolkit:pinoLogger', 'toolkit:stdLogger', 'toolkit:noopLogger'
])

/** The code a name's use warns with: its own (renamed names, lib/deprecation.ts) or the one of moved names. */
function codeOf (name: string): string {
  const bare = name.replace(/^(root|providers|toolkit|stores|option):/, '')
  return (DEPRECATIONS as Record<string, { code: string }>)[bare]?.code ?? MOVED_CODE
}

t.test('every deprecated name works as its new name does and warns once', async (t) => {
  for (const [name, { works, warnings }] of Object.entries(report)) {
    t.ok(works, `${name}: does what the new name does`)
    const expected = MARK_ONLY.has(name) || WARNED_BEFORE.has(name) ? [] : [codeOf(name)]
    t.same(warnings, expected, `${name}: ${expected.length === 0 ? 'no new warning' : `one ${expected[0]} for two uses`}`)
  }
})

t.test('every deprecated value of every entry is used by the child, and every rename of lib/deprecation.ts', async (t) => {
  const names = surface(root, 'source')
  const prefix: Record<string, string> = { '.': 'root', './providers': 'providers', './toolkit': 'toolkit', './stores': 'stores' }
  for (const entry of ENTRIES) {
    for (const n of names.get(entry)!.filter((n) => n.deprecated && n.kind !== 'type')) {
      t.ok(`${prefix[entry.subpath]}:${n.name}` in report, `fastify-gatehouse${entry.subpath.slice(1)}: ${n.name}`)
    }
  }
  const used = new Set(Object.keys(report).map((k) => k.replace(/^(root|providers|toolkit|stores|option):/, '')))
  for (const name of Object.keys(DEPRECATIONS)) t.ok(used.has(name), `${name} (${DEPRECATIONS[name as keyof typeof DEPRECATIONS].code})`)
})

t.test('the upgrading guide lists every code of lib/deprecation.ts with the name it replaces', async (t) => {
  // Read without its backticks: a row writes the entry `{ kind: 'verify' }` in code.
  const guide = readFileSync(`${root}docs/guide/upgrading.md`, 'utf8').replace(/`/g, '')
  for (const [name, { code }] of Object.entries(DEPRECATIONS)) t.match(guide, new RegExp(`${code}.*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*${code}`), `${code}: ${name}`)
  t.match(guide, MOVED_CODE, `${MOVED_CODE}: the moved names`)
})
