-- Every app instance keeps the credentials it has verified (API keys, OAuth access tokens) in
-- memory as principals, each with whether the team's two-factor policy refuses the person it acts
-- for. Whatever changes that answer notifies credential_owner_changed, whichever path makes the
-- change (a route, plain SQL, a migration), and every listening instance forgets the principals
-- concerned: `user:<id>` when a person's verified factors or role in a team change, `team:<id>`
-- when a team's policy changes. The payload is an id, never a secret: any role may LISTEN.

create function public.notify_factor_owner_changed() returns trigger
language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform pg_notify('credential_owner_changed', 'user:' || old.user_id::text);
  end if;
  if tg_op in ('INSERT', 'UPDATE') and (tg_op = 'INSERT' or new.user_id is distinct from old.user_id) then
    perform pg_notify('credential_owner_changed', 'user:' || new.user_id::text);
  end if;
  return null;
end;
$$;
revoke execute on function public.notify_factor_owner_changed() from public;

-- a factor counts once verified: its verification, its removal, and (for completeness) a new row
create trigger auth_factors_notify_insert after insert on public.auth_factors
  for each row execute function public.notify_factor_owner_changed();
create trigger auth_factors_notify_update after update on public.auth_factors
  for each row
  when (old.verified_at is distinct from new.verified_at or old.user_id is distinct from new.user_id)
  execute function public.notify_factor_owner_changed();
create trigger auth_factors_notify_delete after delete on public.auth_factors
  for each row execute function public.notify_factor_owner_changed();

-- a member's role decides whether an "admins" policy covers them
create trigger team_members_notify_credential_owner after insert or update or delete on public.team_members
  for each row execute function public.notify_factor_owner_changed();

create function public.notify_team_policy_changed() returns trigger
language plpgsql as $$
begin
  perform pg_notify('credential_owner_changed', 'team:' || new.id::text);
  return null;
end;
$$;
revoke execute on function public.notify_team_policy_changed() from public;

create trigger teams_notify_policy_changed after update on public.teams
  for each row
  when (old.require_two_factor is distinct from new.require_two_factor
        or old.two_factor_grace_days is distinct from new.two_factor_grace_days
        or old.two_factor_enforced_from is distinct from new.two_factor_enforced_from)
  execute function public.notify_team_policy_changed();
