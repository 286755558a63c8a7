-- PATCH /organization takes the postal address (its own column, not metadata) and records who
-- accepted the bank-linking terms next to when (set null if that user row is ever deleted).
ALTER TABLE "organizations" ADD COLUMN "address" jsonb;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "bank_linking_terms_accepted_by_id" uuid;--> statement-breakpoint
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_bank_linking_terms_accepted_by_id_users_id_fk" FOREIGN KEY ("bank_linking_terms_accepted_by_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;