import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'
import type { H3Event } from 'h3'
import type { Role } from '#shared/permissions'
import type { CreatedInvitation, InvitationPreview, PendingInvitation } from '#shared/types/invitations'
import { requireActor, requireTeam, type AuditedClient } from '../db/audited-client'
import type { Database, Queryable } from '../db/db-drivers'
import { isUniqueViolation } from '../db/db-drivers'
import { setting } from '../settings'
import { fireWebhook } from '../webhooks/webhooks'

const tokenPattern = /^[\w-]{43}$/

/** The base of invite links: BASE_URL when set, else the origin the request came to. */
export function inviteBaseUrl(event: H3Event): string {
  return (setting('baseUrl') || getRequestURL(event).origin).replace(/\/+$/, '')
}

function inviteUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/invite/${token}`
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

// AES-256-GCM key for the stored copy of each token, derived from APP_SECRET (else the session password).
function tokenKey(): Buffer {
  // a generated session password reaches the session code through the environment (server/plugins/database.ts)
  const secret = setting('appSecret') || useRuntimeConfig().session.password || process.env.NUXT_SESSION_PASSWORD
  if (!secret) throw new Error('Neither APP_SECRET nor a session password is set')
  return Buffer.from(hkdfSync('sha256', secret, 'team-workspace', 'invitation-token', 32))
}

function encryptToken(token: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', tokenKey(), iv)
  const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()])
  return [iv, sealed, cipher.getAuthTag()].map(part => part.toString('base64url')).join('.')
}

/** The token, or null when it was sealed with another secret (the link cannot be shown then). */
function decryptToken(stored: string): string | null {
  try {
    const [iv, sealed, tag] = stored.split('.').map(part => Buffer.from(part, 'base64url'))
    const decipher = createDecipheriv('aes-256-gcm', tokenKey(), iv!)
    decipher.setAuthTag(tag!)
    return Buffer.concat([decipher.update(sealed!), decipher.final()]).toString('utf8')
  }
  catch {
    return null
  }
}

const invitationNotFound = () => createError({ statusCode: 404, statusMessage: 'This invitation does not exist, was already used, was revoked or has expired' })

// what makes an invitation pending, for a table aliased `i`
const isPending = 'i.accepted_at is null and i.revoked_at is null and i.expires_at > now()'

/** Creates a pending invitation and queues `invitation.created`; 409 when the e-mail is a member or already invited. */
export async function createInvitation(client: AuditedClient, input: { email: string, role: Role }, baseUrl: string): Promise<CreatedInvitation> {
  const teamId = requireTeam(client)
  const token = randomBytes(32).toString('base64url')
  try {
    return await client.transaction(async (tx) => {
      const { rows: members } = await tx.query(
        `select 1 from public.team_members m join public.profiles p on p.id = m.user_id
         where m.team_id = $1 and lower(p.email) = $2`,
        [teamId, input.email],
      )
      if (members.length) throw createError({ statusCode: 409, statusMessage: `${input.email} is already a member of this team` })
      // an expired invitation no longer blocks a new one for the same e-mail
      await tx.query(
        `delete from public.invitations
         where team_id = $1 and email = $2 and accepted_at is null and revoked_at is null and expires_at <= now()`,
        [teamId, input.email],
      )
      const { rows } = await tx.query<Omit<CreatedInvitation, 'invite_url'> & { team_name: string }>(
        `with invitation as (
           insert into public.invitations (team_id, email, role, token_hash, token_encrypted, invited_by)
           values ($1, $2, $3, $4, $5, $6)
           returning id, team_id, email, role, created_at, expires_at)
         select i.id, i.email, i.role, i.created_at, i.expires_at, t.name as team_name
         from invitation i join public.teams t on t.id = i.team_id`,
        [teamId, input.email, input.role, hashToken(token), encryptToken(token), client.context.actorId],
      )
      const { team_name, ...created } = rows[0]!
      const invitation = { ...created, invite_url: inviteUrl(baseUrl, token) }
      await fireWebhook(tx, teamId, 'invitation.created', {
        invitation_id: invitation.id,
        team_id: teamId,
        team_name,
        email: invitation.email,
        role: invitation.role,
        expires_at: new Date(invitation.expires_at).toISOString(),
        invite_url: invitation.invite_url,
      })
      return invitation
    })
  }
  catch (error) {
    if (isUniqueViolation(error)) throw createError({ statusCode: 409, statusMessage: `${input.email} already has a pending invitation` })
    throw error
  }
}

/** The team's pending invitations, newest first, with the inviter's name and the link. */
export async function listPendingInvitations(client: AuditedClient, baseUrl: string): Promise<PendingInvitation[]> {
  const { rows } = await client.read<Omit<PendingInvitation, 'invite_url'> & { token_encrypted: string }>(
    `select i.id, i.email, i.role, i.created_at, i.expires_at, p.name as invited_by_name, i.token_encrypted
     from public.invitations i left join public.profiles p on p.id = i.invited_by
     where i.team_id = $1 and ${isPending}
     order by i.created_at desc, i.id`,
    [requireTeam(client)],
  )
  return rows.map(({ token_encrypted, ...invitation }) => {
    const token = decryptToken(token_encrypted)
    return { ...invitation, invite_url: token ? inviteUrl(baseUrl, token) : null }
  })
}

/** Revokes a pending invitation of the team and queues `invitation.revoked`; 404 when none is pending. */
export async function revokeInvitation(client: AuditedClient, invitationId: string): Promise<void> {
  const teamId = requireTeam(client)
  await client.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string, email: string }>(
      `update public.invitations i set revoked_at = now()
       where i.id = $1 and i.team_id = $2 and ${isPending}
       returning i.id, i.email`,
      [invitationId, teamId],
    )
    if (!rows[0]) throw createError({ statusCode: 404, statusMessage: 'Invitation not found' })
    await fireWebhook(tx, teamId, 'invitation.revoked', { invitation_id: rows[0].id, team_id: teamId, email: rows[0].email })
  })
}

interface PendingByToken {
  id: string
  team_id: string
  team_name: string
  email: string
  role: Role
  expires_at: string
}

async function findPendingByToken(db: Queryable, token: string): Promise<PendingByToken | null> {
  if (!tokenPattern.test(token)) return null
  const { rows } = await db.query<PendingByToken>(
    `select i.id, i.team_id, t.name as team_name, i.email, i.role, i.expires_at
     from public.invitations i join public.teams t on t.id = i.team_id
     where i.token_hash = $1 and ${isPending}`,
    [hashToken(token)],
  )
  return rows[0] ?? null
}

/** What the invite page shows before accepting; 404 unless the token is pending. */
export async function previewInvitation(db: Database, token: string): Promise<InvitationPreview> {
  const invitation = await findPendingByToken(db, token)
  if (!invitation) throw invitationNotFound()
  const { team_name, email, role, expires_at } = invitation
  return { team_name, email, role, expires_at }
}

/**
 * Accepts an invitation for the signed-in user: the e-mail must match (403), the user must not be a
 * member yet (409). Marking it accepted is one conditional update, so of concurrent accepts exactly
 * one finds it pending (the others wait for its row lock, then see it used: 404); the membership
 * insert and `invitation.accepted` are in the same transaction.
 */
export async function acceptInvitation(client: AuditedClient, token: string): Promise<{ team_id: string, role: Role }> {
  const userId = requireActor(client)
  return client.transaction(async (tx) => {
    const invitation = await findPendingByToken(tx, token)
    if (!invitation) throw invitationNotFound()
    const { rows: profiles } = await tx.query<{ email: string }>('select email from public.profiles where id = $1', [userId])
    if (profiles[0]?.email.toLowerCase() !== invitation.email) {
      throw createError({ statusCode: 403, statusMessage: `This invitation is for ${invitation.email}; sign in with that e-mail to accept it` })
    }
    const { rows: members } = await tx.query('select 1 from public.team_members where team_id = $1 and user_id = $2', [invitation.team_id, userId])
    if (members.length) throw createError({ statusCode: 409, statusMessage: 'You are already a member of this team' })
    const { rowCount } = await tx.query(
      `update public.invitations i set accepted_at = now(), accepted_by = $2
       where i.id = $1 and ${isPending}`,
      [invitation.id, userId],
    )
    if (rowCount !== 1) throw invitationNotFound()
    await tx.query('insert into public.team_members (team_id, user_id, role) values ($1, $2, $3)', [invitation.team_id, userId, invitation.role])
    await fireWebhook(tx, invitation.team_id, 'invitation.accepted', {
      invitation_id: invitation.id,
      team_id: invitation.team_id,
      email: invitation.email,
      role: invitation.role,
      user_id: userId,
    })
    return { team_id: invitation.team_id, role: invitation.role }
  })
}
