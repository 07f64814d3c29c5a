-- The example domain: projects, tasks and notes.
-- Each is a domain table (team_id, created_by, created_at), so the public API and the chat
-- pick it up from the catalog. CHECKs and column comments are read into the registry and
-- given to integrations and the chat model as hints. Members read their team's rows; only
-- the server writes, through the audited client (no write policies).

create table public.projects (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  created_by uuid not null references public.profiles (id),
  name text not null check (char_length(name) between 1 and 200),
  description text,
  status text not null default 'active' check (status in ('active', 'archived')),
  created_at timestamptz not null default now()
);
create index projects_team_id_created_at_idx on public.projects (team_id, created_at desc);
comment on table public.projects is 'A body of work that groups tasks and notes.';
comment on column public.projects.name is 'Short human-readable name of the project.';
comment on column public.projects.description is 'Free-text description of the project goals.';
comment on column public.projects.status is 'active while work goes on; archived when finished or abandoned.';

create table public.tasks (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  created_by uuid not null references public.profiles (id),
  title text not null check (char_length(title) between 1 and 200),
  status text not null default 'todo' check (status in ('todo', 'in_progress', 'done')),
  priority integer not null default 3 check (priority between 1 and 5),
  project_id uuid references public.projects (id) on delete set null,
  assignee_id uuid references public.profiles (id) on delete set null,
  due_date date,
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  constraint tasks_done_has_completed_at check (status <> 'done' or completed_at is not null)
);
create index tasks_team_id_created_at_idx on public.tasks (team_id, created_at desc);
create index tasks_project_id_idx on public.tasks (project_id);
comment on table public.tasks is 'A unit of work, optionally part of a project and assigned to a team member.';
comment on column public.tasks.title is 'What needs to be done, in a few words.';
comment on column public.tasks.status is 'todo, in_progress or done; a done task must have completed_at.';
comment on column public.tasks.priority is '1 (highest) to 5 (lowest); 3 is normal.';
comment on column public.tasks.project_id is 'The project this task belongs to (a project of the same team).';
comment on column public.tasks.assignee_id is 'The team member responsible for the task (a profile id).';
comment on column public.tasks.due_date is 'The day the task is due (YYYY-MM-DD).';
comment on column public.tasks.completed_at is 'When the task was completed; required when status is done.';

create table public.notes (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  created_by uuid not null references public.profiles (id),
  title text not null check (char_length(title) between 1 and 200),
  body text,
  project_id uuid references public.projects (id) on delete set null,
  created_at timestamptz not null default now()
);
create index notes_team_id_created_at_idx on public.notes (team_id, created_at desc);
comment on table public.notes is 'A free-text note, optionally attached to a project.';
comment on column public.notes.title is 'Title of the note.';
comment on column public.notes.body is 'The text of the note (plain text or Markdown).';
comment on column public.notes.project_id is 'The project this note belongs to (a project of the same team).';

alter table public.projects enable row level security;
alter table public.tasks enable row level security;
alter table public.notes enable row level security;

create policy "members read their team's projects" on public.projects
  for select to authenticated using (public.is_team_member(team_id));
create policy "members read their team's tasks" on public.tasks
  for select to authenticated using (public.is_team_member(team_id));
create policy "members read their team's notes" on public.notes
  for select to authenticated using (public.is_team_member(team_id));

grant select on public.projects, public.tasks, public.notes to authenticated;

select public.enable_activity_log('projects');
select public.enable_activity_log('tasks');
select public.enable_activity_log('notes');
