-- The IANA time zone whose local times a contract's timesheets record; every contract so far was
-- Berlin's.
ALTER TABLE "contracts" ADD COLUMN "time_zone" TEXT NOT NULL DEFAULT 'Europe/Berlin';

-- Written by hand (Prisma's schema cannot express CHECK constraints): an entry's minutes are the real
-- minutes from start to end in that zone, which differ from the wall-clock difference on the days
-- the clocks change (00:00-24:00 is 1380 or 1500 minutes then).
ALTER TABLE "timesheet_entries" DROP CONSTRAINT "timesheet_entries_minutes_check";
ALTER TABLE "timesheet_entries" ADD CONSTRAINT "timesheet_entries_minutes_check"
    CHECK ("start_minute" >= 0 AND "end_minute" <= 1440 AND "start_minute" < "end_minute" AND "minutes" > 0);
