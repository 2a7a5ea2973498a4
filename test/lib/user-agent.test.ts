/**
 * The parts of the session list that need no server: device labels from user agents, the option checks, and the
 * merge rule both indexes follow.
 */
import t from 'tap'
import { deviceLabel } from '../../lib/user-agent.js'
import { resolveOptions } from '../../plugins/core/options.js'
import { mergeSessions, parseEntries, type IndexedSession } from '../../stores/state/session-index.js'
import { FIREFOX_LINUX, SAFARI_IPHONE } from '../helpers/sessions-app.js'

t.test('user agents reduced to labels; nothing of the header copied', async (t) => {
  const cases: Array<[string | undefined, string]> = [
    [FIREFOX_LINUX, 'Firefox on Linux'],
    [SAFARI_IPHONE, 'Safari on iOS'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0', 'Edge on Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15', 'Safari on macOS'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36', 'Chrome on Android'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36', 'Chrome on Linux'],
    ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', 'Chrome on ChromeOS'],
    ['Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/111.0.0.0', 'Opera on Windows'],
    ['curl/8.5.0', 'curl'],
    ['<script>alert(1)</script>', 'Unknown device'],
    ['', 'Unknown device'],
    [undefined, 'Unknown device']
  ]
  for (const [ua, label] of cases) t.equal(deviceLabel(ua), label, String(ua).slice(0, 60))
  t.equal(deviceLabel('x'.repeat(100_000) + ' Firefox/1'), 'Unknown device', 'only the first 512 characters are looked at')
})

t.test('revocation.sessionList options are checked, naming their path', async (t) => {
  const base = { secret: () => 'options-secret-0123456789abcdef-0123456789', url: 'http://127.0.0.1' }
  t.same(resolveOptions(base).revocation?.sessionList, { maxPerUser: 50, ip: 'address', page: false }, 'on by default, its page off')
  t.equal(resolveOptions({ ...base, revocation: { sessionList: false } }).revocation?.sessionList, null)
  t.same(resolveOptions({ ...base, revocation: { sessionList: { maxPerUser: 3, ip: false } } }).revocation?.sessionList, { maxPerUser: 3, ip: false, page: false })
  const bad: Array<[unknown, RegExp]> = [
    [{ maxPerUser: 0 }, /revocation\.sessionList\.maxPerUser/],
    [{ maxPerUser: 1001 }, /revocation\.sessionList\.maxPerUser/],
    [{ maxPerUser: 1.5 }, /revocation\.sessionList\.maxPerUser/],
    [{ ip: 'plain' }, /revocation\.sessionList\.ip/],
    [{ other: 1 }, /revocation\.sessionList/],
    ['on', /revocation\.sessionList/]
  ]
  for (const [sessionList, message] of bad) {
    t.throws(() => resolveOptions({ ...base, revocation: { sessionList } as never }), { name: 'OptionsError', message }, JSON.stringify(sessionList))
  }
})

t.test('the merge: later sightings win, unknown ids are added only with an entry, expired go, the bound keeps the most recent', async (t) => {
  const e = (id: string, seen: number, expires = 10_000): IndexedSession => ({ id, provider: null, createdAt: 0, lastSeenAt: seen, expiresAt: expires, device: 'curl', ip: null })
  const kept = mergeSessions([e('a', 5), e('b', 6), e('old', 1, 50)], [
    { id: 'a', lastSeenAt: 9, ip: '10.0.0.1' },
    { id: 'b', lastSeenAt: 2, ip: '10.0.0.2' },
    { id: 'ghost', lastSeenAt: 9, ip: null },
    { id: 'c', lastSeenAt: 8, ip: null, create: e('c', 8) }
  ], 100, 2)
  t.same(kept.map((x) => [x.id, x.lastSeenAt, x.ip]), [['a', 9, '10.0.0.1'], ['c', 8, null]])
  t.same(parseEntries('not json'), [])
  t.same(parseEntries('[1, {"id": 2}]'), [], 'what is not an entry is dropped')
})
