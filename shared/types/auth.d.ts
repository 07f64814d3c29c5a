declare module '#auth-utils' {
  interface User {
    id: string
    email: string
    name: string
  }

  interface UserSession {
    currentTeamId?: string | null
    /** The id of the session's row in public.user_sessions; the cookie is valid while it exists. */
    sessionId?: string
  }
}

export {}
