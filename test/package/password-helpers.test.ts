/**
 * The password helpers as a user calls them from `fastify-gatehouse/toolkit`: hash once (setup or the hash
 * CLI), keep the strings, decode them once at startup, verify per request.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { argon2Hash, argon2Verify, bcryptHash, bcryptVerify, decodeArgon2Secret } from '../../toolkit.js'

t.test('argon2: hash, decode the stored strings, verify', async (t) => {
  const stored = await argon2Hash('correct horse', { memoryCost: 1024 })
  t.match(stored, { hash: /^[A-Za-z0-9+/]+=*$/, salt: /^[A-Za-z0-9+/]+=*$/ })
  const secret = decodeArgon2Secret(stored.hash, stored.salt, { memoryCost: 1024 })
  t.equal(await argon2Verify('correct horse', secret), true)
  t.equal(await argon2Verify('wrong horse', secret), false)
  t.throws(() => decodeArgon2Secret('not base64!', stored.salt), { code: 'GATEHOUSE_OPTION', option: 'basicAuth.argon2Hash' })
  t.throws(() => decodeArgon2Secret(stored.hash, 'c2FsdA==', {}, 'users.alice'), { code: 'GATEHOUSE_OPTION', option: 'users.alice.argon2Salt' })
})

t.test('bcrypt: hash and verify', async (t) => {
  const hash = await bcryptHash('correct horse', 4)
  t.equal(await bcryptVerify('correct horse', hash), true)
  t.equal(await bcryptVerify('wrong horse', hash), false)
})

/** Collects the process warnings emitted while `fn` runs. */
async function warnings (fn: () => Promise<unknown>): Promise<Array<{ name: string; code?: string; message: string }>> {
  const seen: Array<{ name: string; code?: string; message: string }> = []
  const listener = (w: Error & { code?: string }): void => { seen.push({ name: w.name, code: w.code, message: w.message }) }
  process.on('warning', listener)
  try {
    await fn()
    // 'warning' events are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.off('warning', listener)
  }
  return seen
}

t.test('a stored value that is not a hash refuses every password and says so once (issue 37: no silent 403)', async (t) => {
  // Two fixed hashes of 'alice-pw' (cost 10, as the CLI makes them), so the test means the same on every run: the
  // shell eats all of the first after `b0` (its salt and digest are one long variable name) and keeps the tail of
  // the second from its first `.`. A random hash is the first kind about one run in six, and then the warning's own
  // example ("b0") would contain the value: the "not logged" check needs the second kind.
  const eaten = '$2b$10$qskS3KmG1WU89WKs5ZOkZen5DJTb4I5SQXqAZG5xuTTZuzdlIEaZa'
  const kept = '$2b$10$S0SwUhaYxTQimepqLXpGhe2kta.eq7MSK5jTrXB/xurF5YSQoVN.G'
  // What a shell makes of a hash in double quotes: `$2` and `$1` are parameters, `$x…` a variable.
  const shell = (hash: string): string => execFileSync('sh', ['-c', `ALICE_HASH="${hash}"; printf %s "$ALICE_HASH"`], { encoding: 'utf8' })
  t.equal(shell(eaten), 'b0', 'the shell turned the first hash into "b0"')
  const mangled = shell(kept)
  t.equal(mangled, 'b0.eq7MSK5jTrXB/xurF5YSQoVN.G', 'and the second into b0 and its tail')
  let results: boolean[] = []
  const bcryptWarnings = await warnings(async () => {
    results = [await bcryptVerify('alice-pw', mangled), await bcryptVerify('alice-pw', 'b0'), await bcryptVerify('alice-pw', ''), await bcryptVerify('alice-pw', undefined as never)]
  })
  t.same(results, [false, false, false, false], 'refused, not thrown')
  t.equal(bcryptWarnings.length, 1, 'one warning, however often it is called')
  t.match(bcryptWarnings[0], { name: 'GatehouseWarning', code: 'GATEHOUSE_NOT_A_HASH' })
  t.equal(bcryptWarnings[0]!.message, `fastify-gatehouse: bcryptVerify was given a string of ${mangled.length} characters where a bcrypt hash ($2a$/$2b$/$2y$, 60 characters) belongs, so every password is refused. ` +
    'A hash in double quotes is expanded by the shell ("$2b$10$…" becomes "b0"): quote it with single quotes, as `fastify-gatehouse hash --bcrypt --env NAME` prints it.')
  t.notMatch(bcryptWarnings[0]!.message, mangled, 'the value itself is not logged (it may be a password)')
  t.equal(await bcryptVerify('alice-pw', eaten), true, 'a real hash still verifies')
  t.equal(await bcryptVerify('alice-pw', kept), true)

  const stored = await argon2Hash('ops-pw', { memoryCost: 1024 })
  const argonWarnings = await warnings(async () => {
    results = [await argon2Verify('ops-pw', stored.hash as never), await argon2Verify('ops-pw', stored as never)]
  })
  t.same(results, [false, false], 'the base64 strings themselves are not a decoded secret')
  t.equal(argonWarnings.length, 1)
  t.match(argonWarnings[0], { name: 'GatehouseWarning', code: 'GATEHOUSE_NOT_A_HASH', message: /^fastify-gatehouse: argon2Verify was given a string of 44 characters where a decoded Argon2id hash belongs, so every password is refused\. Decode the stored hash and salt once with decodeArgon2Secret\(hash, salt\)/ })
  t.equal(await argon2Verify('ops-pw', decodeArgon2Secret(stored.hash, stored.salt, { memoryCost: 1024 })), true, 'the decoded secret verifies')
})
