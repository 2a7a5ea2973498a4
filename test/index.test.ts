import t from 'tap'
import Fastify from 'fastify'
t.test('fastify answers', async (t) => {
  const app = Fastify()
  app.get('/', async () => ({ ok: true }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const addr = app.server.address() as { port: number }
  const r = await fetch(`http://127.0.0.1:${addr.port}/`)
  t.equal(r.status, 200)
  await app.close()
})
