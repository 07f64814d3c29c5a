import { z } from 'zod'
import { roles } from '../permissions'

export const email = z.email({ error: 'must be a valid e-mail address' }).trim().toLowerCase().max(254)
export const personName = z.string().trim().min(1, 'is required').max(100, 'must be at most 100 characters')
export const teamName = z.string().trim().min(1, 'is required').max(100, 'must be at most 100 characters')
export const webhookUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2048)

export const SignupBody = z.object({
  email,
  password: z.string().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters'),
  name: personName,
})

export const LoginBody = z.object({
  email,
  password: z.string().min(1, 'is required').max(128),
})

export const CurrentTeamBody = z.object({ team_id: z.uuid() })

export const CreateTeamBody = z.object({ name: teamName })

export const UpdateTeamBody = z.object({
  name: teamName.optional(),
  webhook_url: webhookUrl.nullable().optional(),
})

export const MemberRoleBody = z.object({ role: z.enum(roles) })

export const activitySources = ['web', 'api', 'chat', 'system'] as const
export const activityActions = ['insert', 'update', 'delete'] as const

export const ActivityQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).default(0),
  source: z.enum(activitySources).optional(),
  table: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a table name').optional(),
  actor_id: z.uuid().optional(),
  action: z.enum(activityActions).optional(),
})
