import type { CrudAction, Permission } from '#shared/permissions'

/** The permission of each action on a table the chat may use. */
export type TableActionPermissions = Record<CrudAction, Permission>

const domainTable = (table: string): TableActionPermissions => ({
  view: `${table}.view`,
  create: `${table}.create`,
  update: `${table}.update`,
  delete: `${table}.delete`,
})

// Read-only: nobody holds readonly.write.
const readOnly = (view: Permission): TableActionPermissions => ({
  view,
  create: 'readonly.write',
  update: 'readonly.write',
  delete: 'readonly.write',
})

/**
 * The chat's tables besides the domain tables, which need no line here: their migration's
 * register_domain_table grants SELECT to chat_reader with the team policy, and every domain table
 * is a chat table with its `<table>.<action>` permissions.
 */
export const tablePermissions: Record<string, TableActionPermissions> = {
  projects: domainTable('projects'),
  tasks: domainTable('tasks'),
  notes: domainTable('notes'),
  activity_log: readOnly('activity.view'),
}

/** The chat permissions of a table: its entry above, else those of a domain table (`<table>.<action>`). */
export function chatTablePermissions(table: string): TableActionPermissions {
  return tablePermissions[table] ?? domainTable(table)
}
