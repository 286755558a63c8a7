-- Organization names become unique on name_key (NFKC, invisible characters removed, case and
-- Unicode TR39 confusables folded), computed by the application: SQL cannot compute the skeleton.
-- Existing rows get the column default, a unique placeholder (U+200B and a random uuid, evaluated per
-- row), so the index builds whatever the names; lib/organizations/name-key.ts replaces every
-- placeholder with the computed key before any name is compared (recomputePendingNameKeys).
DROP INDEX "organizations_name_lower_key";--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "name_key" text DEFAULT (chr(8203) || gen_random_uuid()::text) NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "organizations_name_key_key" ON "organizations" USING btree ("name_key");--> statement-breakpoint
CREATE INDEX "organizations_name_key_pending_idx" ON "organizations" USING btree ("id") WHERE left("organizations"."name_key", 1) = chr(8203);