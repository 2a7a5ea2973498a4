/**
 * The password helpers as a user calls them from `fastify-gatehouse/toolkit`: hash once (setup or the hash
 * CLI), keep the strings, decode them once at startup, verify per request.
 */
import t from 'tap'
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
