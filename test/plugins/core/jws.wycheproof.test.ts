/**
 * Project Wycheproof's vectors (test/fixtures/vectors/wycheproof/, unchanged copies; source and license in its
 * README) through the signature layer of the session tokens: `JwsKey.verify` of plugins/core/base/jws.ts, the call
 * `checkSignature` (verify.ts) makes once a token's key and algorithm are chosen. The layer is tested here rather
 * than whole tokens because the vectors' messages are arbitrary bytes, which no compact JWS can carry; keys and
 * algorithms are chosen exactly as for a session token: HS256 from the key's bytes (`hmacKey`), ES256 and EdDSA
 * from the vector's public key (`asymmetricVerifier`, what `asymmetricKey` verifies with).
 *
 * Every test of each file runs, in one loop per file; a case whose verdict is not the expected one is listed by
 * its tcId. Expected: `valid` accepted and `invalid` refused, with the product's two documented choices:
 * - HS256 is the full 32-byte HMAC (RFC 7518 §3.2), so a valid tag of the 128-bit groups (a truncated HMAC) is
 *   refused;
 * - an ES256 signature is accepted in its low-S form only (one token, one string: docs/guide/sessions.md), so a
 *   valid signature whose s is above n/2 is refused, and its low-S twin (r, n − s) must then be accepted.
 * None of the three files holds an `acceptable` test; one would be reported with the product's verdict.
 */
import t, { type Test } from 'tap'
import { createHash, createPublicKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { asymmetricVerifier, hmacKey, type JwsKey } from '../../../plugins/core/base/jws.js'

interface WycheproofTest { tcId: number; comment: string; flags: string[]; msg: string; sig?: string; tag?: string; key?: string; result: 'valid' | 'invalid' | 'acceptable' }
interface WycheproofGroup { tagSize?: number; publicKeyDer?: string; tests: WycheproofTest[] }
interface WycheproofFile { algorithm: string; numberOfTests: number; testGroups: WycheproofGroup[] }

// The copies' SHA-256, as their README lists them: the vectors are data kept unchanged.
const SHA256: Record<string, string> = {
  'hmac_sha256_test.json': '2d201cfa61d1bf95e6f5d07d96634b4a348b31e8eaa277ad7c8d09677b7a743f',
  'ecdsa_secp256r1_sha256_p1363_test.json': 'c60de693930e386c3a5472d08081623ef8504decc54b38ac01ec6b2a2575c986',
  'ed25519_test.json': '752d2ea7d7c6cf4736381b6cbacb61f8182b126ab7cd9b058f00c50084975536'
}

function load (name: string): WycheproofFile {
  const bytes = readFileSync(new URL(`../../fixtures/vectors/wycheproof/${name}`, import.meta.url))
  if (createHash('sha256').update(bytes).digest('hex') !== SHA256[name]) throw new Error(`${name} is not the copy its README names`)
  return JSON.parse(bytes.toString('utf8')) as WycheproofFile
}

const hex = (s: string): Buffer => Buffer.from(s, 'hex')
const b64u = (s: string): string => hex(s).toString('base64url')
const P256_N = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551')

/** What one file's run found: mismatches (each naming its tcId), verdict counts, and the documented exceptions. */
interface Run { ran: number; mismatches: string[]; counts: Record<string, number>; exceptions: number }

/**
 * Runs every test of `file`: `check` answers the product's verdict, `expect` what it must be (the vector's result,
 * or a documented exception: `{ accepted, why }`). Each verdict is counted by result and verdict.
 */
function runAll (file: WycheproofFile, check: (g: WycheproofGroup, c: WycheproofTest) => boolean, expect: (g: WycheproofGroup, c: WycheproofTest) => { accepted: boolean; exception?: string }): Run {
  const run: Run = { ran: 0, mismatches: [], counts: {}, exceptions: 0 }
  for (const group of file.testGroups) {
    for (const c of group.tests) {
      run.ran++
      const accepted = check(group, c)
      const want = expect(group, c)
      const label = `${c.result}/${accepted ? 'accepted' : 'refused'}`
      run.counts[label] = (run.counts[label] ?? 0) + 1
      if (want.exception !== undefined) run.exceptions++
      if (c.result === 'acceptable') continue // reported in the counts
      if (accepted !== want.accepted) run.mismatches.push(`tcId ${c.tcId} (${c.result}, ${c.flags.join(',')}${c.comment === '' ? '' : `: ${c.comment}`}) was ${accepted ? 'accepted' : 'refused'}`)
    }
  }
  return run
}

/** Loads `name`, runs every test of it and asserts that all ran and none has an unexpected verdict. */
function runFile (t: Test, name: string, algorithm: string, check: Parameters<typeof runAll>[1], expect: Parameters<typeof runAll>[2]): Run {
  const file = load(name)
  t.equal(file.algorithm, algorithm)
  const run = runAll(file, check, expect)
  t.equal(run.ran, file.numberOfTests, 'every test of the file ran')
  t.same(run.mismatches, [], 'every verdict as expected')
  return run
}

const plain = (_g: WycheproofGroup, c: WycheproofTest): { accepted: boolean } => ({ accepted: c.result === 'valid' })

/** The session verifier of `alg` for each test group's public key (SPKI DER), made once per group. */
function groupVerifiers (alg: 'ES256' | 'EdDSA'): (g: WycheproofGroup) => JwsKey['verify'] {
  const made = new Map<WycheproofGroup, JwsKey['verify']>()
  return (g) => {
    let v = made.get(g)
    if (v === undefined) {
      v = asymmetricVerifier(alg, createPublicKey({ key: hex(g.publicKeyDer!), format: 'der', type: 'spki' }))
      made.set(g, v)
    }
    return v
  }
}

t.test('hmac_sha256_test.json through the HS256 key', async (t) => {
  const run = runFile(t, 'hmac_sha256_test.json', 'HMACSHA256',
    (_g, c) => hmacKey('wycheproof', hex(c.key!)).verify(hex(c.msg), b64u(c.tag!)),
    (g, c) => g.tagSize === 256 ? plain(g, c) : { accepted: false, exception: 'truncated HMAC' })
  t.same(run.counts, { 'valid/accepted': 33, 'valid/refused': 33, 'invalid/refused': 108 }, 'the 33 valid tags refused are the 128-bit (truncated) ones')
  t.equal(run.exceptions, 87, 'the tests of the 128-bit tag groups')
})

t.test('ecdsa_secp256r1_sha256_p1363_test.json through the ES256 verifier', async (t) => {
  const verifierOf = groupVerifiers('ES256')
  const highS = (sig: string): boolean => sig.length === 128 && BigInt('0x' + sig.slice(64)) > P256_N >> 1n
  const lowTwin = (sig: string): string => sig.slice(0, 64) + (P256_N - BigInt('0x' + sig.slice(64))).toString(16).padStart(64, '0')
  const twinsRefused: string[] = []
  const run = runFile(t, 'ecdsa_secp256r1_sha256_p1363_test.json', 'ECDSA',
    (g, c) => verifierOf(g)(hex(c.msg), b64u(c.sig!)),
    (g, c) => {
      if (c.result !== 'valid' || !highS(c.sig!)) return plain(g, c)
      // The documented choice: the high-S form is refused; the same signature in its low-S form must pass.
      if (!verifierOf(g)(hex(c.msg), b64u(lowTwin(c.sig!)))) twinsRefused.push(`tcId ${c.tcId}`)
      return { accepted: false, exception: 'high S' }
    })
  t.same(twinsRefused, [], 'every valid high-S signature is accepted in its low-S form')
  t.same(run.counts, { 'valid/accepted': 103, 'valid/refused': 70, 'invalid/refused': 89 }, 'verdicts by result: no invalid signature accepted')
  t.equal(run.exceptions, 70, 'the valid signatures refused are exactly those with a high S')
})

t.test('ed25519_test.json through the EdDSA verifier', async (t) => {
  const verifierOf = groupVerifiers('EdDSA')
  const run = runFile(t, 'ed25519_test.json', 'EDDSA', (g, c) => verifierOf(g)(hex(c.msg), b64u(c.sig!)), plain)
  t.same(run.counts, { 'valid/accepted': 88, 'invalid/refused': 63 })
})
