-- Wakes the webhook workers: a statement that queues deliveries (a record trigger, an invitation, a
-- test event) or makes one due again (a resend, a retry with no delay) sends one notification on
-- `webhook_queued`, delivered at its commit. Postgres folds identical notifications of one
-- transaction into one, so a bulk write costs one. The workers still poll as a fallback.

create function public.notify_webhook_queued() returns trigger
language plpgsql security definer set search_path = public as $$
begin
  if exists (select 1 from changed where status = 'pending' and next_attempt_at <= now()) then
    perform pg_notify('webhook_queued', '');
  end if;
  return null;
end $$;

revoke execute on function public.notify_webhook_queued() from public;

create trigger webhook_queued_on_insert after insert on public.webhook_deliveries
  referencing new table as changed
  for each statement execute function public.notify_webhook_queued();

create trigger webhook_queued_on_update after update on public.webhook_deliveries
  referencing new table as changed
  for each statement execute function public.notify_webhook_queued();
