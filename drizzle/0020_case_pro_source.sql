ALTER TABLE "cases" ADD COLUMN "pro_source" text;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "pro_until" timestamp with time zone;--> statement-breakpoint
-- Where each Pro case's Pro came from: a paid upgrade, else the plan that included it. Plan-Pro cases
-- of organizations no longer on a Pro-including plan in force are ended (and audited) by maintenance.
UPDATE "cases" SET "pro_source" = 'paid' WHERE EXISTS (
  SELECT 1 FROM "billing_rows" b WHERE b."case_id" = "cases"."id" AND b."sku_key" = 'case_pro_upgrade' AND b."status" = 'paid'
);--> statement-breakpoint
UPDATE "cases" SET "pro_source" = 'plan' WHERE "pro_source" IS NULL AND EXISTS (
  SELECT 1 FROM "billing_rows" b WHERE b."case_id" = "cases"."id" AND b."sku_key" = 'case_pro_upgrade' AND b."status" = 'plan_included'
);--> statement-breakpoint
-- The plan-included row gets a charge key of its own, so a case that later leaves the plan can still
-- be charged its Pro upgrade under case-pro-upgrade:<caseId>.
UPDATE "billing_rows" SET "charge_key" = 'case-pro-plan:' || "case_id", "idempotency_key" = 'case-pro-plan:' || "case_id" || ':0'
WHERE "sku_key" = 'case_pro_upgrade' AND "status" = 'plan_included' AND "case_id" IS NOT NULL;
