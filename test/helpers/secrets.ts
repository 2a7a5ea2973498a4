/**
 * The fixed secrets and passwords the test suite uses (signing secrets, client secrets, users' passwords). The
 * suite-wide check (secret-check.ts) fails any test process in which one of them shows up in an audit event (and,
 * through `assertNoSecret`, in a span attribute or a metric label). Add a new test's secret here.
 * Very short or common words the suite also uses as passwords (`nope`, `wrong`, `secret`) are left out: they
 * would match innocent text.
 */
export const TEST_SECRETS: readonly string[] = [
  'alice-secret', 'bob-secret', 'gh-secret', 'g-secret', 'k-secret', 'e-secret', 's3cret', 'mail-secret', 'dev-secret',
  'wrong-secret', 'hunter2', 'hunter2-secret', 'user-password-42', 'alice-pw', 'basic-pw', 'zed-pw', 'PASSWD-VALUE-4',
  'p@ss', 'service-secret-service-secret-0123', 'totp-tests-secret-0123456789abcdef',
  'tokens-test-secret-000-0123456789abcdef', 'site-a-key-0123456789abcdef0123456789',
  'site-a-old-0123456789abcdef0123456789', 'site-b-key-0123456789abcdef0123456789',
  'session-tests-secret-0123456789abcdef-0123', 'scratch-app-secret-0123456789abcdef-0123',
  's3cret-demo-config-0123456789abcdef', 'readme-test-secret-0123456789abcdef-01234',
  'passkey-tests-secret-0123456789abcdef', 'logging-test-secret-0123456789abcdef',
  'forged-claims-test-secret-0123456789abcdef', 'demo-test-secret-0123456789abcdef',
  'cookie-signing-secret-0123456789', 'cluster-demo-secret-0123456789abcdef-0123',
  'browser-totp-secret-0123456789abcdef', 'browser-telegram-secret-0123456789abcdef',
  'browser-sessions-secret-0123456789abcdef', 'browser-screenshots-secret-0123456789abcdef',
  'browser-providers-secret-0123456789abcdef', 'browser-passkey-secret-0123456789abcdef',
  'browser-oidc-secret-0123456789abcdef', 'browser-direct-secret-0123456789abcdef',
  'audit-tests-secret-0123456789abcdef', 'audit-pw-correct-horse', 'oauth2-test-secret-0123456789abcdef',
  'test-secret-0123456789-0123456789abcdef'
]
