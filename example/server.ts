/**
 * The demo (`npm start`): every part of fastify-gatehouse in one Fastify server.
 * `buildDemo(env, io)` starts it and returns the real URLs, so tests can run it on free ports (`PORT=0`,
 * `DEV_AUTH_PORT=0`, `CUSTOM_AUTH_PORT=0`); `runDemo` adds the one-line start-up errors; `main` the signals.
 */
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin, type AuthOptions } from '../index.js'
import { OAUTH2_BUILTIN_NAMES } from '../providers/index.js'
import { funcLogger } from '../compat.js'
import { DemoError, readConfig, type DemoEnv } from './config.js'
import { bindServer, boundPort, closeServer, findCode, portError } from './listen.js'
import { DEMO_CLIENTS } from './clients.js'
import { demoCaptcha } from './captcha.js'
import { addDemoProviders, addDemoRoles, checkLocalUser, type DemoServices, type ProviderContext } from './providers.js'
import { registerApi, registerLoginFailureRedirect, registerPage } from './routes.js'
import { answersCheck, registerMonitoring, registerToolkit } from './toolkit.js'

export type { DemoEnv } from './config.js'

/** Where the demo writes: `out` for information (requests, emails), `err` for warnings and errors. */
export interface DemoIO { out: (line: string) => void; err: (line: string) => void }

export const consoleIO: DemoIO = { out: (line) => console.log(line), err: (line) => console.error(line) }

export interface Demo {
  app: FastifyInstance
  /** Public URL of the page (`AUTH_URL`, or `http://localhost:<port>`). */
  url: string
  /** The port the demo listens on (on 127.0.0.1). */
  port: number
  /** Base URL of the dev provider's fake OAuth2 server. */
  devUrl: string
  /** Base URL of the local OAuth2 server behind `custom`. */
  customUrl: string
  /** Names of the enabled providers, in registration order. */
  providers: string[]
  warnings: string[]
  /** Stops everything the demo started. Safe to call twice. */
  close(): Promise<void>
}

/** Builds and starts the demo; rejects (after stopping whatever had started) when it cannot. */
export async function buildDemo (env: DemoEnv = process.env, io: DemoIO = consoleIO): Promise<Demo> {
  const cfg = readConfig(env, OAUTH2_BUILTIN_NAMES)
  const warn = (line: string): void => { cfg.warnings.push(line) }
  // Bound first, so the public URL of a demo on port 0 is known before any plugin needs it.
  const server = await bindServer(cfg.port, 'PORT')
  const port = boundPort(server)
  const url = cfg.url ?? `http://localhost:${port}`
  let ready = false
  const app = Fastify({
    logger: false,
    serverFactory: (handler) => server.on('request', (req, res) => {
      if (ready) return handler(req, res)
      res.writeHead(503, { 'content-type': 'text/plain' }).end('starting')
    })
  })
  const stops: Array<() => Promise<void>> = []
  const close = once(async () => {
    await app.close().catch((err: unknown) => io.err(`demo: closing: ${(err as Error).message}`))
    for (const stop of stops) await stop()
    await closeServer(server)
  })
  let services: DemoServices
  try {
    services = await assemble(app, cfg, { url, port }, io, { warn, onStop: (stop) => { stops.push(stop) } })
    try {
      await app.ready()
    } catch (err) {
      // The dev provider starts its fake server when the app becomes ready.
      throw findCode(err) === 'EADDRINUSE' ? portError(err, cfg.devPort, 'DEV_AUTH_PORT') : err
    }
  } catch (err) {
    await close()
    throw err
  }
  ready = true
  return {
    app,
    url,
    port,
    devUrl: services.dev.server!.url,
    customUrl: services.customUrl,
    providers: app.auth.providers(),
    warnings: cfg.warnings,
    close
  }
}

type Lifecycle = Pick<ProviderContext, 'warn' | 'onStop'>

async function assemble (app: FastifyInstance, cfg: ReturnType<typeof readConfig>, { url, port }: { url: string; port: number }, io: DemoIO, life: Lifecycle): Promise<DemoServices> {
  const logger = funcLogger((line) => io.out(`auth: ${line}`))
  // Before the toolkit: its gzip must see the failure answers after they became redirects.
  registerLoginFailureRedirect(app, '/auth')
  await registerToolkit(app, io.out)
  // The password login asks for a captcha: a Turnstile stand-in the demo serves itself (example/captcha.ts).
  const captcha = demoCaptcha(port, url)
  await captcha.register(app)
  const opts: AuthOptions = {
    secret: () => cfg.secret,
    url,
    logger,
    // The demo's own OAuth2 servers are on loopback, so their pictures are fetched from there (and only there).
    avatar: { store: cfg.avatarStore, fetch: { allowPrivate: ['127.0.0.0/8', '::1'] } },
    providers: [{ kind: 'direct', name: 'local', checker: checkLocalUser }],
    claimsUpdater: addDemoRoles,
    // Shared by every provider (one-time tokens, passkey challenges), revocation and throttling.
    stateStore: cfg.stateStore,
    // "Trust this device" on the authenticator-code step: this browser then skips the code for 30 days.
    factors: { trustedDevices: true },
    // A CLI and a phone app sign in through this page: a browser without a session is sent here with `?from=`.
    clients: DEMO_CLIENTS,
    login: { page: '/', captcha: captcha.verifier }
  }
  if (cfg.adminPasswd !== undefined) opts.basicAuth = { adminPasswd: cfg.adminPasswd }
  await app.register(authPlugin, opts)
  const services = await addDemoProviders(app, { cfg, url, logger, out: io.out, ...life })
  await registerMonitoring(app, [
    answersCheck('dev-oauth2-server', () => services.dev.server?.url),
    answersCheck('local-oauth2-server', () => services.customUrl)
  ])
  registerApi(app)
  registerPage(app)
  return services
}

function once (fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined
  return () => (done ??= fn())
}

/** Starts the demo and prints where to open it; a start-up failure is one line on `io.err` and no demo. */
export async function runDemo (env: DemoEnv = process.env, io: DemoIO = consoleIO): Promise<Demo | undefined> {
  let demo: Demo
  try {
    demo = await buildDemo(env, io)
  } catch (err) {
    const known = err instanceof DemoError || (err as Error)?.name === 'OptionsError'
    const text = known ? (err as Error).message : `cannot start: ${(err as Error)?.message ?? String(err)}`
    io.err(`demo: ${text.replace(/\s*\n\s*/g, ' ')}`)
    return undefined
  }
  for (const w of demo.warnings) io.err(`demo: warning: ${w}`)
  io.out(`demo: open ${demo.url}/`)
  io.out(`demo: providers on: ${demo.providers.join(', ')}`)
  io.out(`demo: dev OAuth2 server ${demo.devUrl}, local OAuth2 server (custom) ${demo.customUrl}`)
  io.out('demo: users alice/alice-secret (editor), admin/admin-secret (admin); Ctrl-C stops everything')
  return demo
}

async function main (): Promise<void> {
  const demo = await runDemo()
  if (demo === undefined) process.exit(1)
  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) process.exit(1) // a second Ctrl-C does not wait
    stopping = true
    console.log(`demo: ${signal}, stopping`)
    demo.close().then(() => process.exit(0), (err: unknown) => { console.error(`demo: ${(err as Error).message}`); process.exit(1) })
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main()
