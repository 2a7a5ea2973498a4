import t from 'tap'
import { injectApp } from '../../helpers/app.js'
import { parseFromTo, parseTimestamp } from '../../../plugins/toolkit/from-to.js'
import { recovererPlugin } from '../../../plugins/toolkit/recoverer.js'

const iso = (d: Date | null): string | null => d === null ? null : d.toISOString()

t.test('each accepted format', async (t) => {
  const cases: Array<[string, string]> = [
    ['2024-05-01T10:20:30Z', '2024-05-01T10:20:30.000Z'],
    ['2024-05-01t10:20:30z', '2024-05-01T10:20:30.000Z'],
    ['2024-05-01T10:20:30.123456789Z', '2024-05-01T10:20:30.123Z'],
    ['2024-05-01T10:20:30.5+02:00', '2024-05-01T08:20:30.500Z'],
    ['2024-05-01T10:20:30-0130', '2024-05-01T11:50:30.000Z'],
    ['2024-05-01 10:20:30Z', '2024-05-01T10:20:30.000Z'],
    ['2024-05-01T10:20:30', '2024-05-01T10:20:30.000Z'],
    ['2024-05-01T10:20', '2024-05-01T10:20:00.000Z'],
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['20240501', '2024-05-01T00:00:00.000Z'],
    ['202405011020', '2024-05-01T10:20:00.000Z'],
    ['20240501102030', '2024-05-01T10:20:30.000Z'],
    ['1714558830', '2024-05-01T10:20:30.000Z'],
    ['1714558830.25', '2024-05-01T10:20:30.250Z'],
    ['0', '1970-01-01T00:00:00.000Z'],
    ['1714558830123', '2024-05-01T10:20:30.123Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['0050-01-01', '0050-01-01T00:00:00.000Z']
  ]
  for (const [input, want] of cases) t.equal(iso(parseTimestamp(input)), want, input)
})

t.test('garbage is null', async (t) => {
  for (const input of ['', 'yesterday', '2024-13-01', '2024-02-30', '2023-02-29', '1900-02-29', '2024-05-01T24:00', '2024-05-01T10:60',
    '2024-05-01T10:20:61', '2024-05-01Z', '2024-05-01T10:20:30+25:00', '20241301', '202405011060', '2024/05/01', '1e9', '-5',
    '12345678901234567', '2024-05-01T10:20:30.1234567890Z', '２０２４０５０１', '0x10', 'NaN', '2024-5-1', ' 2024-05-01', 'x'.repeat(100)]) {
    t.equal(parseTimestamp(input), null, JSON.stringify(input))
  }
})

t.test('parseFromTo over HTTP', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(recovererPlugin)
    app.get('/range', async (req) => {
      const { from, to } = parseFromTo(req)
      return { from: from.toISOString(), to: to.toISOString() }
    })
    app.get('/custom', async (req) => {
      const { from, to } = parseFromTo(req, { fromParam: 'since', toParam: 'until' })
      return { from: from.toISOString(), to: to.toISOString() }
    })
  })
  t.teardown(() => app.close())

  let r = await fetch(`${base}/range?from=20240501&to=2024-05-02T00:00:00%2B02:00`)
  t.equal(r.status, 200)
  t.same(await r.json(), { from: '2024-05-01T00:00:00.000Z', to: '2024-05-01T22:00:00.000Z' })
  r = await fetch(`${base}/range?from=1714558830&to=1714558830`)
  t.equal(r.status, 200, 'equal bounds allowed')
  r = await fetch(`${base}/custom?since=2024-01-01&until=2024-12-31`)
  t.same(await r.json(), { from: '2024-01-01T00:00:00.000Z', to: '2024-12-31T00:00:00.000Z' })

  const bad: Array<[string, RegExp]> = [
    ['from=garbage&to=20240501', /cannot parse from "garbage"; accepted: RFC3339/],
    ['from=20240501&to=%3Cscript%3E', /cannot parse to "<script>"/],
    ['to=20240501', /from is required/],
    ['from=20240501', /to is required/],
    ['from=&to=20240501', /from is required/],
    ['from=20240501&from=20240502&to=20240503', /from must be given once/],
    ['from=20240502&to=20240501', /from is after to/],
    ['from=2024-02-30&to=2024-03-01', /cannot parse from/],
    ['', /from is required/]
  ]
  for (const [q, re] of bad) {
    r = await fetch(`${base}/range?${q}`)
    t.equal(r.status, 400, q)
    t.match(r.headers.get('content-type'), /application\/json/)
    const body = await r.json() as { error: string; details: string; code: string }
    t.equal(body.error, 'invalid time range')
    t.equal(body.code, 'GATEHOUSE_BAD_REQUEST')
    t.match(body.details, re)
  }
  r = await fetch(`${base}/custom?from=20240501&to=20240502`)
  t.match(await r.json(), { details: /since is required/ }, 'custom names')
})
