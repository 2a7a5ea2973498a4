/**
 * Passkeys on the demo page in headless Chromium, with a CDP virtual authenticator (internal, resident keys, user
 * verification): alice adds a passkey, logs out and signs in with it alone (discoverable); admin adds one, and
 * his next password login waits for it (second factor) before the session is issued.
 */
import t from 'tap'
import type { CDPSession } from 'playwright-core'
import { chromiumMissing, isShown, launch, logOut, passwordSignIn as signInWithPassword, waitText, type TestBrowser } from './browser.js'
import { startDemo, type StartedDemo } from '../../helpers/demo.js'

interface VirtualCredential { credentialId: string; isResidentCredential: boolean; rpId: string; userHandle: string; signCount: number }

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('passkeys in Chromium', { skip: missing }, async () => {})
} else {
  const started: StartedDemo = await startDemo({ AUTH_SECRET: 'browser-passkey-secret-0123456789abcdef' })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await started.stop() })
  t.comment(`screenshots: ${browser.dir}`)
  const { page, shot } = browser
  const home = `${started.demo.url}/`

  const cdp: CDPSession = await browser.context.newCDPSession(page)
  await cdp.send('WebAuthn.enable', { enableUI: false })
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true }
  })
  const credentials = async (): Promise<VirtualCredential[]> =>
    ((await cdp.send('WebAuthn.getCredentials', { authenticatorId })) as { credentials: VirtualCredential[] }).credentials

  const passwordSignIn = async (user: string, passwd: string): Promise<void> => { await signInWithPassword(page, user, passwd) }
  const logout = async (): Promise<void> => { await logOut(page) }

  async function addPasskey (): Promise<void> {
    await page.click('#passkey-add')
    await waitText(page, '#message', /Passkey added/)
    await page.waitForSelector('#passkey-list li')
  }

  await page.goto(home)
  await waitText(page, '#status', /not signed in/)

  t.test('alice adds a passkey, logs out and signs in with it alone', async (t) => {
    t.ok(await isShown(page, '#passkey-sign-in'), '"Sign in with a passkey" is offered when signed out')
    await shot('signed-out-passkey-button')
    await passwordSignIn('alice', 'alice-secret')
    await waitText(page, '#status', /signed in as alice/)
    t.ok(await isShown(page, '#passkeys'), '"Add a passkey" is offered when signed in')
    await addPasskey()
    t.equal(await page.locator('#passkey-list li').count(), 1)
    const [stored] = await credentials()
    t.ok(stored?.isResidentCredential, 'a discoverable credential on the authenticator')
    t.equal(stored?.rpId, 'localhost')
    await shot('alice-passkey-added')

    await logout()
    t.equal((await browser.context.cookies()).some((c) => c.name === 'JWT'), false, 'the session is gone')
    const answer = page.waitForResponse((r) => r.url().endsWith('/auth/passkey/login') && r.request().method() === 'POST')
    await page.click('#passkey-signin')
    t.equal((await answer).status(), 200)
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as alice', 'signed in with the passkey, no name typed')
    t.match(await page.textContent('#user-extra'), /role: editor/, 'the same account as the password login')
    // The page sets the status first, then lists the passkeys with another request: until that answers, the list
    // drawn before the logout (no use yet) is still there.
    t.match(await waitText(page, '#passkey-list', /last used/), /last used \d{4}-\d\d-\d\d \d\d:\d\d/, 'the list shows the sign-in as the passkey\'s last use')
    await shot('alice-signed-in-with-passkey')
    await logout()
  })

  t.test('admin adds a passkey; his next password login waits for it', async (t) => {
    await passwordSignIn('admin', 'admin-secret')
    await waitText(page, '#status', /signed in as admin/)
    await addPasskey()
    t.equal((await credentials()).length, 2, 'alice\'s and admin\'s')
    await logout()

    const password = page.waitForResponse((r) => r.url().includes('/auth/local/login'))
    const passkey = page.waitForResponse((r) => r.url().endsWith('/auth/passkey/login') && r.request().method() === 'POST')
    await passwordSignIn('admin', 'admin-secret')
    const first = await password
    t.equal(first.status(), 401, 'the right password alone is not a session')
    t.match(await first.json(), { code: 'GATEHOUSE_SECOND_FACTOR' })
    t.notOk((await first.allHeaders())['set-cookie']?.includes('JWT='), 'no session cookie with it')
    t.equal((await passkey).status(), 200, 'the passkey completes the login')
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as admin')
    t.match(await page.textContent('#user-extra'), /admin/)
    await shot('admin-signed-in-with-second-factor')
    await logout()
  })

  t.test('without the passkey the second factor cannot be completed', async (t) => {
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false })
    await cdp.send('WebAuthn.clearCredentials', { authenticatorId })
    t.teardown(() => cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true }))
    await passwordSignIn('admin', 'admin-secret')
    t.match(await waitText(page, '#message', /Confirming with a passkey (did not complete|failed)/), /.+/)
    t.equal(await page.textContent('#status'), 'not signed in')
    t.equal((await browser.context.cookies()).some((c) => c.name === 'JWT'), false)
    await shot('admin-second-factor-without-passkey')
  })
}
