export { addTelegramProvider, telegramProvider } from './provider.js'
export type { TelegramOptions } from './options.js'
export { TelegramBotApi, TelegramApiError } from './bot-api.js'
