-- Mirror users carry their department and their manager's directory id.
ALTER TABLE "directory_users" ADD COLUMN "department" TEXT, ADD COLUMN "manager" TEXT;

-- Onboardings: the job title, and the manager's e-mail as desk had it at creation (their
-- directory account is found by it when the account is created).
ALTER TABLE "onboardings" ADD COLUMN "job_title" TEXT, ADD COLUMN "manager_email" TEXT;

-- Where the next delta of a directory with a change counter (AD's uSNChanged) starts.
ALTER TABLE "sync_runs" ADD COLUMN "directory_cursor" TEXT;
