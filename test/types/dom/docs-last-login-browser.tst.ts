/** The browser-side example of docs/guide/last-login-method.md, compiled with the DOM library. */
const last = document.cookie.split('; ').find((c) => c.startsWith('gatehouse_last_login='))?.split('=')[1]

export { last }
