/**
 * The passkey and TOTP stores are opened by one function (stores/open-store.ts): the same addresses, the same
 * refusals, each naming the option and never repeating an address (it may hold a password).
 */
import t from 'tap'
import { OptionsError } from '../../lib/errors.js'
import { openPasskeyStore } from '../../stores/passkey/index.js'
import { openTotpStore } from '../../stores/totp/index.js'

const BAD: Array<[unknown, RegExp]> = [
  ['mongodb://user:s3cret@host/db', /must be a memory:\/\/, bolt:\/\/ or Redis address or a store object, got a "mongodb:" address$/],
  ['just text', /got a string that is not an address$/],
  ['bolt://', /is a bolt:\/\/ address without a file path$/],
  ['lmdb://', /is a lmdb:\/\/ address without a file path$/],
  ['redis://user:s3cret@[bad', /is not a valid Redis address: /],
  ['redis-sentinel://user:s3cret@127.0.0.1:1', /is not a valid Redis address: /],
  [42, /must be a (passkey|totp) store \(.+\) or an address$/],
  [{ get () {} }, /must be a (passkey|totp) store \(.+\) or an address$/]
]

for (const [name, open] of [['passkey', openPasskeyStore], ['totp', openTotpStore]] as const) {
  t.test(`${name}: every bad option is an OptionsError naming the option, without the address`, async (t) => {
    for (const [value, message] of BAD) {
      let caught: unknown
      try { open(value, `${name}.store`) } catch (err) { caught = err }
      t.ok(caught instanceof OptionsError, `${String(value)}: an OptionsError`)
      t.equal((caught as OptionsError).option, `${name}.store`)
      t.match((caught as Error).message, message, String(value))
      t.notMatch((caught as Error).message, /s3cret|user:/, 'the address is not repeated')
    }
  })

  t.test(`${name}: memory:// and undefined open a store of ours; a store object is used as given`, async (t) => {
    for (const value of [undefined, 'memory://', 'MEMORY://']) {
      const { store, owned } = open(value, `${name}.store`)
      t.equal(owned, true)
      await store.close()
    }
    const given = open(undefined, 'x').store
    t.same(open(given, 'x'), { store: given, owned: false })
    await given.close()
  })
}
