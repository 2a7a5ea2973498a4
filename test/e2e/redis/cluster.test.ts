/**
 * The Redis stores on a real Redis Cluster (3 masters, 3 replicas on loopback): keys spread over every master,
 * every script within one slot (no CROSSSLOT), one-time values taken once across two instances, revocations
 * heard and acknowledged across the cluster's nodes, passkeys, and a master killed mid-flight (503s, then
 * recovery by itself once its replica is promoted; nothing taken twice, revocations kept).
 */
import t from 'tap'
import { Cluster, Redis } from 'ioredis'
import { RedisStateStore } from '../../../stores/state/redis.js'
import { keySlot } from '../../../stores/state/redis-slot.js'
import { StateStoreError } from '../../../lib/state-store.js'
import { openStateStore } from '../../../stores/state/resolve.js'
import { RedisPasskeyStore } from '../../../stores/passkey/redis.js'
import type { PasskeyCredential } from '../../../stores/passkey/types.js'
import { clusterForTests } from '../../helpers/redis-cluster.js'
import { sessionApp, tokenOf } from '../../helpers/session-app.js'
import { demoCaptchaToken, startDemo } from '../../helpers/demo.js'
import { client } from '../../helpers/client.js'
import { eventually } from '../../helpers/eventually.js'

const cluster = await clusterForTests(t, 'Redis Cluster')
if (cluster !== undefined) {
  const stores: Array<{ close(): Promise<void> }> = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  const open = (prefix = 'gatehouse:'): RedisStateStore => {
    const s = new RedisStateStore(cluster.address, { keyPrefix: prefix, commandTimeoutMs: 1000 })
    stores.push(s)
    return s
  }
  const a = open()
  const b = open()

  t.test('every operation works, keys spread over all masters, a one-time value is taken once', async (t) => {
    for (let i = 0; i < 60; i++) {
      t.equal(await a.setIfAbsent(`tok:${i}`, `v${i}`, 60_000, { client: '203.0.113.1' }), true)
    }
    t.equal(await b.setIfAbsent('tok:1', 'again', 60_000, { client: '203.0.113.1' }), false, 'the other instance sees it taken')
    await a.set('plain', 'x', 60_000, { client: '203.0.113.2' })
    t.equal(await b.get('plain'), 'x')
    t.same((await b.increment('throttle:fail:eve', 60_000, { client: '203.0.113.3', sliding: true })).count, 1)
    t.same((await a.increment('throttle:fail:eve', 60_000, { client: '203.0.113.3', sliding: true })).count, 2)
    const takes = await Promise.all(Array.from({ length: 60 }, async (_, i) => await Promise.all([a.take(`tok:${i}`), b.take(`tok:${i}`)])))
    t.same(takes.map(([x, y]) => [x, y].filter((v) => v !== undefined)), Array.from({ length: 60 }, (_, i) => [`v${i}`]), 'each taken by exactly one instance')
    t.equal(await a.delete('plain'), true)
    // Spread: each master got some of the 60 entries (by their own hash tags), not one slot for all.
    const counts = await Promise.all(cluster.nodes.map(async (n) => {
      const admin = cluster.admin(n.port)
      try {
        const role = await admin.role() as [string]
        return role[0] === 'master' ? await admin.call('DBSIZE') as number : -1
      } finally { admin.disconnect() }
    }))
    const masters = counts.filter((c) => c >= 0)
    t.equal(masters.length, 3)
    t.ok(masters.every((c) => c > 0), `keys on every master (${masters.join(', ')})`)
  })

  t.test('a client\'s share is counted across slots', async (t) => {
    const s = new RedisStateStore(cluster.address, { keyPrefix: 'share:', maxPerClient: 5 })
    stores.push(s)
    for (let i = 0; i < 5; i++) await s.setIfAbsent(`p:${i}`, 'v', 60_000, { client: '198.51.100.9' })
    await t.rejects(s.setIfAbsent('p:5', 'v', 60_000, { client: '198.51.100.9' }), { statusCode: 429 })
    t.equal(await s.get('p:5'), undefined, 'nothing stored past the share')
    await t.rejects(s.increment('p:6', 60_000, { client: '198.51.100.9' }), { statusCode: 429 }, 'a new counter too')
    t.equal(await s.setIfAbsent('p:0', 'v', 60_000, { client: '198.51.100.9' }), false, 'an existing entry: refused as taken, no place kept')
    t.equal(await s.setIfAbsent('q', 'v', 60_000, { client: '198.51.100.10' }), true, 'another client writes')
  })

  t.test('a {…} key prefix on a Cluster (every key in one slot) is a startup warning; the default prefix is not', async (t) => {
    t.match(await open('{gh}:').durabilityWarnings(), [/hash tag .* one slot/])
    t.same((await a.durabilityWarnings()).filter((w) => /hash tag/.test(w)), [])
  })

  t.test('an ioredis Cluster and a node list are accepted; openStateStore takes redis-cluster:// and memory://', async (t) => {
    const given = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[2]!.port }])
    t.teardown(() => given.disconnect())
    const s = new RedisStateStore(given)
    await s.set('given', '1', 60_000)
    await s.close()
    t.equal(given.status, 'ready', 'a client passed in is left open')
    const listed = new RedisStateStore([{ host: '127.0.0.1', port: cluster.nodes[3]!.port }])
    stores.push(listed)
    t.equal(await listed.get('given'), '1')
    const opened = await openStateStore(cluster.address, 'stateStore')
    t.equal(await opened.store.get('given'), '1')
    await opened.store.close()
    t.equal((await openStateStore('memory://', 'stateStore')).store.constructor.name, 'MemoryStateStore')
  })

  t.test('revocations: published on one node, heard and acknowledged on every instance', async (t) => {
    const one = await sessionApp({ stateStore: cluster.address })
    const two = await sessionApp({ stateStore: cluster.address })
    t.teardown(async () => { await one.close(); await two.close() })
    const c = await one.login('ann')
    const headers = { 'x-jwt': tokenOf(c) }
    t.equal((await two.fetch(`${two.base}/private`, { headers })).status, 200, 'cached on the other instance')
    // PUBLISH counts the subscribers of the node it was sent to; the store sums every node's, so a revocation
    // waits for both instances whichever nodes they listen on. (An acknowledgement-shaped probe: ignored by both.)
    // (Each instance subscribes in the background once started: on a loaded machine that took over 2 s.)
    const reached = await eventually(async () => await a.publish('revocations', JSON.stringify({ a: 'probe' })), (n) => n >= 2)
    t.equal(reached, 2, 'both instances counted')
    t.equal((await one.get(c, '/auth/logout')).status, 200)
    t.equal((await two.fetch(`${two.base}/private`, { headers })).status, 401, 'refused on the other instance at once')
  })

  t.test('the revocation channel lives on the master of its slot: every subscription and publish there, no hop over the cluster bus', async (t) => {
    const admins = cluster.nodes.map((n) => new Redis(n.port, '127.0.0.1', { maxRetriesPerRequest: 1 }))
    t.teardown(() => { for (const r of admins) r.disconnect() })
    // The slot computation agrees with the cluster's own, hash tags included.
    for (const name of ['gatehouse:revocations', 'foo', '{user1000}.following', 'a{}b', 'x{y}z', 'ünï', '']) {
      t.equal(keySlot(name), await admins[0]!.cluster('KEYSLOT', name), `slot of "${name}"`)
    }
    const name = 'gatehouse:bus-probe'
    const slots = await admins[0]!.cluster('SLOTS') as Array<[number, number, [string, number]]>
    const ownerPort = slots.find(([from, to]) => keySlot(name) >= from && keySlot(name) <= to)![2][1]
    const heard: string[][] = [[], [], []]
    const live: Array<Promise<void>> = []
    let bothHeard!: () => void
    const allHeardBoth = new Promise<void>((resolve) => { bothHeard = resolve })
    const subs = await Promise.all([a, b, open()].map(async (store, i) => {
      let ready!: () => void
      live.push(new Promise((resolve) => { ready = resolve }))
      return await store.subscribe('bus-probe', (m) => {
        heard[i]!.push(m)
        if (heard.every((h) => h.length >= 2)) bothHeard()
      }, (on) => { if (on) ready() })
    }))
    t.teardown(async () => { for (const s of subs) await s.close() })
    await Promise.all(live)
    const numsub = async (r: Redis): Promise<number> => Number(((await r.pubsub('NUMSUB', name)) as [string, number])[1])
    t.same(await Promise.all(admins.map(numsub)), cluster.nodes.map((n) => n.port === ownerPort ? 3 : 0), 'all three subscriptions on the slot\'s master')
    const calls = async (command: string): Promise<number[]> => await Promise.all(admins.map(async (r) =>
      Number(new RegExp(`cmdstat_${command.replace('|', '\\|')}:calls=(\\d+)`).exec(await r.info('commandstats'))?.[1] ?? 0)))
    const published = await calls('publish')
    t.equal(await a.publish('bus-probe', 'counted'), 3, 'every subscriber counted')
    const after = await calls('publish')
    t.same(after.map((n, i) => n - published[i]!), cluster.nodes.map((n) => n.port === ownerPort ? 1 : 0), 'published on the slot\'s master')
    const asked = await calls('pubsub|numsub')
    await b.publish('bus-probe', 'uncounted', { count: false })
    t.same(await calls('pubsub|numsub'), asked, 'an uncounted publish asks no node for its subscribers')
    await allHeardBoth
    t.same(heard, [['counted', 'uncounted'], ['counted', 'uncounted'], ['counted', 'uncounted']], 'every subscription heard both')
  })

  t.test('passkeys on a cluster', async (t) => {
    const p = new RedisPasskeyStore(cluster.address)
    stores.push(p)
    const cred = (id: string, userId: string): PasskeyCredential => ({
      id, userId, user: { name: userId, id: userId }, publicKey: new Uint8Array([1, 2, 3]), counter: 0, transports: [], created: Date.now()
    })
    t.equal(await p.add(cred('k1', 'u1'), 2), 'added')
    t.equal(await p.add(cred('k2', 'u1'), 2), 'added')
    t.equal(await p.add(cred('k3', 'u1'), 2), 'full')
    t.equal(await p.add(cred('k1', 'u2'), 2), 'exists', 'another user cannot take an id')
    t.same((await p.list('u2')).length, 0)
    t.same((await p.list('u1')).map((c) => c.id).sort(), ['k1', 'k2'])
    t.equal(await p.use('k1', 0, 1, Date.now()), true)
    t.equal(await p.use('k1', 0, 2, Date.now()), false, 'a stale counter is refused')
    t.equal(await p.remove('u2', 'k1'), false, 'only the owner removes')
    t.equal(await p.remove('u1', 'k1'), true)
    t.same((await p.list('u1')).map((c) => c.id), ['k2'])
    t.equal(await p.add(cred('k3', 'u1'), 2), 'added', 'a place is free again')
  })

  t.test('resharding under load (MOVED and ASK): every operation answers, none twice; values move with their slots', async (t) => {
    const masters = await Promise.all(['a', 'b'].map(async (k) => await cluster.masterOf(k)))
    const [from, to] = masters[0] !== masters[1] ? masters as [number, number] : [masters[0]!, cluster.nodes.find((n) => n.port !== masters[0])!.port]
    for (let i = 0; i < 300; i++) await a.set(`move:${i}`, `v${i}`, 60_000)
    let running = true
    const taken = new Map<string, number>()
    const failures: unknown[] = []
    const load = (async () => {
      for (let i = 0; running; i = (i + 1) % 300) {
        const store = i % 2 === 0 ? a : b
        try {
          await store.increment(`moving-counter:${i % 17}`, 60_000, { client: '192.0.2.1' })
          const v = await store.take(`move:${i}`)
          if (v !== undefined) taken.set(v, (taken.get(v) ?? 0) + 1)
        } catch (err) { failures.push(err) }
      }
    })()
    await cluster.reshard(from, to, 300)
    running = false
    await load
    t.ok(failures.every((f) => f instanceof StateStoreError), `only 503s during the move (${failures.length})`)
    for (let i = 0; i < 300; i++) {
      const v = await a.take(`move:${i}`)
      if (v !== undefined) taken.set(v, (taken.get(v) ?? 0) + 1)
    }
    t.equal(taken.size, 300, 'every value was taken')
    t.ok([...taken.values()].every((n) => n === 1), 'and none twice')
  })

  t.test('a master killed: 503 while its slot has no master, then recovery by itself; nothing taken twice, revocations kept', async (t) => {
    const app = await sessionApp({ stateStore: cluster.address })
    const other = await sessionApp({ stateStore: cluster.address })
    t.teardown(async () => { await app.close(); await other.close() })
    const revoked = await app.login('bob')
    t.equal((await app.get(revoked, '/auth/logout')).status, 200)
    // The master killed is the revocation channel's, where every instance subscribes: the one-time entry is put
    // on it too.
    const port = await cluster.masterOf('gatehouse:revocations')
    let key = 'one-time'
    for (let i = 0; await cluster.masterOf(`gatehouse:{${key}}`) !== port; i++) key = `one-time-${i}`
    await a.set(key, 'secret', 60_000)
    // Replication is asynchronous: a write the master took and its replica did not is lost with it (see the
    // guide's "Running at scale"). The revocation, the epoch and the entry are on the replicas before the kill
    // (equal offsets and key counts).
    await cluster.allReplicated()
    const survivors = cluster.nodes.filter((n) => n.child !== undefined && n.port !== port).map((n) => new Redis(n.port, '127.0.0.1', { maxRetriesPerRequest: 1 }))
    t.teardown(() => { for (const r of survivors) r.disconnect() })
    await cluster.node(port).kill()
    const killedAt = Date.now()
    // The subscriptions leave the dead master at once for another one: ioredis drops a lost node from its node
    // list, so the channel's master is not found and another is taken (a replica cannot be promoted before the
    // cluster's node timeout of 1000 ms).
    // (How long each step took is printed, not asserted: a loaded machine stretches all of it.)
    const numsub = async (): Promise<number> => (await Promise.all(survivors.map(async (r) =>
      Number(((await r.pubsub('NUMSUB', 'gatehouse:revocations')) as [string, number])[1])))).reduce((n, c) => n + c, 0)
    const resubscribed = eventually(numsub, (n) => n >= 2).then((n) => ({ n, ms: Date.now() - killedAt }))
    let failures = 0
    let value: string | undefined
    // Until the replica is promoted, taking answers 503 (never a success it cannot honour); then it works once.
    for (;;) {
      try { value = await b.take(key); break } catch (err) {
        t.ok(err instanceof StateStoreError, 'a 503')
        t.notMatch((err as Error).message + String((err as StateStoreError).details), /127\.0\.0\.1|\d{4,5}|CLUSTERDOWN|MOVED/, 'no internals')
        failures++
      }
    }
    const recoveredMs = Date.now() - killedAt
    const moved = await resubscribed
    t.equal(moved.n, 2, `both subscriptions on a live master (${moved.ms} ms after the kill)`)
    t.equal(value, 'secret', `recovered after ${recoveredMs} ms and ${failures} 503s`)
    t.equal(await a.take(key), undefined, 'taken once only')
    t.equal((await other.fetch(`${other.base}/private`, { headers: { 'x-jwt': tokenOf(revoked) } })).status, 401, 'the revocation of before the kill holds')
    const fresh = await app.login('carol')
    t.equal((await other.fetch(`${other.base}/private`, { headers: { 'x-jwt': tokenOf(fresh) } })).status, 200, 'new logins work')
    // Both subscriptions moved off the dead master and are counted again (an acknowledgement-shaped probe)...
    const reached = await eventually(async () => await a.publish('revocations', JSON.stringify({ a: 'probe' })), (n) => n >= 2)
    t.equal(reached, 2, `both instances listening again ${Date.now() - killedAt} ms after the kill`)
    // ...so a logout waits for the other instance again: refused there from the next request on.
    t.equal((await app.get(fresh, '/auth/logout')).status, 200)
    t.equal((await other.fetch(`${other.base}/private`, { headers: { 'x-jwt': tokenOf(fresh) } })).status, 401, 'a logout after the failover is refused on the other instance at once')
  })
}

if (cluster !== undefined) {
  t.test('the demo on STATE_STORE=redis-cluster://…: two instances share logins, one-time tokens and wrong passwords', async (t) => {
    const env = { STATE_STORE: cluster.address, AUTH_SECRET: 'cluster-demo-secret-0123456789abcdef-0123' }
    const [one, two] = [await startDemo(env), await startDemo(env)]
    t.teardown(async () => { await one.stop(); await two.stop() })
    const alice = client(`http://127.0.0.1:${one.demo.port}`)
    // The demo's password login asks for its captcha stand-in's token.
    const login = await alice.fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret', 'cf-turnstile-response': await demoCaptchaToken(alice.base) } })
    t.equal(login.status, 200, 'a login (no CROSSSLOT)')
    const wrong = await client(`http://127.0.0.1:${two.demo.port}`).fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'nope', 'cf-turnstile-response': await demoCaptchaToken(`http://127.0.0.1:${two.demo.port}`) } })
    t.equal(wrong.status, 403, 'a wrong password is a 403, not a 503')
    const e = client(`http://127.0.0.1:${one.demo.port}`)
    t.equal((await e.fetch('/auth/email/login?user=erin&address=erin@example.com')).status, 200)
    const [, token] = await one.io.waitFor(/^email to erin@example\.com: .*token=([\w-]+\.[\w-]+\.[\w-]+)/)
    t.equal((await client(`http://127.0.0.1:${two.demo.port}`).fetch(`/auth/email/login?token=${token}`)).status, 200, 'the token works on the other instance')
    t.equal((await e.fetch(`/auth/email/login?token=${token}`)).status, 401, 'and only once')
  })
}
