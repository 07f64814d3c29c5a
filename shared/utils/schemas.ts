import { z } from 'zod'
import { activityActions, activitySources } from '../activity'
import { roles } from '../permissions'
import { PageQuery, tableNamePattern } from './patterns'

export const email = z.email({ error: 'must be a valid e-mail address' }).trim().toLowerCase().max(254)
export const personName = z.string().trim().min(1, 'is required').max(100, 'must be at most 100 characters')
export const teamName = z.string().trim().min(1, 'is required').max(100, 'must be at most 100 characters')
// Postgres stores the years 1 to 9999 of the ISO form and time zone offsets up to 15:59.
const storableYear = (year: number) => year >= 1 && year <= 9999
const yearMessage = 'must lie between the years 1 and 9999'

/** A calendar date, YYYY-MM-DD, that Postgres can store. */
export const isoDate = z.iso.date({ error: 'must be a date (YYYY-MM-DD)' })
  .refine(value => storableYear(Number(value.slice(0, 4))), yearMessage)

/** A date and time without offset, as Postgres can store it. */
export const isoLocalDateTime = z.iso.datetime({ local: true, error: 'must be an ISO 8601 date and time without offset' })
  .refine(value => storableYear(Number(value.slice(0, 4))), yearMessage)

/** An ISO 8601 date and time with any offset (Z, +05:30, +23:59), answered as the same instant in UTC. */
export const isoDateTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date and time' })
  .refine(value => storableYear(new Date(value).getUTCFullYear()), yearMessage)
  .transform(value => new Date(value).toISOString())

export const webhookUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2048)

const newPassword = z.string().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters')

export const SignupBody = z.object({
  email,
  password: newPassword,
  name: personName,
})

export const ChangePasswordBody = z.object({
  current_password: z.string().min(1, 'is required').max(128),
  new_password: newPassword,
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
  activity_retention_days: z.number({ error: 'must be a whole number of days from 1 to 36500, or null' }).int('must be a whole number of days')
    .min(1, 'must be at least 1 day').max(36500, 'must be at most 36500 days').nullable().optional(),
  api_log_retention_days: z.number({ error: 'must be a whole number of days from 1 to 90' }).int('must be a whole number of days')
    .min(1, 'must be at least 1 day').max(90, 'must be at most 90 days').optional(),
})

export const MemberRoleBody = z.object({ role: z.enum(roles) })

export { activityActions, activitySources, type ActivityAction, type ActivitySource } from '../activity'

const timestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp, e.g. 2026-01-31T00:00:00Z' })

/** The filters of the activity list and its export. */
export const ActivityFilters = z.object({
  source: z.enum(activitySources).optional(),
  table: z.string().regex(tableNamePattern, 'must be a table name').optional(),
  actor_id: z.uuid().optional(),
  api_key_id: z.uuid().optional(),
  action: z.enum(activityActions).optional(),
  record_id: z.string().min(1).max(100).optional(),
  from: timestamp.optional(),
  to: timestamp.optional(),
})

export const ActivityQuery = ActivityFilters.extend(PageQuery.shape)

export const RecordHistoryQuery = PageQuery

export const activityExportFormats = ['csv', 'ndjson'] as const

export const ActivityExportQuery = ActivityFilters.extend({
  format: z.enum(activityExportFormats, { error: 'must be csv or ndjson' }),
})

const webhookEvents = z.array(z.string().trim().min(1, 'must not be empty').max(200))
  .min(1, 'must name at least one event type (or "*")').max(200, 'must name at most 200 event types')
export const CreateWebhookEndpointBody = z.object({
  url: webhookUrl,
  description: z.string().trim().max(500, 'must be at most 500 characters').optional(),
  events: webhookEvents,
  enabled: z.boolean().optional(),
})
export const UpdateWebhookEndpointBody = CreateWebhookEndpointBody.partial()
export const RecoverWebhookEndpointBody = z.object({
  since: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date and time, e.g. 2026-01-31T12:00:00Z' }),
})
