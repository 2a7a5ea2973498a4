/**
 * Recovery codes and ASVS 5.0 6.5.2: a code is stored as a keyed hash (HMAC-SHA-256), fast to compute, which the
 * standard accepts only for secrets of 112 bits or more; so each new code is 120 bits (24 characters of a 32-letter
 * alphabet). The 60-bit codes (12 characters) of earlier releases, kept as the same kind of hash, still sign in,
 * once, so that nobody loses the codes they wrote down.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { userId } from '../../../lib/user.js'
import { MemoryTotpStore } from '../../../stores/totp/memory.js'
import { readKey, sealer } from '../../../providers/totp/seal.js'
import { KEY, passwordLogin, secondStep, startApp, withTotp } from '../../helpers/totp-app.js'

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

t.test('new recovery codes carry 120 bits: 24 characters of a 32-letter alphabet, each from 5 random bits', async (t) => {
  const clock = FakeTimers.install({ now: Date.UTC(2026, 10, 25, 12, 0, 15), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const app = await startApp(t)
  const { recoveryCodes } = await withTotp(app, 'alice')
  const seen = new Map<string, number>()
  for (const code of recoveryCodes) {
    const chars = code.replace(/-/g, '')
    t.equal(chars.length, 24, `${code.slice(0, 4)}…: 24 characters`)
    t.ok([...chars].every((c) => ALPHABET.includes(c)), 'of the 32-letter alphabet')
    for (const c of chars) seen.set(c, (seen.get(c) ?? 0) + 1)
  }
  t.ok(Math.log2(ALPHABET.length) * 24 >= 112, '24 × 5 = 120 bits, at least the 112 a plain hash needs')
  // 240 characters drawn: far more than half of the 32 letters show up unless the draw is narrowed.
  t.ok(seen.size > 24, `${seen.size} distinct characters in 240`)
})

t.test('a 60-bit recovery code of an earlier release still signs in, once', async (t) => {
  const clock = FakeTimers.install({ now: Date.UTC(2026, 10, 25, 12, 0, 15), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const store = new MemoryTotpStore()
  const app = await startApp(t, { store })
  const { c } = await withTotp(app, 'alice')
  // What an earlier release kept: the HMAC of the 12-character canonical code, under the same derived key.
  const legacy = 'K7QM-2XHB-9RTD'
  await store.setRecovery(userId('local', 'alice'), [sealer(readKey('key', KEY)).recoveryHash(userId('local', 'alice'), legacy.replace(/-/g, ''))])
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const res = await secondStep(c, { recoveryCode: legacy.toLowerCase() })
  t.equal(res.status, 200, 'the old code signs in')
  t.equal(res.headers.get('gatehouse-recovery-codes-left'), '0')
  await c.fetch('/auth/logout')
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  t.equal((await secondStep(c, { recoveryCode: legacy })).status, 403, 'once')
})
