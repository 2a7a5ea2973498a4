import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// The child runs with this process's TypeScript loader only (no coverage or mock hooks).
const loader = process.execArgv.filter((a) => a.includes('ts-loader'))

t.test('the toolkit loads bcryptjs, argon2, @fastify/static, @fastify/compress and zlib on use, not on import', async (t) => {
  const child = spawnSync(process.execPath, [...loader, fileURLToPath(new URL('./toolkit-child.ts', import.meta.url))], { encoding: 'utf8', timeout: 90_000 })
  t.equal(child.status, 0, child.stderr)
  t.same(JSON.parse(child.stdout), {
    imported: [],
    hooksSetUp: [],
    bodyChecked: [],
    compressedBodyChecked: ['node:zlib'],
    bcryptHashed: ['bcryptjs', 'node:zlib'],
    argon2Hashed: ['bcryptjs', 'argon2', 'node:zlib'],
    gzipRegistered: ['bcryptjs', 'argon2', '@fastify/compress', 'node:zlib'],
    fileServerRegistered: ['bcryptjs', 'argon2', '@fastify/static', '@fastify/compress', 'node:zlib']
  })
})
