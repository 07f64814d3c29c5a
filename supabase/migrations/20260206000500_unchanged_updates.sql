-- An update that changes nothing does nothing: no new updated_at, no activity entry, no webhook
-- event, the same ETag. A BEFORE UPDATE trigger skips the row (returns null) when the new row
-- equals the old one apart from updated_at; the AFTER triggers (activity, webhooks) then never
-- fire for it. Triggers of one kind fire in name order: skip_unchanged_update runs before
-- touch_updated_at, which would otherwise make every row differ.
create function public.skip_unchanged_update() returns trigger
language plpgsql as $$
begin
  if (to_jsonb(new) - 'updated_at') = (to_jsonb(old) - 'updated_at') then
    return null;
  end if;
  return new;
end $$;
revoke execute on function public.skip_unchanged_update() from public;

-- Every table with updated_at (enable_updated_at, also called for tables registered later) gets both triggers.
create or replace function public.enable_updated_at(table_name text) returns void
language plpgsql as $$
begin
  execute format('alter table public.%I add column if not exists updated_at timestamptz(3) not null default date_trunc(''milliseconds'', now())', table_name);
  execute format('alter table public.%I alter column updated_at type timestamptz(3), alter column updated_at set default date_trunc(''milliseconds'', now())', table_name);
  execute format('comment on column public.%I.updated_at is %L', table_name, 'When the record last changed; set by the database.');
  execute format('drop trigger if exists touch_updated_at on public.%I', table_name);
  execute format(
    'create trigger touch_updated_at before update on public.%I for each row execute function public.touch_updated_at()',
    table_name
  );
  execute format('drop trigger if exists skip_unchanged_update on public.%I', table_name);
  execute format(
    'create trigger skip_unchanged_update before update on public.%I for each row execute function public.skip_unchanged_update()',
    table_name
  );
end $$;
revoke execute on function public.enable_updated_at(text) from public;

select public.enable_updated_at(c.relname)
from pg_trigger t
join pg_class c on c.oid = t.tgrelid
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' and t.tgname = 'touch_updated_at';
