/**
 * A SimpleSAMLphp identity provider on loopback, for the demo and the SAML tests: Debian's package
 * (`apt-get install -y --no-install-recommends simplesamlphp php8.2-cli php8.2-cgi lighttpd php-xml php-mbstring
 * xmlsec1`), configured in a temp folder through `SIMPLESAMLPHP_CONFIG_DIR` (its own signing certificate made with
 * openssl, `exampleauth:UserPass` users, the service providers' metadata), served by lighttpd + php-cgi. Nothing
 * under /etc is read or written; `stop()` ends lighttpd and its php-cgi (one process group) and removes the folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Where Debian's package puts SimpleSAMLphp's web root (`SIMPLESAMLPHP_WWW` points elsewhere, or at nothing to try the skip). */
export function simpleSamlWww (): string {
  return process.env.SIMPLESAMLPHP_WWW ?? '/usr/share/simplesamlphp/www'
}
/** The Debian packages the IdP needs (lighttpd named so that apt does not pull Apache in). */
export const SIMPLESAMLPHP_PACKAGES = 'simplesamlphp php8.2-cli php8.2-cgi lighttpd php-xml php-mbstring xmlsec1'

/** Why no SimpleSAMLphp can be started here, or undefined when one can. */
export function simpleSamlMissing (): string | undefined {
  if (!existsSync(simpleSamlWww())) return `SimpleSAMLphp is not installed (apt-get install -y --no-install-recommends ${SIMPLESAMLPHP_PACKAGES})`
  for (const bin of ['lighttpd', 'php-cgi', 'openssl']) {
    const r = spawnSync(bin, ['-v'], { stdio: 'ignore' })
    if (r.error !== undefined) return `${bin} is not installed (apt-get install -y --no-install-recommends ${SIMPLESAMLPHP_PACKAGES})`
  }
  return undefined
}

/** A user of the IdP's login page: password and SAML attributes (each a list of values). */
export interface SimpleSamlUser { password: string; attributes: Record<string, string[]> }

/** A service provider the IdP knows (its `saml20-sp-remote` entry). */
export interface SimpleSamlSp {
  entityId: string
  acsUrl: string
  /** Single logout endpoint (HTTP-Redirect). */
  sloUrl?: string | undefined
  /** The SP's certificate (PEM): with `encryptAssertion`, assertions are encrypted to it; it also verifies signed requests. */
  cert?: string | undefined
  encryptAssertion?: boolean | undefined
  /** Signs the Response (default true) and the Assertion (default true). */
  signResponse?: boolean | undefined
  signAssertion?: boolean | undefined
  /** `sha256` (default) or `sha1` (an old IdP). */
  signatureAlgorithm?: 'sha1' | 'sha256' | undefined
}

export interface SimpleSamlOptions {
  users: Record<string, SimpleSamlUser>
  sps: SimpleSamlSp[]
  /** Loopback port; any free one when absent. */
  port?: number | undefined
}

export interface RunningSimpleSaml {
  /** `http://127.0.0.1:<port>/simplesaml`. */
  base: string
  /** The IdP's entity id (also where its metadata is served). */
  entityId: string
  metadataUrl: string
  /** The IdP's signing certificate and key (PEM): tests sign forged responses with another key, never this one. */
  cert: string
  key: string
  /** Replaces the service providers the IdP knows (read per request: no restart). */
  setSps(sps: SimpleSamlSp[]): void
  stop(): Promise<void>
}

const ALGORITHMS = { sha1: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1', sha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256' }

/** A PHP string literal. */
function php (value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

function phpList (values: string[]): string {
  return `[${values.map(php).join(', ')}]`
}

/** Starts the IdP and resolves once it accepts connections. */
export async function startSimpleSaml (opts: SimpleSamlOptions): Promise<RunningSimpleSaml> {
  const missing = simpleSamlMissing()
  if (missing !== undefined) throw new Error(missing)
  const port = opts.port ?? await freeLoopbackPort()
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-simplesaml-'))
  const paths = { config: join(dir, 'config'), metadata: join(dir, 'metadata'), cert: join(dir, 'cert'), data: join(dir, 'data'), log: join(dir, 'log'), tmp: join(dir, 'tmp'), sessions: join(dir, 'sessions') }
  for (const p of Object.values(paths)) mkdirSync(p, { recursive: true })
  const base = `http://127.0.0.1:${port}/simplesaml`
  const entityId = `${base}/saml2/idp/metadata.php`
  try {
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=127.0.0.1:${port}`,
      '-keyout', join(paths.cert, 'idp.pem'), '-out', join(paths.cert, 'idp.crt')], { stdio: 'pipe' })
    if (made.status !== 0) throw new Error(`openssl failed: ${String(made.stderr)}`)
    writeFileSync(join(paths.config, 'config.php'), configPhp(base, paths))
    writeFileSync(join(paths.config, 'authsources.php'), authsourcesPhp(opts.users))
    writeFileSync(join(paths.metadata, 'saml20-idp-hosted.php'), idpHostedPhp(entityId))
    writeFileSync(join(paths.metadata, 'saml20-sp-remote.php'), spRemotePhp(opts.sps))
    writeFileSync(join(dir, 'lighttpd.conf'), lighttpdConf(port, dir, paths))
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  // Two single-process php-cgi backends and lighttpd, all children of this process, so that stopping them reaps them
  // (a php-cgi spawned by lighttpd, or one that forks workers, would outlive it as a zombie until init reaps it).
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', SIMPLESAMLPHP_CONFIG_DIR: paths.config, PHP_FCGI_CHILDREN: '0', PHP_FCGI_MAX_REQUESTS: '100000' }
  const phpArgs = ['-d', `session.save_path=${paths.sessions}`, '-d', `error_log=${join(paths.log, 'php.log')}`, '-d', 'display_errors=0']
  const children: ChildProcess[] = [0, 1].map((i) => spawn('php-cgi', [...phpArgs, '-b', join(dir, `php${i}.sock`)], { stdio: 'ignore', env }))
  const web = spawn('lighttpd', ['-D', '-f', join(dir, 'lighttpd.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
  children.push(web)
  let stderr = ''
  web.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const stop = async (): Promise<void> => {
    await Promise.all(children.map(ended))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await Promise.all([listening(port, web, () => stderr), ...[0, 1].map(async (i) => { await socketReady(join(dir, `php${i}.sock`), children[i]!) })])
  } catch (err) {
    await stop()
    throw err
  }
  return {
    base,
    entityId,
    metadataUrl: entityId,
    cert: readFileSync(join(paths.cert, 'idp.crt'), 'utf8'),
    key: readFileSync(join(paths.cert, 'idp.pem'), 'utf8'),
    setSps: (sps) => { writeFileSync(join(paths.metadata, 'saml20-sp-remote.php'), spRemotePhp(sps)) },
    stop
  }
}

function configPhp (base: string, p: Record<string, string>): string {
  return `<?php
$config = [
  'baseurlpath' => ${php(base + '/')},
  'certdir' => ${php(p.cert + '/')},
  'loggingdir' => ${php(p.log + '/')},
  'datadir' => ${php(p.data + '/')},
  'tempdir' => ${php(p.tmp)},
  'metadatadir' => ${php(p.metadata + '/')},
  'metadata.sources' => [['type' => 'flatfile']],
  'secretsalt' => ${php(randomBytes(24).toString('hex'))},
  'auth.adminpassword' => ${php(randomBytes(24).toString('hex'))},
  'technicalcontact_name' => 'Test', 'technicalcontact_email' => 'na@example.org',
  'timezone' => 'UTC',
  'enable.saml20-idp' => true,
  'module.enable' => ['exampleauth' => true, 'saml' => true, 'core' => true, 'admin' => true],
  'admin.checkforupdates' => false,
  'showerrors' => true, 'errorreporting' => false, 'production' => false,
  'logging.level' => SimpleSAML\\Logger::WARNING, 'logging.handler' => 'file', 'logging.logfile' => 'simplesamlphp.log',
  'session.cookie.secure' => false, 'session.cookie.samesite' => null, 'session.cookie.name' => 'SimpleSAMLSessionID',
  'session.phpsession.savepath' => ${php(p.sessions)},
  'language.cookie.secure' => false, 'language.cookie.samesite' => null,
  'store.type' => 'phpsession',
  'assertion.allowed_clock_skew' => 180,
];
`
}

function authsourcesPhp (users: Record<string, SimpleSamlUser>): string {
  const entries = Object.entries(users).map(([name, u]) => {
    const attrs = Object.entries(u.attributes).map(([k, v]) => `${php(k)} => ${phpList(v)}`).join(', ')
    return `    ${php(`${name}:${u.password}`)} => [${attrs}],`
  })
  return `<?php
$config = [
  'admin' => ['core:AdminPassword'],
  'example-userpass' => [
    'exampleauth:UserPass',
${entries.join('\n')}
  ],
];
`
}

function idpHostedPhp (entityId: string): string {
  return `<?php
$metadata[${php(entityId)}] = [
  'host' => '__DEFAULT__',
  'privatekey' => 'idp.pem',
  'certificate' => 'idp.crt',
  'auth' => 'example-userpass',
  'signature.algorithm' => ${php(ALGORITHMS.sha256)},
  'userid.attribute' => 'uid',
  'attributes.NameFormat' => 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic',
];
`
}

function spRemotePhp (sps: SimpleSamlSp[]): string {
  const entries = sps.map((sp) => {
    const fields = [
      `'AssertionConsumerService' => [['Binding' => 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', 'Location' => ${php(sp.acsUrl)}]]`,
      `'NameIDFormat' => 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent'`,
      `'simplesaml.nameidattribute' => 'uid'`,
      `'saml20.sign.response' => ${sp.signResponse === false ? 'false' : 'true'}`,
      `'saml20.sign.assertion' => ${sp.signAssertion === false ? 'false' : 'true'}`,
      `'signature.algorithm' => ${php(ALGORITHMS[sp.signatureAlgorithm ?? 'sha256'])}`,
      `'assertion.encryption' => ${sp.encryptAssertion === true ? 'true' : 'false'}`,
      `'validate.logout' => false`
    ]
    if (sp.sloUrl !== undefined) fields.push(`'SingleLogoutService' => [['Binding' => 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', 'Location' => ${php(sp.sloUrl)}]]`)
    if (sp.cert !== undefined) fields.push(`'certData' => ${php(pemBody(sp.cert))}`)
    return `$metadata[${php(sp.entityId)}] = [\n  ${fields.join(',\n  ')},\n];`
  })
  return `<?php\n${entries.join('\n')}\n`
}

function lighttpdConf (port: number, dir: string, p: Record<string, string>): string {
  const q = (s: string): string => JSON.stringify(s)
  return `server.modules = ("mod_alias", "mod_fastcgi")
server.bind = "127.0.0.1"
server.port = ${port}
server.document-root = ${q(simpleSamlWww())}
server.errorlog = ${q(join(p.log, 'lighttpd.log'))}
server.max-worker = 0
index-file.names = ("index.php")
alias.url = ("/simplesaml/" => ${q(simpleSamlWww() + '/')})
fastcgi.server = (".php" => (
  ("socket" => ${q(join(dir, 'php0.sock'))}, "broken-scriptfilename" => "enable"),
  ("socket" => ${q(join(dir, 'php1.sock'))}, "broken-scriptfilename" => "enable")
))`
}

/** The base64 body of a PEM certificate (SimpleSAMLphp's `certData`). */
function pemBody (pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '')
}

async function freeLoopbackPort (): Promise<number> {
  const { createServer } = await import('node:net')
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const port = (srv.address() as { port: number }).port
  await new Promise<void>((resolve) => srv.close(() => { resolve() }))
  return port
}

/** Resolves once lighttpd accepts a connection on `port`; rejects when it exits first. */
async function listening (port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  let exited = false
  child.once('exit', () => { exited = true })
  for (let i = 0; i < 400; i++) {
    if (exited) throw new Error(`lighttpd exited: ${stderr()}`)
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1')
      s.once('connect', () => { s.destroy(); resolve(true) })
      s.once('error', () => { resolve(false) })
    })
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`lighttpd did not listen on ${port}: ${stderr()}`)
}

/** Ends a child process and waits for it to exit (SIGKILL after 2 seconds). */
async function ended (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => { child.kill('SIGKILL') }, 2000)
  await exited
  clearTimeout(timer)
}

/** Resolves once php-cgi listens on its socket; rejects when it exits first. */
async function socketReady (path: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (child.exitCode !== null) throw new Error(`php-cgi exited (${child.exitCode})`)
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(path)
      s.once('connect', () => { s.destroy(); resolve(true) })
      s.once('error', () => { resolve(false) })
    })
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`php-cgi did not listen on ${path}`)
}
