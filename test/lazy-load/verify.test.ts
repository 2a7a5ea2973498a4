import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// The child runs with this process's TypeScript loader only (no coverage or mock hooks).
const loader = process.execArgv.filter((a) => a.includes('ts-loader'))

t.test('nodemailer is loaded when an SMTP sender is configured, not before', async (t) => {
  const child = spawnSync(process.execPath, [...loader, fileURLToPath(new URL('./verify-child.ts', import.meta.url))], { encoding: 'utf8', timeout: 90_000 })
  t.equal(child.status, 0, child.stderr)
  t.same(JSON.parse(child.stdout), {
    imported: false,
    sentWithoutSmtp: false,
    refusedOptions: false,
    smtpConfigured: true
  })
})
