/**
 * SAML's one-time values on a real Redis shared by two instances behind one URL: an assertion used on one
 * instance is refused on the other, whether it comes back with its login state or unsolicited (IdP-initiated).
 */
import t from 'tap'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { b64, signedResponse } from '../../helpers/saml-idp.js'
import { lastFailure, samlApp, samlKeys } from '../../providers/saml/saml-app.js'

const missing = redisMissingReason()
if (missing !== undefined) console.log(`# skipping SAML Redis tests: ${missing}`)

t.test('two instances sharing Redis', { skip: missing ?? false }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const keys = samlKeys()
  const [a, b] = await Promise.all([0, 1].map(async () => await samlApp({ allowIdpInitiated: true }, { stateStore: redis.url })))
  t.teardown(() => a!.app.close())
  t.teardown(() => b!.app.close())

  t.test('a response used on one instance is refused on the other', async (t) => {
    const c = a!.client()
    const { fields } = await a!.start(c)
    const xml = signedResponse(fields, keys.idp.key)
    const cookie = c.jar.header()
    t.equal((await a!.post(c, xml)).status, 200)
    const r = await b!.client().fetch('/auth/saml/acs', { method: 'POST', headers: { cookie }, form: { SAMLResponse: b64(xml) } })
    t.equal(r.status, 403)
    t.equal((await r.json()).code, 'GATEHOUSE_ALREADY_USED')
    t.equal(lastFailure(b!.events), 'saml_replay')
  })

  t.test('an unsolicited response, bound to no login state, is one-time across instances by its assertion ID', async (t) => {
    const xml = signedResponse({ acs: a!.acs, audience: a!.entityId }, keys.idp.key)
    t.equal((await b!.post(b!.client(), xml)).status, 200)
    t.equal((await a!.post(a!.client(), xml)).status, 403)
    t.equal(lastFailure(a!.events), 'saml_replay')
  })
})
