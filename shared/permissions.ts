/** Roles a member of a team can hold, from most to least privileged. */
export const roles = ['owner', 'admin', 'member'] as const
export type Role = typeof roles[number]

export const crudActions = ['view', 'create', 'update', 'delete'] as const
export type CrudAction = typeof crudActions[number]

const ownersAndAdmins: readonly Role[] = ['owner', 'admin']
const everyone: readonly Role[] = roles
const nobody: readonly Role[] = []

/** Every named permission and the roles that hold it. */
export const permissions = {
  'api_keys.view': ownersAndAdmins,
  'api_keys.create': ownersAndAdmins,
  'api_keys.revoke': ownersAndAdmins,
  'team.update': ownersAndAdmins,
  'members.view': everyone,
  'members.update': ownersAndAdmins,
  'members.remove': ownersAndAdmins,
  'invitations.view': ownersAndAdmins,
  'invitations.create': ownersAndAdmins,
  'invitations.revoke': ownersAndAdmins,
  'activity.view': ownersAndAdmins,
  'webhooks.view': ownersAndAdmins,
  'webhooks.manage': ownersAndAdmins,
  'chat.use': everyone,
  'readonly.write': nobody,
} as const satisfies Record<string, readonly Role[]>

export type NamedPermission = keyof typeof permissions
/** `<table>.<action>` for a domain table, e.g. `tasks.create`. */
export type TablePermission = `${string}.${CrudAction}`
export type Permission = NamedPermission | TablePermission

const tableActionRoles: Record<CrudAction, readonly Role[]> = {
  view: everyone,
  create: everyone,
  update: everyone,
  delete: ownersAndAdmins,
}

/** The roles that hold a permission; a domain table's permissions follow their action. */
export function rolesFor(permission: Permission): readonly Role[] {
  if (permission in permissions) return permissions[permission as NamedPermission]
  const action = permission.slice(permission.lastIndexOf('.') + 1) as CrudAction
  return tableActionRoles[action] ?? nobody
}

/** Whether a member with `role` holds `permission`. */
export function can(role: Role | null | undefined, permission: Permission): boolean {
  return !!role && rolesFor(permission).includes(role)
}

/** The permission of an action on a domain table. */
export function tablePermission(table: string, action: CrudAction): TablePermission {
  return `${table}.${action}`
}
