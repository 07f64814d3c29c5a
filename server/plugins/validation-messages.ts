import { z } from 'zod'
import { wordedIssue } from '~~/server/utils/validation-messages'

// Every schema's issues in words (server/utils/validation-messages.ts), unless the schema says its own.
export default defineNitroPlugin(() => {
  z.config({ customError: wordedIssue })
})
