/**
 * The suite-wide secret check reaches span attributes and metric labels: test/helpers/otel-sdk.ts (the SDK every
 * telemetry test registers) checks each span as it ends and each data point as it is collected. A child process
 * leaking a test secret into either exits non-zero, naming the span or metric; a clean one exits 0 (the
 * convention key `http.response.status_code` is not taken for a secret's name).
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const child = fileURLToPath(new URL('./leaky-child.ts', import.meta.url))
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

t.test('a clean span and label pass', async (t) => {
  const r = await run('clean')
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /child done/)
})

t.test('a span attribute with a test secret fails the process', async (t) => {
  const r = await run('span')
  t.equal(r.code, 1)
  t.match(r.stderr, /secret check: span gatehouse\.http: url\.full holds the test secret "alice-secret"/)
})

t.test('a metric label with a test secret fails the process', async (t) => {
  const r = await run('label')
  t.equal(r.code, 1)
  t.match(r.stderr, /secret check: metric gatehouse\.rate_limited: gatehouse\.reason holds the test secret "alice-secret"/)
})
