-- pg_stats and the extended-statistics views show sampled column values (most common values,
-- histograms) of every table a role may select from, so once ANALYZE has run they would show the
-- chat_reader role values of every team. Nothing but superusers and maintenance tools needs them:
-- PUBLIC loses them, so the database layer keeps the chat inside its team on its own.
-- Where the migrating role may not change pg_catalog's grants (a managed Postgres), this changes
-- nothing and the chat's SQL guard, which refuses every catalog read, remains the guard.
do $$
begin
  revoke select on pg_catalog.pg_stats, pg_catalog.pg_stats_ext, pg_catalog.pg_stats_ext_exprs from public;
exception when insufficient_privilege then
  raise notice 'pg_stats stays readable by PUBLIC: %', sqlerrm;
end $$;
