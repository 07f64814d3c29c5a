import { apiError, badRequest as bad } from './errors'
import type { Embed, QueryAccess } from './query'
import type { TableInfo } from '../records/table-registry'

/** How deep embeddings may nest (`projects(tasks(…))` is two). */
export const maxEmbedDepth = 3

/** The relation an embedding names: by the target table (and an optional `!fk_column` hint) or by the parent's foreign-key column. */
export function resolveEmbed(parent: TableInfo, name: string, hint: string | undefined, registry: Map<string, TableInfo>, access: QueryAccess): Omit<Embed, 'items'> {
  if (!access.canRead) throw bad(`select: embedding ${name} is available on the public API only`)
  if (parent.name === 'profiles') throw bad(`select: nothing can be embedded in profiles`, 'PGRST200')
  const fkColumn = parent.columns.find(c => c.name === name && c.references)
  const candidates: Omit<Embed, 'items'>[] = []
  if (fkColumn) {
    const target = registry.get(fkColumn.references!.table)
    if (target) candidates.push({ target, many: false, parentColumn: fkColumn.name, targetColumn: fkColumn.references!.column })
  }
  else {
    const target = registry.get(name)
    if (target) {
      for (const column of parent.columns) {
        if (column.references?.table === target.name && (!hint || hint === column.name)) candidates.push({ target, many: false, parentColumn: column.name, targetColumn: column.references.column })
      }
      for (const column of target.columns) {
        if (column.references?.table === parent.name && (!hint || hint === column.name)) candidates.push({ target, many: true, parentColumn: column.references.column, targetColumn: column.name })
      }
    }
  }
  const found = candidates.filter(c => c.target.isDomain || (c.target.name === 'profiles' && !c.many))
  if (!found.length) {
    throw apiError(400, `Could not find a relationship between ${parent.name} and ${name.slice(0, 63)}`, {
      code: 'PGRST200', hint: 'Embed a domain table linked by a foreign key, or profiles through a column such as created_by',
    })
  }
  if (found.length > 1) {
    throw apiError(300, `Could not embed because more than one relationship was found for ${parent.name} and ${name.slice(0, 63)}`, {
      code: 'PGRST201', hint: `Name the foreign key: ${found.map(c => `${name}!${c.many ? c.targetColumn : c.parentColumn}`).join(' or ')}`,
    })
  }
  const embed = found[0]!
  if (embed.target.isDomain && !access.canRead(embed.target.name)) {
    throw apiError(403, `This API key may not read ${embed.target.name} (its scopes lack read access to it), so it cannot embed it`, { code: '42501' })
  }
  return embed
}

/** The columns a `select` may name in a table: every column, but only `id` and `name` of profiles. */
export const selectableColumns = (table: TableInfo) =>
  table.name === 'profiles' ? table.columns.filter(c => c.name === 'id' || c.name === 'name') : table.columns
