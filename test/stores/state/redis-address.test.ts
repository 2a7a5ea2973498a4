/**
 * Store addresses: one grammar wherever a store address is taken (stateStore, the passkey store, the demo's
 * STATE_STORE). Bad addresses are OptionsErrors naming the option and never echoing a password.
 */
import t from 'tap'
import { parseRedisAddress } from '../../../stores/state/redis-address.js'
import { openStateStore } from '../../../stores/state/resolve.js'
import { openPasskeyStore } from '../../../stores/passkey/index.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'

t.test('each form parses to its kind', async (t) => {
  t.same(parseRedisAddress('redis://u:p@127.0.0.1:6379/2', 'x'), { kind: 'single', url: 'redis://u:p@127.0.0.1:6379/2' })
  t.same(parseRedisAddress('rediss://h:6380', 'x'), { kind: 'single', url: 'rediss://h:6380' })
  t.same(parseRedisAddress('redis-cluster://10.0.0.1:7000,10.0.0.2:7001', 'x'),
    { kind: 'cluster', nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }], tls: false })
  t.same(parseRedisAddress('rediss-cluster://user:p%40ss@h1:7000,[::1]:7001/', 'x'),
    { kind: 'cluster', nodes: [{ host: 'h1', port: 7000 }, { host: '::1', port: 7001 }], username: 'user', password: 'p@ss', tls: true })
  t.same(parseRedisAddress('redis-sentinel://:pw@s1:26379,s2:26380/mymaster', 'x'),
    { kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26380 }], name: 'mymaster', password: 'pw', tls: false })
})

t.test('bad addresses: an OptionsError naming the option, the password never echoed', async (t) => {
  const bad = [
    ['redis-cluster://:hunter2@h1', /node that is not host:port/],
    ['redis-cluster://:hunter2@h1:99999', /node that is not host:port/],
    ['redis-cluster://:hunter2@', /node that is not host:port/],
    ['redis-sentinel://:hunter2@s1:26379', /master name/],
    ['redis-sentinel://:hunter2@s1:26379/', /master name/],
    ['mongodb://:hunter2@h', /got a "mongodb:" address/],
    ['hunter2', /not an address/]
  ] as const
  for (const [address, message] of bad) {
    const err = await openStateStore(address, 'stateStore').then(() => undefined, (e: Error) => e)
    t.match(err, { name: 'OptionsError', option: 'stateStore', message }, address)
    t.notMatch(err?.message, /hunter2/, 'no password in the message')
    t.throws(() => openPasskeyStore(address, 'passkey.store'), { name: 'OptionsError', option: 'passkey.store' })
  }
})

t.test('memory:// is the in-memory store, owned by the caller', async (t) => {
  const opened = await openStateStore('memory://', 'stateStore')
  t.ok(opened.store instanceof MemoryStateStore)
  t.equal(opened.owned, true)
  await opened.store.close()
})
