-- Keys an admin can manage: a roll links the new key to the key it replaced (rolled_from; the
-- replaced key's rolled_to is the key whose rolled_from names it), and an endpoint disabled
-- because the key that made it was revoked or expired says so in disabled_reason.
alter table public.api_keys add column rolled_from uuid references public.api_keys (id) on delete set null;
comment on column public.api_keys.rolled_from is 'The key this one replaced when it was made by a roll (null: created, not rolled).';
create index api_keys_rolled_from_idx on public.api_keys (rolled_from) where rolled_from is not null;

-- the sweep that disables endpoints of keys that expired reads endpoints by their key
create index webhook_endpoints_created_by_api_key_id_idx on public.webhook_endpoints (created_by_api_key_id)
  where created_by_api_key_id is not null;
