ALTER TABLE "evidence_imports" ADD COLUMN "staging_key" text;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD COLUMN "staged_version" text;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD COLUMN "evidence_version" text;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD COLUMN "queued_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Imports waiting now keep their turn; of an organization's running imports all but its oldest
-- wait again (the index below allows one), to resume from their checkpoints.
UPDATE "evidence_imports" SET "queued_at" = "updated_at" WHERE "status" IN ('queued', 'running');--> statement-breakpoint
UPDATE "evidence_imports" SET "status" = 'queued', "lease_until" = NULL
  WHERE "status" = 'running' AND "id" NOT IN (
    SELECT DISTINCT ON ("organization_id") "id" FROM "evidence_imports" WHERE "status" = 'running'
    ORDER BY "organization_id", "started_at", "id"
  );--> statement-breakpoint
CREATE UNIQUE INDEX "evidence_imports_one_running_idx" ON "evidence_imports" USING btree ("organization_id") WHERE "evidence_imports"."status" = 'running';