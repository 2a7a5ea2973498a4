/**
 * The provider pages checked against the source: each page's `## Options` section has one `### key` heading per
 * property of the provider's options type (read with the TypeScript compiler), no other, and under each a
 * `Type: … · Default: …` line, what it does, and an example registering the provider with that key (compiled by
 * test/types/docs-provider-options.tst.ts and docs-providers.tst.ts; readme-examples.test.ts checks the lines match).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './pages.js'
import { exportedProperties } from './option-types.js'

// The option types are read from the declarations of the TypeScript graph (test/helpers/type-graph.ts): up to date
// in a fraction of a second, built from nothing in about 40 CPU seconds (minutes on a loaded 2-core machine).
t.setTimeout(600_000)

/** Page → the exported options type its Options section documents. */
const PAGES: Record<string, string> = {
  'password.md': 'DirectProviderOptions',
  'oauth2.md': 'BuiltinProviderOptions',
  'custom-oauth2.md': 'CustomOAuth2ProviderOptions',
  'oidc.md': 'OidcPluginOptions',
  'apple.md': 'AppleProviderOptions',
  'dev.md': 'DevProviderOptions',
  'email.md': 'EmailProviderOptions',
  'telegram.md': 'TelegramProviderOptions',
  'passkeys.md': 'PasskeyProviderOptions',
  'totp.md': 'TotpProviderOptions'
}

const types = await exportedProperties('providers/index.ts', (name) => Object.values(PAGES).includes(name))

for (const [page, type] of Object.entries(PAGES)) {
  t.test(`docs/providers/${page}: one heading per option of ${type}`, async (t) => {
    const text = readFileSync(join(root, 'docs/providers', page), 'utf8')
    const options = /^## Options\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text)?.[1]
    if (options === undefined) { t.fail('a "## Options" section'); return }
    const entries = [...options.matchAll(/^### (\w+)\n([\s\S]*?)(?=^### |(?![\s\S]))/gm)]
    t.same(entries.map((e) => e[1]).sort(), types.get(type), 'the headings are exactly the type\'s properties')
    for (const [, key, body] of entries) {
      t.match(body, /^\nType: .+ · Default: .+\n\n.{4,}/, `${key}: type, default and what it does`)
      t.match(body, new RegExp(`^\`\`\`ts\\nawait app\\.register\\(\\w+Provider, \\{.*\\b${key}[:,\\s}]`, 'm'), `${key}: an example that sets it`)
    }
  })
}
