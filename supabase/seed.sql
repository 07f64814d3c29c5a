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
