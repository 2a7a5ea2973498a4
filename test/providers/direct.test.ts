/** The direct provider may not take a built-in provider's name (issue 23 item 15). */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../auth.js'
import { directProvider } from '../../providers/index.js'

const options = { secret: () => 'direct-test-secret-0123456789-0123456789', url: 'http://127.0.0.1' }

for (const name of ['github', 'google', 'apple', 'telegram', 'dev']) {
  t.test(`a direct provider named ${name} is refused`, async (t) => {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(authPlugin, options)
    app.register(directProvider, { name, checker: () => true })
    await t.rejects(app.ready(), { name: 'OptionsError', option: 'direct.name', message: new RegExp(`"${name}" is a built-in provider name; choose another`) })
  })
}

t.test('through the root options and addDirectProvider too; another name is taken', async (t) => {
  const entry = Fastify()
  t.teardown(() => entry.close())
  entry.register(authPlugin, { ...options, providers: [{ kind: 'direct', name: 'github', checker: () => true }] })
  await t.rejects(entry.ready(), { option: 'direct.name' })
  const seed = Fastify()
  t.teardown(() => seed.close())
  await seed.register(authPlugin, options)
  seed.auth.addDirectProvider('twitter', () => true)
  await t.rejects(seed.ready(), { option: 'direct.name' })
  const fine = Fastify()
  t.teardown(() => fine.close())
  await fine.register(authPlugin, { ...options, providers: [{ kind: 'direct', name: 'github-staff', checker: () => true }] })
  await fine.ready()
  t.same(fine.auth.providers(), ['github-staff'])
})
