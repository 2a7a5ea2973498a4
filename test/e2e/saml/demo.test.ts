/**
 * The demo signs in through the SimpleSAMLphp it starts (when Debian's package is installed): in Chromium, the
 * page's SAML button, SimpleSAMLphp's login page, and back on the page signed in with the IdP's attributes; a
 * refused response back on the page with its reason.
 */
import t from 'tap'
import { startDemo } from '../../helpers/demo.js'
import { chromiumMissing, launch, waitText } from '../browser/browser.js'
import { simpleSamlSkip } from '../../helpers/simplesamlphp.js'

const skip = simpleSamlSkip() ?? chromiumMissing()
t.test('the demo page signs in through its SimpleSAMLphp', { skip: skip ?? false }, async (t) => {
  const { demo, stop } = await startDemo({ AUTH_SECRET: 'demo-saml-secret-0123456789abcdef' })
  t.teardown(stop)
  t.ok(demo.providers.includes('saml'))
  const b = await launch('saml-demo.test.ts')
  t.teardown(() => b.close())
  const { page } = b
  await page.goto(`${demo.url}/`)
  await page.waitForSelector('#method-saml:not([hidden])')
  await Promise.all([page.waitForSelector('input[name=username]'), page.click('#saml-sign-in')])
  await page.fill('input[name=username]', 'alice')
  await page.fill('input[name=password]', 'alice-saml')
  await Promise.all([page.waitForURL(`${demo.url}/`), page.click('button[type=submit], input[type=submit]')])
  t.match(await waitText(page, '#status', /signed in/), /Alice \(SAML\)/)
  await b.shot('demo-signed-in-with-saml')

  // A response the ACS refuses, posted by a page's form as the IdP's is (a navigation): back on the page with the
  // reason, as after a failed OAuth2 callback; a script gets the JSON.
  await Promise.all([page.waitForURL(/\/\?error=/), page.evaluate(() => {
    const doc = document as unknown as { createElement(tag: string): { method: string; action: string; innerHTML: string; submit(): void }; body: { append(el: unknown): void } }
    const form = doc.createElement('form')
    form.method = 'POST'
    form.action = '/auth/saml/acs'
    form.innerHTML = '<input name="SAMLResponse" value="bm90IGEgcmVzcG9uc2U=">'
    doc.body.append(form)
    form.submit()
  })])
  t.match(await waitText(page, '#message', /Sign-in did not complete/), /no login in progress/, 'the page shows why')
  const script = await fetch(`${demo.url}/auth/saml/acs`, { method: 'POST', body: new URLSearchParams({ SAMLResponse: 'bm90IGEgcmVzcG9uc2U=' }) })
  t.equal(script.status, 400)
  t.match(await script.json(), { code: 'GATEHOUSE_HANDSHAKE' }, 'a script without the login state: the JSON')
})
})
