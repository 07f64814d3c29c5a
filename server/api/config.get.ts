import { isChatEnabled } from '~~/server/utils/chat/access'

// Public flags the browser needs before sign-in.
export default defineEventHandler(() => {
  return { chat_enabled: isChatEnabled() }
})
