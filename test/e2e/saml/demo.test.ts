/**
 * The demo signs in through the SimpleSAMLphp it starts (when Debian's package is installed): in Chromium, the
 * page's SAML button, SimpleSAMLphp's login page, and back on the page signed in with the IdP's attributes.
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
})
