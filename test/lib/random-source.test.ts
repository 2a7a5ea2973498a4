/**
 * Every random value the package makes (session ids, TOTP secrets, recovery codes, OAuth2 state and PKCE verifiers,
 * passkey challenges, Telegram tokens, authorization codes) must come from node:crypto, never from Math.random,
 * whose output can be predicted from a few samples (ASVS 5.0 6.5.3 and 7.2.3). The package's source is read as
 * text: a new Math.random anywhere in it fails here, before a reviewer has to reason about whether it matters.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const SOURCE_DIRS = ['hooks', 'lib', 'plugins', 'providers', 'servers', 'stores']

/** The package's TypeScript sources: the layer folders and the entry files at the root. */
function packageSources (): string[] {
  const under = (dir: string): string[] => readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`
    if (e.isDirectory()) return under(path)
    return e.name.endsWith('.ts') ? [path] : []
  })
  const entries = readdirSync(root).filter((name) => name.endsWith('.ts'))
  return [...entries, ...SOURCE_DIRS.flatMap(under)]
}

t.test('no Math.random in the package: every random value comes from node:crypto', async (t) => {
  const files = packageSources()
  t.ok(files.length > 100, `${files.length} source files read`)
  const found = files.flatMap((file) => readFileSync(join(root, file), 'utf8').split('\n')
    .map((line, i) => /\bMath\.random\b/.test(line) ? `${file}:${i + 1}: ${line.trim()}` : null)
    .filter((hit) => hit !== null))
  t.same(found, [])
})

t.test('the sources of secrets draw from node:crypto', async (t) => {
  for (const file of ['plugins/core/keys/issue.ts', 'providers/totp/enrol.ts', 'providers/totp/codes.ts', 'providers/oauth2/handshake.ts', 'providers/passkey/ceremony.ts', 'providers/telegram/provider.ts', 'servers/secret-store.ts']) {
    t.match(readFileSync(join(root, file), 'utf8'), /import \{[^}]*\brandomBytes\b[^}]*\} from 'node:crypto'/, file)
  }
})
