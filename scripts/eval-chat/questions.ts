/**
 * Questions over the demo data (supabase/seed.sql, the "Demo Team"), each with the result set a
 * right answer's final query returns, and one reference statement that returns it. Dates in the
 * seed are relative to the day it runs, so no expected value is a date. The asker is the demo
 * user, Dana Demo ("me").
 */
export interface EvalQuestion {
  question: string
  /** The rows, in any order; the answer may have more columns, in any order. */
  expected: unknown[][]
  /** A statement that answers it (documents the intent; the harness test replays it). */
  reference: string
}

export const evalQuestions: EvalQuestion[] = [
  { question: 'How many tasks are there in total?', expected: [[10]], reference: 'select count(*) from tasks' },
  { question: 'How many projects are there?', expected: [[3]], reference: 'select count(*) from projects' },
  { question: 'How many notes are there?', expected: [[3]], reference: 'select count(*) from notes' },
  {
    question: 'How many open tasks (not done) does the Website relaunch project have?',
    expected: [[3]],
    reference: `select count(*) from tasks t join projects p on p.id = t.project_id where p.name = 'Website relaunch' and t.status <> 'done'`,
  },
  { question: 'How many tasks are done?', expected: [[3]], reference: `select count(*) from tasks where status = 'done'` },
  {
    question: 'How many tasks are there in each status?',
    expected: [['done', 3], ['in_progress', 2], ['todo', 5]],
    reference: 'select status, count(*) from tasks group by status',
  },
  {
    question: 'How many tasks does each project have? Give the project name and the count.',
    expected: [['Website relaunch', 4], ['Mobile app', 4], ['Office move', 1]],
    reference: 'select p.name, count(t.id) from projects p join tasks t on t.project_id = p.id group by p.name',
  },
  { question: 'Which projects are archived?', expected: [['Office move']], reference: `select name from projects where status = 'archived'` },
  { question: 'Which projects are active?', expected: [['Website relaunch'], ['Mobile app']], reference: `select name from projects where status = 'active'` },
  {
    question: 'List the titles of the tasks that are in progress.',
    expected: [['Write the homepage copy'], ['Design the onboarding screens']],
    reference: `select title from tasks where status = 'in_progress'`,
  },
  { question: 'Which task has priority 1, the highest?', expected: [['Launch checklist']], reference: 'select title from tasks where priority = 1' },
  {
    question: 'Which tasks have no assignee?',
    expected: [['Push notifications'], ['Renew the team offsite booking']],
    reference: 'select title from tasks where assignee_id is null',
  },
  {
    question: 'Which tasks do not belong to any project?',
    expected: [['Renew the team offsite booking']],
    reference: 'select title from tasks where project_id is null',
  },
  {
    question: 'How many tasks are assigned to someone other than me?',
    expected: [[4]],
    reference: `select count(*) from tasks where assignee_id <> '00000000-0000-4000-8000-000000000001'`,
  },
  {
    question: 'How many open tasks (not done) are assigned to me?',
    expected: [[3]],
    reference: `select count(*) from tasks where assignee_id = '00000000-0000-4000-8000-000000000001' and status <> 'done'`,
  },
  {
    question: 'What is the average priority of all tasks?',
    expected: [[2.7]],
    reference: 'select avg(priority) from tasks',
  },
  {
    question: 'List the titles of the overdue tasks: due before today and not done.',
    expected: [],
    reference: `select title from tasks where due_date < current_date and status <> 'done'`,
  },
  {
    question: 'Which tasks that are not done are due within the next 7 days (from today up to and including 7 days from now)?',
    expected: [['Write the homepage copy'], ['Pick the hero images'], ['Design the onboarding screens']],
    reference: `select title from tasks where status <> 'done' and due_date between current_date and current_date + 7`,
  },
  {
    question: 'Which notes belong to the Mobile app project?',
    expected: [['Release plan']],
    reference: `select n.title from notes n join projects p on p.id = n.project_id where p.name = 'Mobile app'`,
  },
  { question: 'Which notes are not attached to any project?', expected: [['Team offsite ideas']], reference: 'select title from notes where project_id is null' },
  { question: 'How many tasks have priority 2?', expected: [[4]], reference: 'select count(*) from tasks where priority = 2' },
  {
    question: 'How many done tasks does the Office move project have?',
    expected: [[1]],
    reference: `select count(*) from tasks t join projects p on p.id = t.project_id where p.name = 'Office move' and t.status = 'done'`,
  },
  {
    question: 'What are the titles of the tasks in the Mobile app project?',
    expected: [['Design the onboarding screens'], ['Push notifications'], ['App store listing'], ['Crash reporting']],
    reference: `select t.title from tasks t join projects p on p.id = t.project_id where p.name = 'Mobile app'`,
  },
  {
    question: 'Which task has the latest due date?',
    expected: [['Renew the team offsite booking']],
    reference: 'select title from tasks where due_date is not null order by due_date desc limit 1',
  },
  {
    question: 'Which done task was completed most recently?',
    expected: [['Set up analytics']],
    reference: `select title from tasks where status = 'done' order by completed_at desc limit 1`,
  },
  { question: 'How many tasks have a due date?', expected: [[9]], reference: 'select count(*) from tasks where due_date is not null' },
  {
    question: 'How many tasks are still todo with priority 3 or a larger number (less urgent)?',
    expected: [[4]],
    reference: `select count(*) from tasks where status = 'todo' and priority >= 3`,
  },
  {
    question: 'How many projects have at least one task that is not done?',
    expected: [[2]],
    reference: `select count(distinct project_id) from tasks where status <> 'done' and project_id is not null`,
  },
  {
    question: 'Which project does the task "Crash reporting" belong to?',
    expected: [['Mobile app']],
    reference: `select p.name from tasks t join projects p on p.id = t.project_id where t.title = 'Crash reporting'`,
  },
  {
    question: 'What is the description of the Mobile app project?',
    expected: [['First release of the iOS and Android apps.']],
    reference: `select description from projects where name = 'Mobile app'`,
  },
  {
    question: 'Which tasks of the Website relaunch project are assigned to me?',
    expected: [['Write the homepage copy'], ['Launch checklist']],
    reference: `select t.title from tasks t join projects p on p.id = t.project_id where p.name = 'Website relaunch' and t.assignee_id = '00000000-0000-4000-8000-000000000001'`,
  },
  {
    question: 'How many notes does each project have? Include only projects that have notes.',
    expected: [['Website relaunch', 1], ['Mobile app', 1]],
    reference: 'select p.name, count(*) from notes n join projects p on p.id = n.project_id group by p.name',
  },
]
