import t from 'tap'
import Fastify from 'fastify'
import { injectApp } from '../../helpers/app.js'
import { profilerPlugin } from '../../../plugins/toolkit/profiler.js'
import { VarRegistry } from '../../../plugins/toolkit/metrics.js'

t.test('profiler: index, vars, CPU profile, heap snapshot, bad seconds', async (t) => {
  const registry = new VarRegistry()
  registry.publish('answer', () => 42)
  let profileStarted = (): void => {}
  const started = new Promise<void>((resolve) => { profileStarted = resolve })
  const { app, base, fetch } = await injectApp(async (app) => {
    // Tells the test when the profile handler has been entered (it marks the profiler busy synchronously).
    app.addHook('preHandler', async (req) => { if (req.url === '/debug/pprof/profile?seconds=1') setImmediate(profileStarted) })
    await app.register(profilerPlugin, { prefix: '/debug', registry, maxSeconds: 5 })
    await app.register(profilerPlugin, { prefix: '/closed', allow: ['10.0.0.1'] })
  })
  t.teardown(() => app.close())

  const idx = await fetch(`${base}/debug/pprof/`)
  t.equal(idx.status, 200)
  t.match(idx.headers.get('content-type'), /^text\/html/)
  t.match(await idx.text(), /profile\?seconds=30[\s\S]*heap[\s\S]*vars/)
  const redirect = await fetch(`${base}/debug/pprof`, { redirect: 'manual' })
  t.equal(redirect.status, 302)
  t.equal(redirect.headers.get('location'), 'pprof/')

  const vars = await (await fetch(`${base}/debug/vars`)).json() as Record<string, unknown>
  t.equal(vars.answer, 42)
  t.ok(Array.isArray(vars.cmdline))

  for (const bad of ['0', '6', 'abc', '1.5', '-1', '', '1e1', '99999999']) {
    const r = await fetch(`${base}/debug/pprof/profile?seconds=${bad}`)
    t.equal(r.status, 400, `seconds=${bad}`)
    t.same(await r.json(), { error: 'invalid seconds', details: 'must be a whole number from 1 to 5', code: 'GATEHOUSE_BAD_REQUEST' })
  }
  const twice = await fetch(`${base}/debug/pprof/profile?seconds=1&seconds=2`)
  t.equal(twice.status, 400, 'repeated parameter')
  t.same(await twice.json(), { error: 'invalid seconds', details: 'must be a whole number from 1 to 5', code: 'GATEHOUSE_BAD_REQUEST' })

  const pending = fetch(`${base}/debug/pprof/profile?seconds=1`)
  // The profile runs for a second; a second capture meanwhile is refused rather than queued.
  await started
  const busy = await fetch(`${base}/debug/pprof/heap`)
  t.equal(busy.status, 409)
  t.same(await busy.json(), { error: 'profiler busy', details: 'another profile or snapshot is running', code: 'GATEHOUSE_CONFLICT' })
  const prof = await pending
  t.equal(prof.status, 200)
  t.equal(prof.headers.get('content-disposition'), 'attachment; filename="profile.cpuprofile"')
  const profile = await prof.json() as { nodes: Array<{ callFrame: { functionName: string } }>; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }
  t.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0, 'DevTools .cpuprofile: nodes')
  t.ok(Array.isArray(profile.samples) && Array.isArray(profile.timeDeltas), 'samples and timeDeltas')
  t.ok(profile.endTime - profile.startTime >= 900_000, `about one second of profile (${profile.endTime - profile.startTime} µs)`)

  const heap = await fetch(`${base}/debug/pprof/heap`)
  t.equal(heap.status, 200)
  t.equal(heap.headers.get('content-disposition'), 'attachment; filename="heap.heapsnapshot"')
  const text = await heap.text()
  t.match(text.slice(0, 40), /^\{"snapshot":\{"meta"/, 'V8 heap snapshot')
  t.doesNotThrow(() => JSON.parse(text), 'complete JSON')

  for (const path of ['/closed/pprof/', '/closed/vars', '/closed/pprof/heap', '/closed/pprof/profile?seconds=1']) {
    const r = await fetch(base + path)
    t.equal(r.status, 403, `allow-list guards ${path}`)
    t.same(await r.json(), { error: 'forbidden', details: 'source address is not allowed', code: 'GATEHOUSE_FORBIDDEN' })
  }
})

t.test('profiler refuses bad options', async (t) => {
  for (const [opts, option] of [
    [{ maxSeconds: 0 }, 'profiler.maxSeconds'], [{ maxSeconds: 3601 }, 'profiler.maxSeconds'], [{ registry: 1 }, 'profiler.registry'],
    [{ allow: ['x y'] }, 'profiler.allow'], [{ trustedProxies: ['x y'] }, 'profiler.trustedProxies']
  ] as const) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(profilerPlugin, opts as never).ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await bad.close()
  }
})
