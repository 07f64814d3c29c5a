import type { User } from '#auth-utils'
import type { H3Event } from 'h3'
import { createAuditedClient, requireActor, type AuditedClient } from '../db/audited-client'
import { isUniqueViolation, type Database } from '../db/db-drivers'
import { endUserSessions, startSession } from './sessions'
import { parseInput } from '../validation'
import type { TeamSummary } from '#shared/types/api'
import { LoginBody } from '#shared/utils/schemas'
import { useDb } from '../db/database'

const loginWindowMinutes = 15
const maxLoginAttempts = 10

/** Creates a local account and its profile; null when the e-mail is taken. */
export async function createAccount(db: Database, input: { email: string, password: string, name: string }): Promise<User | null> {
  const passwordHash = await hashPassword(input.password)
  // the unique index on lower(email) settles a race between two sign-ups
  return db.transaction(async (tx) => {
    const taken = await tx.query('select 1 from public.profiles where lower(email) = $1', [input.email])
    if (taken.rowCount) return null
    const { rows } = await tx.query<{ id: string }>(
      'insert into auth.users (email, encrypted_password) values ($1, $2) returning id',
      [input.email, passwordHash],
    )
    const id = rows[0]!.id
    await tx.query('insert into public.profiles (id, email, name) values ($1, $2, $3)', [id, input.email, input.name])
    return { id, email: input.email, name: input.name }
  }).catch((error) => {
    if (isUniqueViolation(error)) return null
    throw error
  })
}

/**
 * Counts a sign-in attempt for this e-mail and decides in the same statement: the seconds until
 * another attempt may be made when this one is over the limit, else 0 (the attempt may go on).
 */
export async function claimLoginAttempt(db: Database, email: string): Promise<number> {
  const { rows } = await db.query<{ attempts: number, retry_after: number }>(
    `insert into public.login_attempts as a (key) values ($1)
     on conflict (key) do update set
       attempts = case when a.window_started_at <= now() - make_interval(mins => $2) then 1 else a.attempts + 1 end,
       window_started_at = case when a.window_started_at <= now() - make_interval(mins => $2) then now() else a.window_started_at end
     returning attempts, ceil(extract(epoch from (window_started_at + make_interval(mins => $2) - now())))::int as retry_after`,
    [email, loginWindowMinutes],
  )
  const { attempts, retry_after } = rows[0]!
  return attempts > maxLoginAttempts ? Math.max(1, retry_after) : 0
}

/** The account for these credentials, or null; a success ends the e-mail's throttling window. */
export async function verifyCredentials(db: Database, email: string, password: string): Promise<User | null> {
  const { rows } = await db.query<User & { encrypted_password: string }>(
    `select p.id, p.email, p.name, u.encrypted_password
     from public.profiles p join auth.users u on u.id = p.id
     where lower(p.email) = $1`,
    [email],
  )
  const account = rows[0]
  if (!account || !await verifyPassword(account.encrypted_password, password)) return null
  await db.query('delete from public.login_attempts where key = $1', [email])
  return { id: account.id, email: account.email, name: account.name }
}

/**
 * Changes the user's password after checking the current one (throttled like a sign-in, so it
 * cannot be used to guess it), and ends the user's other sessions. 401 for a wrong password.
 */
export async function changePassword(db: Database, user: User, keepSessionId: string, currentPassword: string, newPassword: string): Promise<{ endedSessions: number }> {
  const retryAfter = await claimLoginAttempt(db, user.email)
  if (retryAfter) throw createError({ statusCode: 429, statusMessage: `Too many wrong passwords; try again in ${Math.ceil(retryAfter / 60)} minute(s)` })
  if (!await verifyCredentials(db, user.email, currentPassword)) throw createError({ statusCode: 401, statusMessage: 'current_password: is wrong' })
  const passwordHash = await hashPassword(newPassword)
  return db.transaction(async (tx) => {
    await tx.query('update auth.users set encrypted_password = $2 where id = $1', [user.id, passwordHash])
    return { endedSessions: await endUserSessions(tx, user.id, keepSessionId) }
  })
}

/**
 * Signs in: `retryAfter` (seconds) while the e-mail is throttled, a 401 for wrong credentials,
 * else the user and the team to make current.
 */
export async function signIn(db: Database, email: string, password: string): Promise<{ user: User, currentTeamId: string | null } | { retryAfter: number }> {
  const retryAfter = await claimLoginAttempt(db, email)
  if (retryAfter) return { retryAfter }
  const user = await verifyCredentials(db, email, password)
  if (!user) throw createError({ statusCode: 401, statusMessage: 'Wrong e-mail or password' })
  const { current } = await userTeams(createAuditedClient(db, { actorId: user.id, teamId: null, source: 'web' }))
  return { user, currentTeamId: current?.id ?? null }
}

/** The client's user's teams and the current one: the session's choice while still a member of it, else the oldest membership. */
export async function userTeams(client: AuditedClient, preferredTeamId?: string | null): Promise<{ teams: TeamSummary[], current: TeamSummary | null }> {
  const teams = await listUserTeams(client)
  return { teams, current: teams.find(team => team.id === preferredTeamId) ?? teams[0] ?? null }
}

/** The team the client's user switches to; 404 unless they are a member of it. */
export async function requireUserTeam(client: AuditedClient, teamId: string): Promise<TeamSummary> {
  const team = (await listUserTeams(client)).find(candidate => candidate.id === teamId)
  if (!team) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  return team
}

/** The teams the client's user belongs to, oldest membership first. */
async function listUserTeams(client: AuditedClient): Promise<TeamSummary[]> {
  const { rows } = await client.read<TeamSummary>(
    `select t.id, t.name, m.role
     from public.team_members m join public.teams t on t.id = m.team_id
     where m.user_id = $1
     order by m.created_at, t.name`,
    [requireActor(client)],
  )
  return rows
}

/** The fields of a form the browser posted itself (application/x-www-form-urlencoded); anything else reads as no fields. */
export async function readFormFields(event: H3Event): Promise<Record<string, unknown>> {
  if (!String(getRequestHeader(event, 'content-type') ?? '').startsWith('application/x-www-form-urlencoded')) return {}
  const fields: unknown = await readBody(event).catch(() => ({}))
  return fields && typeof fields === 'object' && !Array.isArray(fields) ? fields as Record<string, unknown> : {}
}

/**
 * Signs in from a posted form and starts the session: the checks of the JSON route (validation,
 * throttling, credentials), plus the form's origin, which must be this site (another site may not
 * sign a visitor into an account of its choosing). Answers what went wrong as a sentence.
 */
export async function signInFromForm(event: H3Event, fields: Record<string, unknown>): Promise<{ ok: true } | { ok: false, message: string }> {
  const origin = getRequestHeader(event, 'origin')
  if (origin && origin !== 'null' && URL.canParse(origin) && new URL(origin).host !== getRequestHost(event, { xForwardedHost: true })) {
    return { ok: false, message: 'The sign-in came from another site; sign in here' }
  }
  try {
    const { email, password } = parseInput(LoginBody, { email: fields.email, password: fields.password })
    const result = await signIn(await useDb(), email, password)
    if ('retryAfter' in result) return { ok: false, message: `Too many failed sign-ins; try again in ${Math.ceil(result.retryAfter / 60)} minute(s)` }
    await startSession(event, result.user, result.currentTeamId)
    return { ok: true }
  }
  catch (error) {
    const status = (error as { statusCode?: number }).statusCode
    if (status && status < 500) return { ok: false, message: (error as { statusMessage?: string }).statusMessage ?? 'The sign-in failed' }
    throw error
  }
}
