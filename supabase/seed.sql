-- Demo data for the embedded default (applied on first start when no user exists).
-- Sign in as demo@example.com with the password demo-password.

insert into auth.users (id, email, encrypted_password) values
  ('00000000-0000-4000-8000-000000000001', 'demo@example.com',
   '$scrypt$n=16384,r=8,p=1$JuA0QBDt1dm+f+WQP5BiWg$YeErVfDTP7iSMUjZ2y40PNEyEJJ62ZtPCtR6BMA7iRUDy+HMmTC930e3Y2ppos0U3+ydNFnR7kTgfHhQmTvkug'),
  ('00000000-0000-4000-8000-000000000002', 'sam@example.com',
   '$scrypt$n=16384,r=8,p=1$JuA0QBDt1dm+f+WQP5BiWg$YeErVfDTP7iSMUjZ2y40PNEyEJJ62ZtPCtR6BMA7iRUDy+HMmTC930e3Y2ppos0U3+ydNFnR7kTgfHhQmTvkug');

insert into public.profiles (id, email, name) values
  ('00000000-0000-4000-8000-000000000001', 'demo@example.com', 'Dana Demo'),
  ('00000000-0000-4000-8000-000000000002', 'sam@example.com', 'Sam Member');

insert into public.teams (id, name) values
  ('00000000-0000-4000-8000-000000000010', 'Demo Team');

insert into public.team_members (team_id, user_id, role) values
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'owner'),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000002', 'member');

-- Example domain rows for the demo team, created by Dana Demo: the activity log (and each record's
-- History) names her as their author, as their created_by does (the seed runs in one transaction).
select set_config('app.actor_id', '00000000-0000-4000-8000-000000000001', true);
insert into public.projects (id, team_id, created_by, name, description, status) values
  ('00000000-0000-4000-8000-000000000101', '00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001',
   'Website relaunch', 'New marketing site with the updated brand.', 'active'),
  ('00000000-0000-4000-8000-000000000102', '00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001',
   'Mobile app', 'First release of the iOS and Android apps.', 'active'),
  ('00000000-0000-4000-8000-000000000103', '00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001',
   'Office move', 'Move to the new office in spring.', 'archived');

insert into public.tasks (team_id, created_by, title, status, priority, project_id, assignee_id, due_date, completed_at) values
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Write the homepage copy', 'in_progress', 2,
   '00000000-0000-4000-8000-000000000101', '00000000-0000-4000-8000-000000000001', current_date + 3, null),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Pick the hero images', 'todo', 3,
   '00000000-0000-4000-8000-000000000101', '00000000-0000-4000-8000-000000000002', current_date + 7, null),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Set up analytics', 'done', 3,
   '00000000-0000-4000-8000-000000000101', '00000000-0000-4000-8000-000000000002', current_date - 2, now() - interval '1 day'),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Launch checklist', 'todo', 1,
   '00000000-0000-4000-8000-000000000101', '00000000-0000-4000-8000-000000000001', current_date + 14, null),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Design the onboarding screens', 'in_progress', 2,
   '00000000-0000-4000-8000-000000000102', '00000000-0000-4000-8000-000000000002', current_date + 5, null),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Push notifications', 'todo', 4,
   '00000000-0000-4000-8000-000000000102', null, null, null),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'App store listing', 'todo', 3,
   '00000000-0000-4000-8000-000000000102', '00000000-0000-4000-8000-000000000001', current_date + 21, null),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Crash reporting', 'done', 2,
   '00000000-0000-4000-8000-000000000102', '00000000-0000-4000-8000-000000000002', current_date - 5, now() - interval '4 days'),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Book the movers', 'done', 2,
   '00000000-0000-4000-8000-000000000103', '00000000-0000-4000-8000-000000000001', current_date - 30, now() - interval '31 days'),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Renew the team offsite booking', 'todo', 5,
   null, null, current_date + 60, null);

insert into public.notes (team_id, created_by, title, body, project_id) values
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Brand guidelines',
   'Use the new palette and the rounded logo on every page.', '00000000-0000-4000-8000-000000000101'),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Release plan',
   'Beta in four weeks, public release two weeks later.', '00000000-0000-4000-8000-000000000102'),
  ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000001', 'Team offsite ideas',
   'A day in the mountains, or a cooking class.', null);
