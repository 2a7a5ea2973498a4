export { addVerifProvider, verifProvider, type VerifyOptions } from './provider.js'
export { SendError, senderFunc, toSender, type Sender, type SenderFunc, type SendErrorKind } from './sender.js'
export { SmtpSender, type SmtpSenderOptions } from './smtp.js'
export { renderTemplate, type TemplateEscape, type TemplateValues } from './template.js'
