/**
 * The examples of docs/guide/api-clients.md, compiled (lines as written there; test/docs/readme-examples.test.ts
 * checks they stay the same): the CLI signing in with openid-client over a loopback redirect, its registration,
 * openid-client's configuration against http://localhost, then the CLI with DPoP.
 */
import { createServer } from 'node:http'
import Fastify from 'fastify'
import * as client from 'openid-client'
import authPlugin from '../../index.js'

declare const secret: () => string
declare const url: string
const app = Fastify()
await app.register(authPlugin, { secret, url, clients: [{ id: 'demo-cli-browser', kind: 'native', name: 'Demo CLI', redirectUris: ['http://127.0.0.1/callback'] }] })
const local = await client.discovery(new URL('http://localhost:3000/auth'), 'demo-cli', undefined, client.None(), { algorithm: 'oauth2', execute: [client.allowInsecureRequests] })
console.log(local.serverMetadata().device_authorization_endpoint)

const config = await client.discovery(new URL('https://example.com/auth'), 'demo-cli-browser', undefined, client.None(), { algorithm: 'oauth2' })
const verifier = client.randomPKCECodeVerifier()
const state = client.randomState()
const server = createServer()
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const redirectUri = `http://127.0.0.1:${(server.address() as { port: number }).port}/callback`
const callback = new Promise<URL>((resolve) => server.on('request', (req, res) => {
  res.end('Signed in: you can close this tab.')
  resolve(new URL(req.url!, redirectUri))
}))
const challenge = await client.calculatePKCECodeChallenge(verifier)
console.log('Open', client.buildAuthorizationUrl(config, { redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state }).href)
const tokens = await client.authorizationCodeGrant(config, await callback, { pkceCodeVerifier: verifier, expectedState: state })
server.close()
const me = await fetch('https://example.com/api/me', { headers: { authorization: `Bearer ${tokens.access_token}` } })
console.log(await me.json(), 'refresh with', tokens.refresh_token !== undefined)

const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'))
const bound = client.buildAuthorizationUrl(config, { redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state, dpop_jkt: await dpop.calculateThumbprint() })
const pair = await client.authorizationCodeGrant(config, await callback, { pkceCodeVerifier: verifier, expectedState: state }, undefined, { DPoP: dpop })
const api = await client.fetchProtectedResource(config, pair.access_token, new URL('https://example.com/api/me'), 'GET', null, undefined, { DPoP: dpop })
const renewed = await client.refreshTokenGrant(config, pair.refresh_token!, undefined, { DPoP: dpop })
const device = await client.pollDeviceAuthorizationGrant(config, await client.initiateDeviceAuthorization(config, {}), undefined, { DPoP: dpop })
console.log(bound.href, api.status, renewed.token_type, device.token_type)
