import type { User } from '#auth-utils'
import { isUniqueViolation, type Database } from './db'
import type { TeamSummary } from '#shared/types/api'

const loginWindowMinutes = 15
const maxLoginFailures = 10

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

/** Seconds until another login may be tried for this e-mail, or 0 when it may be tried now. */
export async function loginRetryAfter(db: Database, email: string): Promise<number> {
  const { rows } = await db.query<{ failures: number, retry_after: number | null }>(
    `select count(*)::int as failures,
            ceil(extract(epoch from (min(created_at) + make_interval(mins => $2) - now())))::int as retry_after
     from public.rate_limits
     where key = $1 and created_at > now() - make_interval(mins => $2)`,
    [`login:${email}`, loginWindowMinutes],
  )
  const { failures, retry_after } = rows[0]!
  return failures >= maxLoginFailures ? Math.max(1, retry_after ?? 1) : 0
}

/** The account for these credentials, or null (and the failure is counted). */
export async function verifyCredentials(db: Database, email: string, password: string): Promise<User | null> {
  const { rows } = await db.query<User & { encrypted_password: string }>(
    `select p.id, p.email, p.name, u.encrypted_password
     from public.profiles p join auth.users u on u.id = p.id
     where lower(p.email) = $1`,
    [email],
  )
  const account = rows[0]
  if (account && await verifyPassword(account.encrypted_password, password)) {
    return { id: account.id, email: account.email, name: account.name }
  }
  await db.query('insert into public.rate_limits (key) values ($1)', [`login:${email}`])
  return null
}

/** The teams a user belongs to, oldest membership first. */
export async function listUserTeams(db: Database, userId: string): Promise<TeamSummary[]> {
  const { rows } = await db.query<TeamSummary>(
    `select t.id, t.name, m.role
     from public.team_members m join public.teams t on t.id = m.team_id
     where m.user_id = $1
     order by m.created_at, t.name`,
    [userId],
  )
  return rows
}
