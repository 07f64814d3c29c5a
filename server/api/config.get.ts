import { isChatEnabled } from '~~/server/utils/chat/access'

// Public flags the browser needs before sign-in; demo_account only in development, while the seeded account exists.
export default defineEventHandler(async () => {
  return { chat_enabled: isChatEnabled(), demo_account: await demoAccountHint() }
})
