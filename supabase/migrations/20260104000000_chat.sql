-- The AI chat assistant.
--
-- chats and chat_messages: team-scoped and user-owned; a row is visible only to its owner
-- while a member of its team. Only the server writes them (no write policies).
--
-- chat_reader: the no-login role the model's SQL runs as. It owns nothing, may SELECT only the
-- tables granted below, sees only rows of team_id = current_chat_team(), and may not execute
-- set_config, so a statement can change neither its team nor its role.
--
-- chat_gateway: on a Postgres server, the login role of the chat's own small connection pool.
-- It is no superuser, owns nothing, holds no privilege of its own (noinherit) and is a member
-- of chat_reader only: even after RESET ROLE a statement reaches nothing. The app sets its
-- password at start (server/utils/chat/query-pool.ts) unless CHAT_DATABASE_URL names another role.

do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'chat_reader') then
    begin
      create role chat_reader nologin noinherit;
    exception when duplicate_object or unique_violation then null;
    end;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'chat_gateway') then
    begin
      create role chat_gateway login noinherit nosuperuser nocreatedb nocreaterole noreplication;
    exception when duplicate_object or unique_violation then null;
    end;
  end if;
end $$;

grant chat_reader to chat_gateway;
grant usage on schema public to chat_reader;

-- The team the current chat query may see: a transaction-local setting the server sets
-- before it switches to chat_reader (which cannot call set_config itself).
create function public.current_chat_team() returns uuid
language sql stable as $$
  select nullif(current_setting('app.chat_team_id', true), '')::uuid
$$;

-- set_config would let a statement rewrite its own team setting or role: only the roles that
-- need it keep it (the app's own role, and Supabase's API roles, which set request.jwt.claims).
revoke execute on function pg_catalog.set_config(text, text, boolean) from public;
grant execute on function pg_catalog.set_config(text, text, boolean) to current_user;
do $$
declare
  role_name text;
begin
  foreach role_name in array array['anon', 'authenticated', 'service_role', 'authenticator', 'supabase_admin'] loop
    if exists (select 1 from pg_roles where rolname = role_name) then
      execute format('grant execute on function pg_catalog.set_config(text, text, boolean) to %I', role_name);
    end if;
  end loop;
end $$;

create table public.chats (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  user_id uuid not null references public.profiles (id) on delete cascade,
  title text not null default 'New chat' check (char_length(title) between 1 and 200),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index chats_team_id_user_id_updated_at_idx on public.chats (team_id, user_id, updated_at desc);
comment on table public.chats is 'One conversation with the assistant, owned by one user within one team.';

create table public.chat_messages (
  -- the AI SDK UIMessage id; unique within its chat
  id text not null,
  chat_id uuid not null references public.chats (id) on delete cascade,
  team_id uuid not null references public.teams (id) on delete cascade,
  user_id uuid not null references public.profiles (id) on delete cascade,
  -- the order of the conversation
  position bigint generated always as identity,
  role text not null check (role in ('user', 'assistant', 'system')),
  -- the UIMessage parts: text, tool calls with their input, approval and output
  parts jsonb not null default '[]'::jsonb,
  metadata jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (chat_id, id)
);
create index chat_messages_chat_id_position_idx on public.chat_messages (chat_id, position);
comment on table public.chat_messages is 'One UIMessage of a chat, tool calls and their outputs included.';

alter table public.chats enable row level security;
alter table public.chat_messages enable row level security;

create policy "owners read their chats while team members" on public.chats
  for select to authenticated using (user_id = auth.uid() and public.is_team_member(team_id));
create policy "owners read their chat messages while team members" on public.chat_messages
  for select to authenticated using (user_id = auth.uid() and public.is_team_member(team_id));
grant select on public.chats, public.chat_messages to authenticated;

-- Adding a table to chat: activity log, SELECT for chat_reader, and a SELECT policy
-- limited to the chat's team. The example tables already log their writes (their migration).
grant select on public.projects, public.tasks, public.notes, public.activity_log to chat_reader;

create policy "chat reads the chat team's projects" on public.projects
  for select to chat_reader using (team_id = public.current_chat_team());
create policy "chat reads the chat team's tasks" on public.tasks
  for select to chat_reader using (team_id = public.current_chat_team());
create policy "chat reads the chat team's notes" on public.notes
  for select to chat_reader using (team_id = public.current_chat_team());
create policy "chat reads the chat team's activity" on public.activity_log
  for select to chat_reader using (team_id = public.current_chat_team());
