import type { z } from 'zod'
import type { ActivityPage } from '#shared/types/api'
import type { ActivityQuery } from '#shared/utils/schemas'
import type { AuditedClient } from './audited-client'

/** A page of the team's activity, newest first, with the actor's name and the total that matches the filters. */
export async function listActivity(client: AuditedClient, teamId: string, filters: z.output<typeof ActivityQuery>): Promise<ActivityPage> {
  const where = ['a.team_id = $1']
  const params: unknown[] = [teamId]
  const filterColumns = { source: 'a.source', table: 'a.table_name', actor_id: 'a.actor_id', action: 'a.action' } as const
  for (const [key, column] of Object.entries(filterColumns)) {
    const value = filters[key as keyof typeof filterColumns]
    if (value === undefined) continue
    params.push(value)
    where.push(`${column} = $${params.length}`)
  }
  const condition = where.join(' and ')
  const [page, count] = await Promise.all([
    client.read<ActivityPage['entries'][number]>(
      `select a.id, a.team_id, a.actor_id, p.name as actor_name, a.source, a.source_ref, a.table_name,
              a.record_id, a.action, a.new_data, a.old_data, a.created_at
       from public.activity_log a left join public.profiles p on p.id = a.actor_id
       where ${condition}
       order by a.created_at desc, a.id
       limit $${params.length + 1} offset $${params.length + 2}`,
      [...params, filters.limit, filters.offset],
    ),
    client.read<{ total: number }>(`select count(*)::int as total from public.activity_log a where ${condition}`, params),
  ])
  return { entries: page.rows, total: count.rows[0]!.total }
}
