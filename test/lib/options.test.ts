/**
 * Unknown option names (issue 37 item 8): every options check (the root, its groups, each plugin, the provider
 * kinds) names the near match it was probably meant to be, and suggests nothing when no name is that close.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../auth.js'
import { directProvider } from '../../providers/direct.js'
import { totpProvider } from '../../providers/totp/provider.js'
import { nearestName } from '../../lib/options.js'

const SECRET = () => 'options-test-secret-0123456789abcdef-0123'

/** The OptionsError message an app's registration fails with. */
async function refusal (register: (app: ReturnType<typeof Fastify>) => unknown): Promise<{ option?: string; message: string }> {
  const app = Fastify()
  try {
    await register(app)
    await app.ready()
    throw new Error('registration succeeded')
  } catch (err) {
    return err as { option?: string; message: string }
  } finally {
    await app.close()
  }
}

const root = (opts: Record<string, unknown>) => (app: ReturnType<typeof Fastify>) => app.register(authPlugin, { secret: SECRET, url: 'http://localhost:8080', ...opts } as never)

t.test('a misspelt option names the option it was probably meant to be', async (t) => {
  const cases: Array<[string, (app: ReturnType<typeof Fastify>) => unknown, string, string]> = [
    ['a plural', root({ secrets: 'x' }), 'secrets', 'secret'],
    ['another case', root({ URL: 'http://localhost' }), 'URL', 'url'],
    ['a group key one letter off', root({ session: { tokenDuraton: '5m' } }), 'session.tokenDuraton', 'tokenDuration'],
    ['the avatar group', root({ avatar: { stor: 'memory://' } }), 'avatar.stor', 'store'],
    ['a cut-off name of a provider plugin', async (app) => { await root({})(app); await app.register(directProvider, { check: () => true } as never) }, 'direct.check', 'checker'],
    ['a provider plugin key in another case', async (app) => { await root({})(app); await app.register(totpProvider, { encryptionkey: 'x' } as never) }, 'totp.encryptionkey', 'encryptionKey']
  ]
  for (const [what, register, option, meant] of cases) {
    const err = await refusal(register)
    t.equal(err.option, option, `${what}: the option named`)
    t.equal(err.message, `fastify-gatehouse: option "${option}" is not a known option; did you mean "${meant}"?`, what)
  }
})

t.test('a misspelt provider kind names the kind', async (t) => {
  const err = await refusal(root({ providers: [{ kind: 'direkt', name: 'local', checker: () => true }] }))
  t.match(err.message, /has an entry of unknown kind "direkt" \(direct, oauth2, .*handler\); did you mean "direct"\?$/)
  t.match((await refusal(root({ providers: [{ kind: 'oauth', name: 'github' }] }))).message, /did you mean "oauth2"\?$/)
})

t.test('a name nothing is close to gets no suggestion', async (t) => {
  t.equal((await refusal(root({ foo: 1 }))).message, 'fastify-gatehouse: option "foo" is not a known option')
  t.equal((await refusal(root({ avatar: { colour: 'red' } }))).message, 'fastify-gatehouse: option "avatar.colour" is not a known option', 'in a group too')
  t.match((await refusal(root({ providers: [{ kind: 'ldap' }] }))).message, /unknown kind "ldap" \([^)]*\)$/)
})

t.test('nearestName: case, prefix, then one edit for short names and two for longer ones', async (t) => {
  t.equal(nearestName('Secret', ['secret', 'session']), 'secret')
  t.equal(nearestName('check', ['checker', 'name']), 'checker')
  t.equal(nearestName('checkers', ['checker']), 'checker', 'a longer name that starts with a known one')
  t.equal(nearestName('nme', ['name']), 'name', 'one edit on a short name')
  t.equal(nearestName('nm', ['name']), undefined, 'two edits on a short name are a guess')
  t.equal(nearestName('tokenDurtion', ['tokenDuration', 'maxAge']), 'tokenDuration')
  t.equal(nearestName('cokies', ['cookies', 'xsrf']), 'cookies')
  t.equal(nearestName('cks', ['cookies']), undefined)
  t.equal(nearestName('abc', ['abcdef']), undefined, 'a prefix needs four letters in common')
  t.equal(nearestName('sesion', ['session', 'secret']), 'session', 'the closest of several')
})
