/**
 * @node-saml/node-saml, an optional peer dependency, loaded when a SAML provider registers (an OptionsError with the
 * `npm i` line when it is missing): an app without SAML never loads it, nor installs it. Its XML helpers (DOM
 * parsing, the signature check of a node, decryption) serve the checks node-saml's SAML class does not make; no
 * signature is ever verified by code of this package.
 */
import type { SAML, generateServiceProviderMetadata } from '@node-saml/node-saml'
import type * as NodeSamlXml from '@node-saml/node-saml/lib/xml.js'
import { checkDriver, importDriver, installCommand, loadSync } from '../../lib/optional-driver.js'

export interface SamlDriver {
  SAML: typeof SAML
  spMetadata: typeof generateServiceProviderMetadata
  xml: typeof NodeSamlXml
}

const NAME = '@node-saml/node-saml'
let loaded: Promise<SamlDriver> | undefined

/** node-saml and its XML module; a DriverMissingError naming `option` when it is not installed. */
export async function loadSamlDriver (option: string): Promise<SamlDriver> {
  const use = { option, feature: 'SAML 2.0 sign-in' }
  // Asked each time (a resolution, nothing loaded), so that the error names this provider's option.
  checkDriver(NAME, use)
  loaded ??= (async () => {
    const main = await importDriver<{ SAML: typeof SAML; generateServiceProviderMetadata: typeof generateServiceProviderMetadata }>(NAME, use)
    // The XML module has no entry in the package's exports map (there is none): reached by its file, as node-saml lays it out in 5.x.
    const xml = loadSync<typeof NodeSamlXml>(`${NAME}/lib/xml.js`, use, installCommand(NAME))
    return { SAML: main.SAML, spMetadata: main.generateServiceProviderMetadata, xml }
  })()
  try {
    return await loaded
  } catch (err) {
    loaded = undefined
    throw err
  }
}
