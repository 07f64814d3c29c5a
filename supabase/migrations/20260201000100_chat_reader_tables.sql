-- The chat role repeats the caller's table permissions, not only the team: the server sets
-- app.chat_tables (the tables the chat's user may view, comma-separated) next to app.chat_team_id
-- before it switches to chat_reader, which cannot change either (set_config is revoked from it).
-- A statement that gets past the parser to a table the user may not view (the activity log for
-- a plain member) finds no rows.
--
-- The check is folded into the team comparison (null when the table is not allowed, so no row
-- matches) rather than added as a second condition: the planner then estimates rows as before,
-- which the chat's cost guard (EXPLAIN) relies on.

create function public.chat_team_for(p_table text) returns uuid
language sql stable as $$
  select case when p_table = any (string_to_array(current_setting('app.chat_tables', true), ','))
    then public.current_chat_team() end
$$;

drop policy "chat reads the chat team's projects" on public.projects;
drop policy "chat reads the chat team's tasks" on public.tasks;
drop policy "chat reads the chat team's notes" on public.notes;
drop policy "chat reads the chat team's activity" on public.activity_log;

create policy "chat reads the chat team's projects" on public.projects
  for select to chat_reader using (team_id = public.chat_team_for('projects'));
create policy "chat reads the chat team's tasks" on public.tasks
  for select to chat_reader using (team_id = public.chat_team_for('tasks'));
create policy "chat reads the chat team's notes" on public.notes
  for select to chat_reader using (team_id = public.chat_team_for('notes'));
create policy "chat reads the chat team's activity" on public.activity_log
  for select to chat_reader using (team_id = public.chat_team_for('activity_log'));
