import { randomBytes } from 'node:crypto'
import type { TestApp } from './app'

export interface Answer<T = any> {
  status: number
  body: T
  headers: Headers
}

/** A browser-like client: keeps the session cookie between requests. */
export class Client {
  cookie = ''
  user?: { id: string, email: string, name: string }

  constructor(readonly app: Pick<TestApp, 'url'>) {}

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
    const init: RequestInit = { method, headers: { ...headers }, redirect: 'manual' }
    if (this.cookie) (init.headers as Record<string, string>).cookie = this.cookie
    if (body !== undefined) {
      (init.headers as Record<string, string>)['content-type'] = 'application/json'
      init.body = typeof body === 'string' ? body : JSON.stringify(body)
    }
    const response = await fetch(`${this.app.url}${path}`, init)
    const setCookie = response.headers.getSetCookie()
    for (const line of setCookie) {
      const [pair] = line.split(';')
      if (pair!.startsWith('nuxt-session=')) this.cookie = pair!.endsWith('=') ? '' : pair!
    }
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : null
    }
    catch {
      // not JSON
    }
    return { status: response.status, body: parsed as T, headers: response.headers }
  }

  get = <T = any>(path: string, headers?: Record<string, string>) => this.request<T>('GET', path, undefined, headers)
  post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => this.request<T>('POST', path, body ?? {}, headers)
  patch = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => this.request<T>('PATCH', path, body ?? {}, headers)
  put = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => this.request<T>('PUT', path, body ?? {}, headers)
  delete = <T = any>(path: string, headers?: Record<string, string>) => this.request<T>('DELETE', path, undefined, headers)
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.com`
}

/** Signs up a new user through the API and returns a client holding their session. */
export async function signUp(app: Pick<TestApp, 'url'>, fields: { email?: string, name?: string, password?: string } = {}): Promise<Client> {
  const client = new Client(app)
  const answer = await client.post('/api/auth/signup', {
    email: fields.email ?? uniqueEmail(),
    password: fields.password ?? 'correct horse battery',
    name: fields.name ?? 'Test User',
  })
  if (answer.status !== 201) throw new Error(`sign-up failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  client.user = answer.body.user
  return client
}

/** Creates a team as `owner` and returns its id. */
export async function createTeam(owner: Client, name = 'Team'): Promise<string> {
  const answer = await owner.post('/api/teams', { name })
  if (answer.status !== 201) throw new Error(`team creation failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body.id
}

/** Adds a user to a team with a role, directly in the database (as the invitation flow would). */
export async function addMember(app: TestApp, teamId: string, member: Client, role: 'owner' | 'admin' | 'member') {
  await app.db.query('insert into public.team_members (team_id, user_id, role) values ($1, $2, $3)', [teamId, member.user!.id, role])
}

export interface TeamFixture {
  teamId: string
  owner: Client
  admin: Client
  member: Client
  outsider: Client
  anonymous: Client
}

/** A team with an owner, an admin and a member, plus a signed-in outsider and a signed-out client. */
export async function teamWithRoles(app: TestApp): Promise<TeamFixture> {
  const owner = await signUp(app, { name: 'Olive Owner' })
  const teamId = await createTeam(owner, 'Role Team')
  const admin = await signUp(app, { name: 'Adam Admin' })
  const member = await signUp(app, { name: 'Mia Member' })
  const outsider = await signUp(app, { name: 'Otto Outsider' })
  await createTeam(outsider, 'Other Team')
  await addMember(app, teamId, admin, 'admin')
  await addMember(app, teamId, member, 'member')
  return { teamId, owner, admin, member, outsider, anonymous: new Client(app) }
}

/** A client of the public API holding one team's key. */
export class KeyClient extends Client {
  constructor(app: Pick<TestApp, 'url'>, readonly key: string) {
    super(app)
  }

  override request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return super.request<T>(method, path, body, { authorization: `Bearer ${this.key}`, ...headers })
  }
}

/** Creates an API key with the default scopes (every table, write) as the team's owner and returns a client holding it. */
export async function keyClientFor(app: Pick<TestApp, 'url'>, team: Pick<TeamFixture, 'teamId' | 'owner'>, name: string): Promise<KeyClient> {
  const answer = await team.owner.post(`/api/teams/${team.teamId}/api-keys`, { name })
  if (answer.status !== 201) throw new Error(`API key creation failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  return new KeyClient(app, answer.body.key)
}
