import { z } from 'zod'
import { email } from './schemas'

/** Roles an invitation may grant: an owner is made by an owner, never by invitation. */
export const invitableRoles = ['admin', 'member'] as const

export const CreateInvitationBody = z.object({
  email,
  role: z.enum(invitableRoles, { error: 'must be admin or member' }),
})
