/**
 * The demo's own clients (docs/guide/api-clients.md): `demo-cli`, a command-line tool that signs in with a code
 * typed on the demo page (RFC 8628); `demo-cli-dpop`, the same tool with a key of its own, whose tokens are all
 * DPoP-bound (RFC 9449: `dpop: 'required'`); and `demo-mobile`, a phone app that signs in through the system browser
 * and comes back to its private-use scheme (RFC 8252). All are public clients: no secret, as an app's binary cannot
 * keep one; `demo-cli` and `demo-mobile` take DPoP when they send proofs (`dpop: 'allowed'`, the default).
 */
import type { ClientOptions } from '../index.js'

export const DEMO_CLIENTS: ClientOptions[] = [
  { id: 'demo-cli', kind: 'device', name: 'Demo CLI' },
  { id: 'demo-cli-dpop', kind: 'device', name: 'Demo CLI (DPoP)', dpop: 'required' },
  { id: 'demo-mobile', kind: 'native', name: 'Demo phone app', redirectUris: ['gatehouse-demo:/callback'] }
]
