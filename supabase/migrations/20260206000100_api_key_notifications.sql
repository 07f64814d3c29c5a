-- Every app instance keeps the keys it has verified in memory. Any change of a key other than
-- last_used_at (revoke, roll, expiry, scopes, delete), whichever path makes it (a route, plain SQL,
-- a migration), notifies the channel api_key_changed with the key's id, and every listening
-- instance forgets that key. The payload is the id, not the hash: any role may LISTEN.
create function public.notify_api_key_changed() returns trigger
language plpgsql as $$
begin
  perform pg_notify('api_key_changed', old.id::text);
  return null;
end;
$$;
revoke execute on function public.notify_api_key_changed() from public;

create trigger api_keys_notify_update after update on public.api_keys
  for each row
  when ((to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at'))
  execute function public.notify_api_key_changed();

create trigger api_keys_notify_delete after delete on public.api_keys
  for each row execute function public.notify_api_key_changed();

-- Rate limits are leased in blocks: an instance claims up to `granted` requests of the window at
-- once (never past the limit) and serves them from memory; `count` is what all claims took.
alter table public.rate_limits add column granted integer not null default 0;
comment on column public.rate_limits.granted is 'Requests granted by the latest claim of this window (count includes them).';
