/**
 * Confirmation-message templates. Only the four placeholders (and `{{.Code}}`) of go-pkgz/auth's templates are recognised, in one pass:
 * a value that itself contains `{{.Token}}` is inserted as those characters, never evaluated, so a user name
 * cannot pull the token (or anything else) into a message sent to someone else.
 */
import { OptionsError } from '../../lib/errors.js'
import { escapeHtml } from '../../lib/html.js'

export interface TemplateValues {
  Address: string
  User: string
  Token: string
  Site: string
  /** The typed code of e-mail code sign-in (`code` option); empty otherwise. */
  Code?: string | undefined
}

/** `html` escapes `& < > " '` in values; `none` inserts them unchanged (plain-text messages). */
export type TemplateEscape = 'html' | 'none'

const PLACEHOLDER = /\{\{\s*\.(Address|User|Token|Site|Code)\s*\}\}/g

/** A template is taken for HTML when it contains a tag, so a user name cannot add markup to a mail. */
export function defaultEscape (template: string): TemplateEscape {
  return /<[A-Za-z!/]/.test(template) ? 'html' : 'none'
}

/**
 * Checks a template at registration: it must be a string carrying the token, or with e-mail codes (`code`) the
 * code and not the token (a link beside the code would be a second way in, not spent with the code).
 */
export function checkTemplate (template: unknown, label: string, code = false): string {
  const option = `${label}.template`
  if (typeof template !== 'string' || template === '') throw new OptionsError(option, 'is required')
  const hasToken = /\{\{\s*\.Token\s*\}\}/.test(template)
  const hasCode = /\{\{\s*\.Code\s*\}\}/.test(template)
  if (code) {
    if (!hasCode) throw new OptionsError(option, 'must contain {{.Code}} (the code option is on)')
    if (hasToken) throw new OptionsError(option, 'must not contain {{.Token}} when the code option is on')
  } else {
    if (!hasToken) throw new OptionsError(option, 'must contain {{.Token}}')
    if (hasCode) throw new OptionsError(option, 'contains {{.Code}} but the code option is off')
  }
  return template
}

export function renderTemplate (template: string, values: TemplateValues, escape: TemplateEscape = defaultEscape(template)): string {
  return template.replace(PLACEHOLDER, (_m, key: keyof TemplateValues) => {
    const v = values[key] ?? ''
    return escape === 'html' ? escapeHtml(v) : v
  })
}
