-- A NOTIFY sent inside a transaction holds Postgres's notification lock from just before the commit
-- until the commit is on disk, so every transaction that notifies commits one after the other, each
-- waiting for its own WAL flush: single-row inserts through the change feed's trigger ran at 1,232 a
-- second with the notification and 1,899 without it (pgbench, 8 clients; 1,849 and 2,031 with
-- synchronous_commit off, where no flush is waited for).
--
-- The app's writes set `app.notify_after_commit` (with their audit context) and announce the events
-- themselves once committed, one notification for all the writes of a few milliseconds, sent in a
-- transaction of its own that writes nothing. Every other write (plain SQL, jobs, a migration) is
-- notified at its commit as before.
create or replace function public.notify_record_events() returns trigger
language plpgsql security definer set search_path = public as $$
begin
  if coalesce(current_setting('app.notify_after_commit', true), '') <> 'on' then
    perform pg_notify('record_events', '');
  end if;
  return null;
end $$;
revoke execute on function public.notify_record_events() from public;
