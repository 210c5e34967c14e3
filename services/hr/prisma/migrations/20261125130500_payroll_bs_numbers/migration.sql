-- AlterTable
ALTER TABLE "payroll_settings" ADD COLUMN     "bs_numbers" JSONB NOT NULL DEFAULT '{}';
