-- Members read their team's API keys (name, prefix, dates), never the key hash: defence in depth
-- beside the routes, which never return it. Column privileges narrow the table-wide grant of
-- 20260102000000_api_keys.sql.
revoke select on public.api_keys from authenticated;
grant select (id, team_id, created_by, name, key_prefix, last_used_at, expires_at, revoked_at, created_at)
  on public.api_keys to authenticated;
