-- Agents and automations:
-- * activity source 'mcp': writes an AI agent made through /mcp with a team API key
--   (source_ref and api_key_id: the key's id; actor: the key's creator).
-- * webhook_endpoints.created_by_api_key_id: the key that made an endpoint through
--   /api/v1/webhook-endpoints (null: made in Settings > Webhooks). Keys are revoked, never
--   deleted; set null keeps the endpoint should one ever be.
-- * register_domain_table('<table>'): everything a domain table needs, in one idempotent call.

alter table public.activity_log drop constraint activity_log_source_check;
alter table public.activity_log add constraint activity_log_source_check
  check (source in ('web', 'api', 'chat', 'mcp', 'system'));
comment on column public.activity_log.source_ref is 'The chat id for writes of the chat assistant; the API key id for writes of an MCP agent.';

alter table public.webhook_endpoints add column created_by_api_key_id uuid references public.api_keys (id) on delete set null;
comment on column public.webhook_endpoints.created_by_api_key_id is 'The API key that subscribed this endpoint (null: made by a person in Settings > Webhooks).';

-- A domain table is a table of schema public with team_id, created_by and created_at. This gives
-- it, each piece only when missing (so a second call, or a call on a table that has it all
-- already, changes nothing):
-- * row-level security and the members' read policy (the server writes through the audited client),
-- * updated_at with its trigger (enable_updated_at) and the (team_id, created_at) and
--   (team_id, updated_at, id) indexes the API's default order and polling use,
-- * the activity-log trigger (enable_activity_log) and the record-events trigger (enable_record_webhooks),
-- * SELECT for chat_reader with the chat's team policy (chat_team_for).
-- The app reads the catalog at start: the table is then in the registry with a domain table's
-- default permissions (<table>.view/create/update/delete), the public API, OpenAPI, the data
-- pages, the chat's tools and the MCP tools.
create function public.register_domain_table(table_name text) returns void
language plpgsql as $$
declare
  target regclass := to_regclass(format('public.%I', table_name));
  members_policy text := format('members read their team''s %s', table_name);
  chat_policy text := format('chat reads the chat team''s %s', table_name);
begin
  if target is null then
    raise exception 'register_domain_table: no table public.% exists', table_name;
  end if;
  if (select count(*) from pg_attribute
      where attrelid = target and attnum > 0 and not attisdropped
        and attname in ('team_id', 'created_by', 'created_at')) <> 3 then
    raise exception 'register_domain_table: public.% needs the columns team_id, created_by and created_at', table_name;
  end if;
  -- "webhooks" is an API key scope, not a table
  if table_name = 'webhooks' then
    raise exception 'register_domain_table: the name webhooks is reserved';
  end if;

  execute format('alter table public.%I enable row level security', table_name);
  if not exists (select 1 from pg_policies where schemaname = 'public' and tablename = table_name and policyname = members_policy) then
    execute format('create policy %I on public.%I for select to authenticated using (public.is_team_member(team_id))', members_policy, table_name);
  end if;
  execute format('grant select on public.%I to authenticated', table_name);

  if not exists (select 1 from pg_attribute where attrelid = target and attname = 'updated_at' and not attisdropped)
    or not exists (select 1 from pg_trigger where tgrelid = target and tgname = 'touch_updated_at') then
    perform public.enable_updated_at(table_name);
  end if;
  execute format('create index if not exists %I on public.%I (team_id, created_at desc)', table_name || '_team_id_created_at_idx', table_name);
  execute format('create index if not exists %I on public.%I (team_id, updated_at, id)', table_name || '_team_id_updated_at_idx', table_name);

  if not exists (select 1 from pg_trigger where tgrelid = target and tgname = 'activity_log') then
    perform public.enable_activity_log(table_name);
  end if;
  if not exists (select 1 from pg_trigger where tgrelid = target and tgname = 'record_webhooks') then
    perform public.enable_record_webhooks(table_name);
  end if;

  execute format('grant select on public.%I to chat_reader', table_name);
  if not exists (select 1 from pg_policies where schemaname = 'public' and tablename = table_name and policyname = chat_policy) then
    execute format('create policy %I on public.%I for select to chat_reader using (team_id = public.chat_team_for(%L))', chat_policy, table_name, table_name);
  end if;
end $$;
revoke execute on function public.register_domain_table(text) from public;

-- The example tables have every piece already (their migrations made each by hand): these calls
-- change nothing, and show that the function describes what those migrations did.
select public.register_domain_table(table_name) from (values ('projects'), ('tasks'), ('notes')) as domain (table_name);
