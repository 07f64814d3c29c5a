import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../../server/utils/db/db-drivers'
import { runMigrations } from '../../server/utils/db/migrations'
import { readCatalog, type TableInfo } from '../../server/utils/records/table-registry'
import { schemaHints, tableHint } from '../../server/utils/chat/schema-hints'
import { tablePermissions } from '../../server/utils/chat/table-permissions'
import { loadMigrationFiles } from '../../scripts/load-migrations'

// The hints are rendered from the catalog of the real migrations (an in-memory PGlite).
let db: Database
let catalog: Map<string, TableInfo>
beforeAll(async () => {
  db = createDatabase({ dataDir: 'memory://' })
  await runMigrations(db, loadMigrationFiles())
  catalog = await readCatalog(db)
}, 60_000)
afterAll(() => db?.close())

describe('schema hints for the chat model', () => {
  it('renders the tasks table exactly', () => {
    expect(tableHint(catalog.get('tasks')!)).toBe([
      'Table tasks -- A unit of work, optionally part of a project and assigned to a team member.',
      '  - id: uuid, not null, has a default',
      '  - team_id: uuid, not null, fk: teams.id',
      '  - created_by: uuid, not null, fk: profiles.id',
      '  - title: text, not null, CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200))) -- What needs to be done, in a few words.',
      '  - status: text, not null, has a default, one of: (\'todo\', \'in_progress\', \'done\') -- todo, in_progress or done; a done task must have completed_at.',
      '  - priority: integer, not null, has a default, CHECK (((priority >= 1) AND (priority <= 5))) -- 1 (highest) to 5 (lowest); 3 is normal.',
      '  - project_id: uuid, nullable, fk: projects.id -- The project this task belongs to (a project of the same team).',
      '  - assignee_id: uuid, nullable, fk: profiles.id -- The team member responsible for the task (a profile id).',
      '  - due_date: date, nullable -- The day the task is due (YYYY-MM-DD).',
      '  - completed_at: timestamp with time zone, nullable -- When the task was completed; required when status is done.',
      '  - created_at: timestamp with time zone, not null, has a default',
      '  - updated_at: timestamp(3) with time zone, not null, has a default -- When the record last changed; set by the database.',
      '  - check tasks_done_has_completed_at: CHECK (((status <> \'done\'::text) OR (completed_at IS NOT NULL)))',
    ].join('\n'))
  })

  it('renders projects with its status list and notes with its foreign key', () => {
    const projects = tableHint(catalog.get('projects')!)
    expect(projects).toContain('  - status: text, not null, has a default, one of: (\'active\', \'archived\') -- active while work goes on; archived when finished or abandoned.')
    expect(projects).toContain('  - description: text, nullable -- Free-text description of the project goals.')
    const notes = tableHint(catalog.get('notes')!)
    expect(notes).toContain('  - project_id: uuid, nullable, fk: projects.id -- The project this note belongs to (a project of the same team).')
    expect(notes.split('\n')[0]).toBe('Table notes -- A free-text note, optionally attached to a project.')
  })

  it('covers every table of the chat registry, the activity log included', () => {
    const hints = schemaHints(Object.keys(tablePermissions).map(name => catalog.get(name)!))
    for (const name of ['projects', 'tasks', 'notes', 'activity_log']) expect(hints).toContain(`Table ${name} -- `)
    expect(hints).toContain('  - source: text, not null, one of: (\'web\', \'api\', \'chat\', \'mcp\', \'system\')')
    expect(hints).toContain('  - source_ref: text, nullable -- The chat id for writes of the chat assistant; the API key id for writes of an MCP agent.')
  })
})
