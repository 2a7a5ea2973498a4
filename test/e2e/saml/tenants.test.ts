/**
 * Two tenants, each with its own SimpleSAMLphp (two instances, each with its own signing key), behind one SAML
 * provider whose IdP is a function of the tenant: each tenant signs in at its own IdP through metadata fetched from
 * it, and a response of one tenant's IdP is refused for a login of the other.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { samlProvider } from '../../../index.js'
import type { SamlIdp } from '../../../providers/saml/options.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { freePort } from '../../helpers/redis-server.js'
import { client } from '../../helpers/client.js'
import { idpSignIn, simpleSaml, simpleSamlSkip, USERS } from '../../helpers/simplesamlphp.js'

const skip = simpleSamlSkip()
if (skip !== undefined) {
  t.skip(`SimpleSAMLphp: ${skip}`)
} else {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const sp = { entityId: `${url}/auth/sso/metadata`, acsUrl: `${url}/auth/sso/acs`, sloUrl: `${url}/auth/sso/slo` }
  const [acme, globex] = await Promise.all([simpleSaml(t, { users: USERS, sps: [sp] }), simpleSaml(t, { users: USERS, sps: [sp] })])
  t.comment(`two SimpleSAMLphp instances started in ${acme!.startMs.toFixed(0)} and ${globex!.startMs.toFixed(0)} ms`)
  const records: Record<string, SamlIdp> = { acme: { metadataUrl: acme!.metadataUrl }, globex: { metadataUrl: globex!.metadataUrl } }
  const events: AuditEvent[] = []
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'saml-e2e-secret-0123456789abcdef-0123', url, onEvent: (e) => { events.push(e) } })
  await app.register(samlProvider, { name: 'sso', idp: (tenant) => records[tenant] })
  await app.listen({ port, host: '127.0.0.1' })
  t.teardown(() => app.close())

  async function signIn (tenant: string): Promise<{ status: number; body: Record<string, unknown>; samlResponse: string; cookie: string }> {
    const c = client(url)
    const r = await c.fetch(`/auth/sso/login?tenant=${tenant}`)
    t.equal(r.status, 302)
    const { samlResponse } = await idpSignIn(r.headers.get('location')!, 'alice', 'alice-pass')
    const cookie = c.jar.header()
    const ans = await c.fetch('/auth/sso/acs', { method: 'POST', form: { SAMLResponse: samlResponse } })
    return { status: ans.status, body: await ans.json() as Record<string, unknown>, samlResponse, cookie }
  }

  t.test('each tenant signs in at its own IdP', async (t) => {
    const a = await signIn('acme')
    const g = await signIn('globex')
    t.equal(a.status, 200)
    t.equal(g.status, 200)
    t.match(a.body, { name: 'Alice Liddell', attrs: { saml: { tenant: 'acme' } } })
    t.match(g.body, { name: 'Alice Liddell', attrs: { saml: { tenant: 'globex' } } })
    t.not(a.body.id, g.body.id, 'alice at acme and alice at globex are two users')
    t.match(Buffer.from(a.samlResponse, 'base64').toString(), acme!.entityId)
  })

  t.test('a response of acme\'s IdP is refused for a login of globex', async (t) => {
    const c = client(url)
    await c.fetch('/auth/sso/login?tenant=globex')
    const fromAcme = client(url)
    const r = await fromAcme.fetch('/auth/sso/login?tenant=acme')
    const { samlResponse } = await idpSignIn(r.headers.get('location')!, 'alice', 'alice-pass')
    const ans = await c.fetch('/auth/sso/acs', { method: 'POST', form: { SAMLResponse: samlResponse } })
    t.equal(ans.status, 403)
    t.ok(c.jar.get('JWT') === undefined, 'nobody signed in')
    t.match(events.filter((e) => e.type === 'login.failed').at(-1), { provider: 'sso', reason: /^saml_/ })
  })

  t.test('an unknown tenant is a 404 before any IdP is asked', async (t) => {
    const r = await client(url).fetch('/auth/sso/login?tenant=initech')
    t.equal(r.status, 404)
    t.equal(events.filter((e) => e.type === 'login.failed').at(-1)?.reason, 'saml_unknown_tenant')
  })
}
