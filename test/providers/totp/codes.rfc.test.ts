/**
 * The TOTP and HOTP standards' own test vectors through the product's code check: `matchStep` (codes.ts), the
 * function every code route calls with `Date.now()` (context.ts `checkCode`), with options resolved by the
 * provider's own `resolveTotpOptions` and the clock set to the RFC's times by a fake clock. `window: 0`, so that
 * a code must be the one of exactly the RFC's time step.
 *
 * - RFC 6238 Appendix B: SHA1, SHA256 and SHA512 with the RFC's seeds (20, 32 and 64 bytes of "1234567890…"),
 *   8 digits, 30-second steps from T0 = 0, at the six times of the table. Every parameter the RFC uses is one
 *   the product can be configured with (`algorithm`, `digits: 8`, `period: 30`); the seed lengths are the RFC's,
 *   where an enrolment of the product makes 20-byte secrets.
 * - RFC 4226 Appendix D: HOTP of the 20-byte seed for counters 0 to 9, 6 digits. The product computes a TOTP
 *   code as the HOTP of the time step (RFC 6238 §4.2), so counter c is the step of the instant c × 30 s.
 *
 * Over HTTP, a password sign-in's second factor at an RFC 6238 time: provider.rfc6238.test.ts.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { matchStep, type OtpAuth } from '../../../providers/totp/codes.js'
import { resolveTotpOptions } from '../../../providers/totp/options.js'
import { KEY } from '../../helpers/totp-app.js'

const otp = await import('otpauth') as OtpAuth

// RFC 6238 Appendix B: the seeds of the reference implementation, per HMAC.
const SEEDS = {
  SHA1: '12345678901234567890',
  SHA256: '12345678901234567890123456789012',
  SHA512: '1234567890123456789012345678901234567890123456789012345678901234'
} as const

// RFC 6238 Appendix B, the table: time (seconds), and the 8-digit TOTP for SHA1, SHA256, SHA512.
const RFC6238_B: Array<[number, string, string, string]> = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826']
]

// RFC 4226 Appendix D: HOTP values of the seed "12345678901234567890" for counters 0..9.
const RFC4226_D = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489']

const optionsFor = (algorithm: 'SHA1' | 'SHA256' | 'SHA512', digits: 6 | 8) =>
  resolveTotpOptions({ encryptionKey: KEY, algorithm, digits, period: 30, window: 0 }, 'http://localhost', () => {})

t.test('RFC 6238 Appendix B: every time and HMAC of the table', async (t) => {
  const clock = FakeTimers.install({ now: 0, toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const algorithms = ['SHA1', 'SHA256', 'SHA512'] as const
  for (const [seconds, ...codes] of RFC6238_B) {
    clock.setSystemTime(seconds * 1000)
    const step = Math.floor(seconds / 30) // T = (time − T0) / X, T0 = 0, X = 30
    algorithms.forEach((algorithm, i) => {
      const o = optionsFor(algorithm, 8)
      const seed = Buffer.from(SEEDS[algorithm], 'ascii')
      t.equal(seed.length, { SHA1: 20, SHA256: 32, SHA512: 64 }[algorithm])
      t.equal(matchStep(otp, o, seed, codes[i]!, Date.now()), step, `${algorithm} at ${seconds}: ${codes[i]} is step ${step}`)
      // The same instant's code of another HMAC, and this HMAC's code one step later, are not this step's.
      t.equal(matchStep(otp, o, seed, codes[(i + 1) % 3]!, Date.now()), undefined, `${algorithm} at ${seconds}: another HMAC's code refused`)
      t.equal(matchStep(otp, o, seed, codes[i]!, Date.now() + 30_000), undefined, `${algorithm} at ${seconds}: refused one step later (window 0)`)
    })
  }
})

t.test('RFC 4226 Appendix D: HOTP for counters 0 to 9', async (t) => {
  const clock = FakeTimers.install({ now: 0, toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const o = optionsFor('SHA1', 6)
  const seed = Buffer.from(SEEDS.SHA1, 'ascii')
  RFC4226_D.forEach((code, counter) => {
    clock.setSystemTime(counter * 30_000 + 15_000) // the middle of step `counter`
    t.equal(matchStep(otp, o, seed, code, Date.now()), counter, `counter ${counter}: ${code}`)
    if (counter > 0) t.equal(matchStep(otp, o, seed, RFC4226_D[counter - 1]!, Date.now()), undefined, `counter ${counter}: the previous counter's value refused`)
  })
})
