-- Key permissions: each key carries its scopes, a map from a domain table name, or "*" for
-- every domain table (present and future), to "read" or "write" (write includes read). The most
-- specific entry wins: { "*": "read", "tasks": "write" } writes tasks and reads the rest.
-- Keys made before scopes existed keep what they could do: every table, read and write.
alter table public.api_keys
  add column scopes jsonb not null default '{"*": "write"}'::jsonb
  check (jsonb_typeof(scopes) = 'object' and scopes <> '{}'::jsonb);
comment on column public.api_keys.scopes is 'Table name or "*" to "read" or "write"; the most specific entry wins.';
