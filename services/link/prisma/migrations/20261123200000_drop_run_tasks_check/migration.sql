-- The CHECK that a run task belongs to exactly one run (onboarding or offboarding) made the Prisma
-- schema engine (wasm, 8.1.0-2) trap while introspecting it, which failed the schema-drift check
-- at random. Prisma's schema cannot state CHECK constraints anyway; the invariant is kept where
-- run tasks are written: only as the nested `tasks` of the run they belong to (onboardings and
-- offboardings repositories), never on their own.
ALTER TABLE "run_tasks" DROP CONSTRAINT "run_tasks_one_run_check";
