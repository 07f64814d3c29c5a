// What the handlers (server/api, routes, plugins, middleware) use from accounts/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { changePassword, createAccount, readFormFields, requireUserTeam, signIn, signInFromForm, userTeams } from './accounts'
export { authSignedIn, authUser, requireUser } from './auth'
export { acceptInvitation, createInvitation, inviteBaseUrl, listPendingInvitations, previewInvitation, revokeInvitation } from './invitations'
export { endUserSessions, isSessionLive, startSession } from './sessions'
export { createTeam, listMembers, removeMember, updateMemberRole, updateTeam } from './teams'
