import type { H3Event } from 'h3'
import { can, crudActions, tablePermission, type CrudAction, type Role } from '#shared/permissions'
import type { DataColumn, DataTable } from '#shared/types/data'
import type { TeamContext } from '../accounts/auth'
import { columnSchema } from '../public-api/openapi-parts'
import { recordSchemas, writableColumns } from './record-input'
import { joinedNames } from './record-sql'
import type { TableInfo } from './table-registry'
import { useTableRegistry, domainTables } from './table-registry'
import { authUser } from '../accounts/auth'
import { requireDomainTable } from '../public-api/routes'

/** The column that names a record of the table: `name`, else `title`. */
export function titleColumn(table: TableInfo): string | null {
  return ['name', 'title'].find(name => table.columns.some(c => c.name === name)) ?? null
}

/** A domain table as the browser's data pages see it, with the actions `role` may take on it. */
export function describeDataTable(table: TableInfo, registry: Map<string, TableInfo>, role: Role): DataTable {
  const aliases = new Map(joinedNames(table, registry).map(join => [join.column, join.alias]))
  const writable = new Set(writableColumns(table).map(c => c.name))
  const { create } = recordSchemas(table)
  const columns = table.columns.map((column): DataColumn => ({
    name: column.name,
    type: column.type,
    schema: columnSchema(column) as DataColumn['schema'],
    nullable: column.nullable,
    has_default: column.hasDefault,
    comment: column.comment,
    allowed_values: column.allowedValues,
    references: column.references,
    name_field: aliases.get(column.name) ?? null,
    is_writable: writable.has(column.name),
    is_required: writable.has(column.name) && !create.shape[column.name]!.safeParse(undefined).success,
  }))
  const actions = Object.fromEntries(crudActions.map(action => [action, can(role, tablePermission(table.name, action))])) as DataTable['actions']
  return { name: table.name, comment: table.comment, title_column: titleColumn(table), columns, actions }
}

/** The domain tables the role may view, from the registry. */
export async function listDataTables(role: Role): Promise<DataTable[]> {
  const registry = await useTableRegistry()
  return (await domainTables())
    .filter(table => can(role, tablePermission(table.name, 'view')))
    .map(table => describeDataTable(table, registry, role))
}

/**
 * Authenticates a browser session for an action on the domain table in the `table` path parameter:
 * 401 signed out, 404 not a member or no such table, 403 when the role lacks `<table>.<action>`.
 */
export async function authTableAction(event: H3Event, action: CrudAction): Promise<TeamContext & { table: TableInfo }> {
  const context = await authUser(event, null)
  const table = await requireDomainTable(event)
  const permission = tablePermission(table.name, action)
  if (!can(context.role, permission)) {
    throw createError({ statusCode: 403, statusMessage: `Your role (${context.role}) does not allow ${permission}` })
  }
  return { ...context, table }
}
