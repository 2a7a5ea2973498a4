// The password form's captcha, played by the demo's Turnstile stand-in (example/captcha.ts): ticking "I am not a
// robot" gets a token as a solved widget would, and the form sends it as Turnstile's widget does, in the field
// `cf-turnstile-response`. A token works once: after every submit the box is cleared, as the real widget resets.
const box = document.querySelector('#captcha-check')
let solving = null

box.addEventListener('change', () => {
  solving = box.checked ? solve() : null
})

async function solve () {
  const res = await fetch('/captcha-standin/solve', { method: 'POST', credentials: 'same-origin' }).catch(() => null)
  if (res === null || !res.ok) { box.checked = false; return null }
  return (await res.json()).token
}

/** The token of the ticked box (waiting for it if the box was just ticked), or null. */
export async function captchaToken () {
  return solving === null ? null : await solving
}

/** Clears the box: the token it had is spent. */
export function resetCaptcha () {
  box.checked = false
  solving = null
}
