/**
 * SAML against a real SimpleSAMLphp (Debian's, on loopback; one IdP for the file): SP-initiated sign-in in
 * Chromium through SimpleSAMLphp's own login page with the attributes mapped, single logout, an encrypted
 * assertion, and real responses tampered with or sent where they do not belong, each refused with its reason.
 */
import t from 'tap'
import Fastify from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { authPlugin } from '../../../auth.js'
import { samlProvider, totpProvider } from '../../../index.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { freePort } from '../../helpers/redis-server.js'
import { client, type Client } from '../../helpers/client.js'
import { authnRequestOf } from '../../helpers/saml-idp.js'
import { chromiumMissing, launch } from '../browser/browser.js'
import { idpSignIn, pageText, simpleSaml, simpleSamlSkip, USERS } from '../../helpers/simplesamlphp.js'
import { keyPair } from '../../helpers/saml-idp.js'
import { enrol, KEY } from '../../helpers/totp-app.js'

const skip = simpleSamlSkip()
if (skip !== undefined) {
  t.skip(`SimpleSAMLphp: ${skip}`)
} else {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const sp = (name: string): { entityId: string; acsUrl: string; sloUrl: string } => ({ entityId: `${url}/auth/${name}/metadata`, acsUrl: `${url}/auth/${name}/acs`, sloUrl: `${url}/auth/${name}/slo` })
  const spKeys = keyPair('sp.127.0.0.1')
  const idp = await simpleSaml(t, {
    users: USERS,
    sps: [
      sp('corp'),
      { ...sp('enc'), cert: spKeys.cert, encryptAssertion: true },
      { ...sp('nokey'), cert: spKeys.cert, encryptAssertion: true },
      { ...sp('legacy'), signatureAlgorithm: 'sha1' },
      sp('other'),
      sp('mfa')
    ]
  })
  t.comment(`SimpleSAMLphp accepted connections ${idp.startMs.toFixed(0)} ms after its start (key pair made with openssl included)`)
  const events: AuditEvent[] = []
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'saml-e2e-secret-0123456789abcdef-0123', url, onEvent: (e) => { events.push(e) }, login: { rateLimit: { failures: { perAccount: 1000, perIp: 1000 } }, page: '/sign-in' } })
  const metadata = { metadataUrl: idp.metadataUrl }
  await app.register(samlProvider, { name: 'corp', idp: metadata, loginTtl: '1h' })
  await app.register(samlProvider, { name: 'enc', idp: metadata, privateKey: spKeys.key, cert: spKeys.cert })
  await app.register(samlProvider, { name: 'nokey', idp: metadata })
  await app.register(samlProvider, { name: 'legacy', idp: metadata })
  await app.register(samlProvider, { name: 'other', idp: metadata })
  await app.register(samlProvider, { name: 'mfa', idp: metadata })
  await app.register(totpProvider, { encryptionKey: KEY, secondFactor: ['mfa'] })
  app.get('/', async () => 'home')
  // The app's sign-in page (login.page): here it only says which second factor it would ask for.
  app.get('/sign-in', async (request, reply) => await reply.type('text/html').send(`<p id="factor">${String((request.query as { second_factor?: string }).second_factor ?? '')}</p>`))
  app.get('/whoami', { preHandler: app.auth.optionalUser }, async (request) => ({ user: request.user }))
  await app.listen({ port, host: '127.0.0.1' })
  t.teardown(() => app.close())

  const lastFailure = (): string | undefined => events.filter((e) => e.type === 'login.failed').at(-1)?.reason

  /** A login started by `c` at provider `name`, walked through SimpleSAMLphp without a browser. */
  async function realResponse (c: Client, name = 'corp', user = 'alice'): Promise<{ xml: string; rid: string }> {
    const r = await c.fetch(`/auth/${name}/login`)
    const location = r.headers.get('location')!
    const { samlResponse, action } = await idpSignIn(location, user, USERS[user as 'alice'].password)
    t.equal(action, `${url}/auth/${name}/acs`, 'SimpleSAMLphp posts to the ACS')
    return { xml: Buffer.from(samlResponse, 'base64').toString('utf8'), rid: authnRequestOf(location).id }
  }
  const post = async (c: Client, xml: string, name = 'corp'): Promise<Response> =>
    await c.fetch(`/auth/${name}/acs`, { method: 'POST', form: { SAMLResponse: Buffer.from(xml).toString('base64') } })

  t.test('Chromium signs in through SimpleSAMLphp\'s login page; attributes mapped; single logout ends both sessions', { skip: chromiumMissing() }, async (t) => {
    const b = await launch('saml-sign-in.test.ts')
    t.teardown(() => b.close())
    const { page } = b
    await page.goto(`${url}/auth/corp/login?from=${encodeURIComponent('/whoami')}`)
    await page.waitForSelector('input[name=username]')
    t.match(page.url(), `${idp.base}/module.php/core/loginuserpass.php`, 'SimpleSAMLphp\'s own login page')
    await page.fill('input[name=username]', 'alice')
    await page.fill('input[name=password]', 'alice-pass')
    await Promise.all([page.waitForURL(`${url}/whoami`), page.click('button[type=submit], input[type=submit]')])
    // The page's script asks for the user with the XSRF header, as an app's page does.
    const user = await page.evaluate(async () => {
      const xsrf = (document as unknown as { cookie: string }).cookie.split('; ').find((c) => c.startsWith('XSRF-TOKEN='))?.slice(11) ?? ''
      return await (await fetch('/auth/user', { headers: { 'X-XSRF-TOKEN': xsrf } })).json()
    })
    t.match(user, { name: 'Alice Liddell', email: 'alice@acme.test', attrs: { groups: ['admins', 'staff'], saml: { nameId: 'alice', nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' } } })
    t.match(user.id, /^corp_[0-9a-f]{40}$/)
    await b.shot('signed-in')

    // Single logout: the page asks the app (with its XSRF header) and follows to the IdP, which answers back.
    const { location } = await page.evaluate(async () => {
      const xsrf = (document as unknown as { cookie: string }).cookie.split('; ').find((c) => c.startsWith('XSRF-TOKEN='))?.slice(11) ?? ''
      return await (await fetch('/auth/corp/logout', { headers: { 'X-XSRF-TOKEN': xsrf } })).json()
    })
    t.match(location, `${idp.base}/saml2/idp/SingleLogoutService.php?SAMLRequest=`)
    await Promise.all([page.waitForURL(`${url}/`), page.goto(location)])
    t.equal(await page.textContent('body'), 'home', 'back at the app\'s root after the IdP\'s LogoutResponse')
    const status = await page.evaluate(async () => (await fetch('/auth/user')).status)
    t.equal(status, 401, 'signed out here')
    await page.goto(`${url}/auth/corp/login`)
    await page.waitForSelector('input[name=username]')
    t.pass('signed out at the IdP too: its login page again')
  })

  t.test('Chromium with a second factor after SAML: from the IdP\'s page to the sign-in page, which completes the login with the factor', { skip: chromiumMissing() }, async (t) => {
    // alice enrols an authenticator app after a first SAML sign-in (no app yet: signed in at once).
    const c = client(url)
    const first = await realResponse(c, 'mfa')
    t.equal((await post(c, first.xml, 'mfa')).status, 200)
    const { recoveryCodes } = await enrol(c)
    const b = await launch('saml-second-factor.test.ts')
    t.teardown(() => b.close())
    const { page } = b
    await page.goto(`${url}/auth/mfa/login?from=${encodeURIComponent('/whoami')}`)
    await page.waitForSelector('input[name=username]')
    await page.fill('input[name=username]', 'alice')
    await page.fill('input[name=password]', 'alice-pass')
    await Promise.all([page.waitForURL(`${url}/sign-in?second_factor=totp`), page.click('button[type=submit], input[type=submit]')])
    t.equal(await page.textContent('#factor'), 'totp', 'the IdP\'s form post ends on the app\'s sign-in page, which asks for the code')
    t.equal(await page.evaluate(async () => (await fetch('/auth/user')).status), 401, 'no session yet')
    t.ok(events.some((e) => e.type === 'login.second_factor_required' && e.provider === 'mfa'))
    // The page posts the factor (a recovery code here: a code of the enrolment's step would be refused as used).
    const done = await page.evaluate(async (recoveryCode) => {
      const r = await fetch('/auth/totp/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ recoveryCode }) })
      return { status: r.status, url: r.url }
    }, recoveryCodes[0]!)
    t.same(done, { status: 200, url: `${url}/whoami` }, 'the pending login set at the cross-site ACS completes, to the from of the SAML login')
    const user = await page.evaluate(async () => {
      const xsrf = (document as unknown as { cookie: string }).cookie.split('; ').find((c) => c.startsWith('XSRF-TOKEN='))?.slice(11) ?? ''
      return await (await fetch('/auth/user', { headers: { 'X-XSRF-TOKEN': xsrf } })).json()
    })
    t.match(user, { name: 'Alice Liddell' }, 'signed in')
  })

  t.test('an encrypted assertion is taken with the SP key, refused without one', async (t) => {
    const c = client(url)
    const { xml } = await realResponse(c, 'enc')
    t.match(xml, 'EncryptedAssertion')
    const r = await post(c, xml, 'enc')
    t.equal(r.status, 200)
    t.match(await r.json(), { name: 'Alice Liddell' })
    const d = client(url)
    const enc = await realResponse(d, 'nokey')
    t.equal((await post(d, enc.xml, 'nokey')).status, 403)
    t.equal(lastFailure(), 'saml_encrypted')
  })

  t.test('SimpleSAMLphp signing with SHA-1 is refused', async (t) => {
    const c = client(url)
    const { xml } = await realResponse(c, 'legacy')
    t.match(xml, 'xmldsig#rsa-sha1')
    t.equal((await post(c, xml, 'legacy')).status, 403)
    t.equal(lastFailure(), 'saml_sha1')
  })

  t.test('real responses tampered with are refused, each for its own reason', async (t) => {
    const cases: Array<[string, (xml: string) => string, string]> = [
      ['the NameID changed', (x) => x.replace('>alice</saml:NameID>', '>admin</saml:NameID>'), 'saml_signature'],
      ['the signatures removed', (x) => x.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, ''), 'saml_signature'],
      ['a comment in the NameID', (x) => x.replace('>alice</saml:NameID>', '>ali<!---->ce</saml:NameID>'), 'saml_comment'],
      ['a DTD', (x) => `<!DOCTYPE r [<!ENTITY e "x">]>${x}`, 'saml_dtd'],
      ['the signed assertion twice', (x) => { const a = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(x)![0]; return x.replace(a, a + a) }, 'saml_duplicate_assertion'],
      ['the Destination changed', (x) => x.replace(/Destination="[^"]+"/, 'Destination="https://evil.test/acs"'), 'saml_destination'],
      ['not XML', (x) => x.slice(0, 200), 'saml_malformed']
    ]
    for (const [what, tamper, reason] of cases) {
      const c = client(url)
      const { xml } = await realResponse(c)
      const r = await post(c, tamper(xml))
      t.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status}`)
      t.equal(lastFailure(), reason, what)
      t.notOk(c.jar.get('JWT'), `${what}: nobody signed in`)
    }
  })

  t.test('real responses where they do not belong: replayed, another login, another SP, expired', async (t) => {
    let c = client(url)
    let { xml } = await realResponse(c)
    const cookie = c.jar.header()
    t.equal((await post(c, xml)).status, 200, 'the real response signs in')
    const again = client(url)
    const r = await again.fetch('/auth/corp/acs', { method: 'POST', headers: { cookie }, form: { SAMLResponse: Buffer.from(xml).toString('base64') } })
    t.equal(r.status, 403, 'replayed with the login state it came with')
    t.equal(lastFailure(), 'saml_replay')

    c = client(url)
    const first = await realResponse(c)
    const d = client(url)
    await d.fetch('/auth/corp/login')
    t.equal((await post(d, first.xml)).status, 403, 'answering another browser\'s login')
    t.equal(lastFailure(), 'saml_in_response_to')

    // The AuthnRequest of corp's login, sent to the IdP as the other SP's: the answer names corp's request but
    // is addressed to the other SP (its Audience, Destination and Recipient).
    c = client(url)
    const started = await c.fetch('/auth/corp/login')
    const location = new URL(started.headers.get('location')!)
    const request = inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest')!, 'base64')).toString()
      .replace(`${url}/auth/corp/metadata`, `${url}/auth/other/metadata`).replace(/ AssertionConsumerServiceURL="[^"]+"/, '')
    location.searchParams.set('SAMLRequest', deflateRawSync(Buffer.from(request)).toString('base64'))
    const forOther = await idpSignIn(location.href, 'alice', 'alice-pass')
    t.equal(forOther.action, `${url}/auth/other/acs`)
    t.equal((await c.fetch('/auth/corp/acs', { method: 'POST', form: { SAMLResponse: forOther.samlResponse } })).status, 403, 'a response for another SP')
    t.equal(lastFailure(), 'saml_audience')

    c = client(url);
    ({ xml } = await realResponse(c))
    // SimpleSAMLphp's assertions live 5 minutes; the login state here an hour (loginTtl).
    const clock = FakeTimers.install({ now: Date.now() + 10 * 60_000, toFake: ['Date'] })
    try {
      t.equal((await post(c, xml)).status, 403, 'expired')
    } finally {
      clock.uninstall()
    }
    t.equal(lastFailure(), 'saml_expired')
  })

  t.test('SimpleSAMLphp answers a request it refuses with an error page and status 200: the page says why', async (t) => {
    const r = await fetch(`${idp.base}/saml2/idp/SSOService.php?spentityid=${encodeURIComponent('https://unknown-sp.test')}`)
    t.equal(r.status, 200)
    t.match(pageText(await r.text()), /metadata|unknown|not found/i)
  })
}
