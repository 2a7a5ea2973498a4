/**
 * The suite-wide secret check (test/helpers/secret-check.ts) fails a process in which an audit event carries a
 * test secret, a JWT-shaped string or a key named like a token, password, secret or code; `assertNoSecret` is
 * the same check for other telemetry.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { assertNoSecret, findSecret } from '../../helpers/secret-check.js'

const child = fileURLToPath(new URL('./leaky-child.ts', import.meta.url))
// The TypeScript loader tap uses, and the check, as every test process has them.
const loaders = process.execArgv.filter((a) => a.includes('ts-loader') || a.includes('secret-check'))

async function run (kind: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const p = spawn(process.execPath, [...loaders, child, kind], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  let stdout = ''
  p.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  p.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  const code = await new Promise<number | null>((resolve) => p.on('close', resolve))
  return { code, stderr, stdout }
}

t.test('the check is loaded in this test process', async (t) => {
  t.ok(loaders.some((a) => a.includes('secret-check')), 'tap node-arg imports it')
})

t.test('a clean event passes; the process exits 0', async (t) => {
  const r = await run('clean')
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /child done/)
})

for (const [kind, says] of [
  ['password', /secret check: audit event login\.failed: detail\.tried holds the test secret "alice-secret"/],
  ['jwt', /secret check: audit event session\.refused: note holds a JWT-shaped string/],
  ['key', /secret check: audit event login\.succeeded: accessToken is a key named like a token/]
] as const) {
  t.test(`an event with a ${kind} fails the process, naming the event and the field`, async (t) => {
    const r = await run(kind)
    t.equal(r.code, 1, 'non-zero exit')
    t.match(r.stderr, says)
  })
}

t.test('assertNoSecret for span attributes and metric labels', async (t) => {
  t.doesNotThrow(() => { assertNoSecret('span login', { 'http.request.method': 'POST', 'server.address': '127.0.0.1' }) })
  t.equal(findSecret({ labels: { provider: 'local' } }), undefined)
  t.equal(findSecret(['ok', { deep: ['gh-secret'] }]), '1.deep.0 holds the test secret "gh-secret"')
  t.equal(findSecret({ authorization_code: 'x' }), 'authorization_code is a key named like a token, password, secret or code')
  // A hit marks the process failed, so it is shown in a child.
  const r = await run('assert')
  t.equal(r.code, 1)
  t.match(r.stderr, /secret check: span oauth2\.token: url\.full holds a JWT-shaped string/)
})
