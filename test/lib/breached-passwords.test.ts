/**
 * The breached-password check (toolkit and lib): the range API's k-anonymity protocol against a local stand-in
 * over real HTTP (5-character uppercase prefix, `Add-Padding: true`, count-0 padding lines ignored), its deadline,
 * fail-open and fail-closed, and the offline list.
 */
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { breachedPasswords } from '../../lib/breached-passwords.js'
import { pwnedStandin, sha1Hex } from '../helpers/pwned-standin.js'

const standin = await pwnedStandin()
t.teardown(() => standin.close())
standin.breach('password123', 250_000)
standin.breach('rarely-seen-phrase', 2)
// As a padded answer can list it: the password's own suffix with count 0 is not a breach.
standin.breach('padded-but-clean', 0)

t.test('only the first 5 characters of the SHA-1 leave, uppercase, with Add-Padding: true', async (t) => {
  const check = breachedPasswords({ rangeUrl: standin.rangeUrl })
  t.same(await check.check('password123'), { breached: true, count: 250_000, checked: true })
  const asked = standin.asked.at(-1)!
  t.equal(asked.path, `/range/${sha1Hex('password123').slice(0, 5)}`)
  t.match(asked.path, /^\/range\/[0-9A-F]{5}$/)
  t.equal(asked.padding, 'true')
  t.same(await check.check('correct horse battery staple 9!'), { breached: false, count: 0, checked: true })
  t.same(await check.check('padded-but-clean'), { breached: false, count: 0, checked: true }, 'a count-0 (padding) line is not a breach')
  for (const { path } of standin.asked) t.notMatch(path, /password123|[0-9A-F]{6}/, 'never more than the prefix')
})

t.test('another suffix of the same range is not this password', async (t) => {
  // Two phrases whose SHA-1 share the 5-character prefix (a birthday search: a few thousand tries at most).
  const byPrefix = new Map<string, string>()
  let pair: [string, string] | undefined
  for (let i = 0; pair === undefined; i++) {
    const phrase = `neighbour-${i}`
    const prefix = sha1Hex(phrase).slice(0, 5)
    const other = byPrefix.get(prefix)
    if (other !== undefined) pair = [other, phrase]
    byPrefix.set(prefix, phrase)
  }
  standin.breach(pair[0], 7)
  const check = breachedPasswords({ rangeUrl: standin.rangeUrl })
  t.same(await check.check(pair[1]), { breached: false, count: 0, checked: true }, 'its range holds a breached neighbour, not it')
  t.same(await check.check(pair[0]), { breached: true, count: 7, checked: true })
})

t.test('minCount: how many breaches make a password breached', async (t) => {
  const check = breachedPasswords({ rangeUrl: standin.rangeUrl, minCount: 10 })
  t.same(await check.check('rarely-seen-phrase'), { breached: false, count: 2, checked: true })
  t.equal((await check.check('password123')).breached, true)
})

t.test('slow or down: fail-open says it could not check; fail-closed is a 503; the deadline holds', async (t) => {
  t.teardown(() => { standin.mode = 'ok' })
  standin.mode = 'slow'
  const began = Date.now()
  t.same(await breachedPasswords({ rangeUrl: standin.rangeUrl, timeout: 200 }).check('password123'), { breached: false, count: 0, checked: false })
  const took = Date.now() - began
  // `slow` never answers: the deadline is what answered. A lower bound only (load makes it later, never earlier).
  t.ok(took >= 150, `gave up at the deadline (${took} ms)`)
  await t.rejects(breachedPasswords({ rangeUrl: standin.rangeUrl, timeout: 200, onUnavailable: 'refuse' }).check('password123'), { statusCode: 503, code: 'GATEHOUSE_UNAVAILABLE' })
  standin.mode = 'down'
  t.same(await breachedPasswords({ rangeUrl: standin.rangeUrl }).check('password123'), { breached: false, count: 0, checked: false })
  await t.rejects(breachedPasswords({ rangeUrl: standin.rangeUrl, onUnavailable: 'refuse' }).check('password123'), { statusCode: 503 })
  await t.rejects(breachedPasswords({ rangeUrl: 'http://127.0.0.1:1/range/', onUnavailable: 'refuse' }).check('x'), { statusCode: 503 }, 'unreachable')
})

t.test('a 200 that is not a range answer (a proxy\'s page, nothing) is the service failing, not "not breached"', async (t) => {
  t.teardown(() => { standin.mode = 'ok' })
  for (const mode of ['garbage', 'empty'] as const) {
    standin.mode = mode
    t.same(await breachedPasswords({ rangeUrl: standin.rangeUrl }).check('password123'), { breached: false, count: 0, checked: false }, `${mode}: fail-open says it could not check`)
    await t.rejects(breachedPasswords({ rangeUrl: standin.rangeUrl, onUnavailable: 'refuse' }).check('password123'), { statusCode: 503, code: 'GATEHOUSE_UNAVAILABLE' }, `${mode}: fail-closed refuses`)
  }
  standin.mode = 'ok'
  t.same(await breachedPasswords({ rangeUrl: standin.rangeUrl, onUnavailable: 'refuse' }).check('never-breached-passphrase-91'), { breached: false, count: 0, checked: true }, 'a real range without the suffix is a checked "no"')
})

t.test('offline list: bare hashes and HASH:COUNT lines, any case; count-0 lines ignored', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-breached-'))
  const file = join(dir, 'list.txt')
  writeFileSync(file, `# top passwords\n${sha1Hex('letmein').toLowerCase()}\n${sha1Hex('qwerty')}:99\r\n${sha1Hex('zeroed')}:0\n\n`)
  const check = breachedPasswords({ file })
  t.same(await check.check('letmein'), { breached: true, count: 1, checked: true })
  t.same(await check.check('qwerty'), { breached: true, count: 99, checked: true })
  t.same(await check.check('zeroed'), { breached: false, count: 0, checked: true })
  t.same(await check.check('not in the list'), { breached: false, count: 0, checked: true })
  writeFileSync(join(dir, 'bad.txt'), `${sha1Hex('a')}\nnot-a-hash\n`)
  t.throws(() => breachedPasswords({ file: join(dir, 'bad.txt') }), { option: 'breachedPasswords.file', message: /line 2/ })
  t.throws(() => breachedPasswords({ file: join(dir, 'missing.txt') }), { option: 'breachedPasswords.file', message: /ENOENT/ })
})

t.test('bad options name the option', async (t) => {
  t.throws(() => breachedPasswords({ onUnavailable: 'maybe' as never }), { option: 'breachedPasswords.onUnavailable' })
  t.throws(() => breachedPasswords({ minCount: 0 }), { option: 'breachedPasswords.minCount' })
  t.throws(() => breachedPasswords({ rangeUrl: 'not a url' }), { option: 'breachedPasswords.rangeUrl' })
  t.throws(() => breachedPasswords({ timeout: -1 }), { option: 'breachedPasswords.timeout' })
  t.throws(() => breachedPasswords({ file: '/x', rangeUrl: 'http://127.0.0.1/' }), { option: 'breachedPasswords.rangeUrl' })
  t.throws(() => breachedPasswords({ extra: 1 } as never), { option: 'breachedPasswords.extra' })
})
