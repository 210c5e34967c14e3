-- Written by hand (Prisma's schema cannot express CHECK constraints): the new timesheet category
-- `standby` (Rufbereitschaft: paid, but not working time under the ArbZG).
ALTER TABLE "timesheet_entries" DROP CONSTRAINT "timesheet_entries_category_check";
ALTER TABLE "timesheet_entries" ADD CONSTRAINT "timesheet_entries_category_check"
    CHECK ("category" IN ('normal', 'overtime', 'on_call', 'travel', 'training', 'standby'));
