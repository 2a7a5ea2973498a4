/**
 * The package loads its heavy and optional dependencies on use, never on import: one row per family, each run
 * in a fresh process (a child script beside this file, where nothing was loaded before) that reports, step by
 * step, what has been loaded; each row compares its child's report. One test process for all six families
 * (they were five test files, each paying the test runner's start-up).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { freePort } from '../helpers/redis-server.js'

// The child runs with this process's TypeScript loader only (no coverage or mock hooks).
const loader = process.execArgv.filter((a) => a.includes('ts-loader'))

interface Row {
  /** What the row shows. */
  name: string
  /** The child script, in this folder. */
  child: string
  /** Extra arguments of the child. */
  args?: () => Promise<string[]>
  /** The child's report, step by step. */
  expected: Record<string, unknown>
}

const rows: Row[] = [
  {
    // jose (ID tokens, Apple's client secret) and the dev server load when used; sharp is never loaded: the dev
    // server draws its pictures without it.
    name: 'jose and the dev server are loaded when used, not before; sharp not even for the dev server\'s pictures',
    child: 'oauth2-child.ts',
    expected: {
      imported: [],
      registered: [],
      ready: ['dev-server'],
      pictureServed: ['dev-server'],
      oidcReady: ['jose', 'dev-server'],
      pictureStatus: 200
    }
  },
  {
    // Registering the passkey provider loads @simplewebauthn/server, and lmdb only with a `bolt://` store.
    name: '@simplewebauthn/server and lmdb are loaded when used, not before',
    child: 'passkey-child.ts',
    expected: {
      imported: [],
      memoryStore: ['simplewebauthn'],
      boltStore: ['simplewebauthn', 'lmdb']
    }
  },
  {
    // The child's argument is a port where no Redis listens.
    name: 'ioredis is loaded when a Redis store is opened, not before',
    child: 'state-store-child.ts',
    args: async () => [String(await freePort())],
    expected: {
      imported: false,
      memoryOpened: false,
      appWithoutRedis: false,
      refusedOptions: false,
      redisOpened: true
    }
  },
  {
    name: 'the toolkit loads bcryptjs, argon2, @fastify/static, @fastify/compress, @fastify/cors and zlib on use, not on import',
    child: 'toolkit-child.ts',
    expected: {
      imported: [],
      hooksSetUp: [],
      bodyChecked: [],
      compressedBodyChecked: ['node:zlib'],
      bcryptHashed: ['bcryptjs', 'node:zlib'],
      argon2Hashed: ['bcryptjs', 'argon2', 'node:zlib'],
      gzipRegistered: ['bcryptjs', 'argon2', '@fastify/compress', 'node:zlib'],
      fileServerRegistered: ['bcryptjs', 'argon2', '@fastify/static', '@fastify/compress', 'node:zlib'],
      corsAndHeadersRegistered: ['bcryptjs', 'argon2', '@fastify/static', '@fastify/compress', '@fastify/cors', 'node:zlib']
    }
  },
  {
    // The root exports samlProvider; providers/saml/ and @node-saml/node-saml load when it is registered.
    name: 'the SAML provider and @node-saml/node-saml are loaded when samlProvider is registered, not on import nor by a password-only app',
    child: 'saml-child.ts',
    expected: {
      imported: [],
      passwordOnly: [],
      samlRegistered: ['providers/saml', '@node-saml/node-saml']
    }
  },
  {
    name: 'nodemailer is loaded when an SMTP sender is configured, not before',
    child: 'verify-child.ts',
    expected: {
      imported: false,
      sentWithoutSmtp: false,
      refusedOptions: false,
      smtpConfigured: true
    }
  }
]

interface ChildResult { status: number; stdout: string; stderr: string }

/** Runs one child to its end (at most 90 s) and collects what it printed. */
async function run (row: Row): Promise<ChildResult> {
  const script = fileURLToPath(new URL(`./${row.child}`, import.meta.url))
  const args = [...loader, script, ...(await row.args?.() ?? [])]
  return await new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: 'utf8', timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : (typeof error.code === 'number' ? error.code : 1), stdout, stderr })
    })
  })
}

for (const row of rows) {
  t.test(row.name, async (t) => {
    const child = await run(row)
    t.equal(child.status, 0, child.stderr)
    t.same(JSON.parse(child.stdout), row.expected)
  })
}
