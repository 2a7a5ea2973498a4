import t from 'tap'

// `fastify-gatehouse/toolkit` is the toolkit's one public entry; the root entry does not re-export it.
t.test('toolkit.ts exports the whole toolkit and its error family; the root entry does not', async (t) => {
  const toolkit = await import('../toolkit.js')
  const internal = await import('../plugins/toolkit/index.js')
  const errors = await import('../lib/errors.js')
  for (const name of Object.keys(internal)) t.equal((toolkit as Record<string, unknown>)[name], (internal as Record<string, unknown>)[name], name)
  for (const name of ['ErrorCodes', 'GatehouseError', 'HttpError', 'OptionsError', 'sendError'] as const) t.equal(toolkit[name], errors[name], name)
  // The printf loggers moved to fastify-gatehouse/compat; until 1.0 the toolkit keeps them, deprecated (they warn once).
  const logger = await import('../lib/logging/deprecated-loggers.js')
  for (const name of ['funcLogger', 'noopLogger', 'pinoLogger', 'stdLogger'] as const) t.equal(toolkit[name], logger[name], name)
  const plugins = [
    'appInfoPlugin', 'pingPlugin', 'healthPlugin', 'requestLoggerPlugin', 'recovererPlugin', 'onlyFromPlugin', 'metricsPlugin',
    'profilerPlugin', 'blackWordsPlugin', 'sizeLimitPlugin', 'requestIdPlugin', 'deprecationPlugin', 'rewritePlugin', 'noCachePlugin',
    'headersPlugin', 'gzipPlugin', 'realIpPlugin', 'maybePlugin', 'rejectPlugin', 'benchmarksPlugin', 'basicAuthPlugin', 'fileServerPlugin'
  ]
  for (const name of plugins) t.type((toolkit as Record<string, unknown>)[name], 'function', name)

  const root = await import('../index.js') as Record<string, unknown>
  for (const name of [...plugins, 'maybe', 'wrap', 'basicAuth', 'bcryptHash', 'sanitizeUrl']) t.notOk(name in root, `root does not export ${name}`)
})
