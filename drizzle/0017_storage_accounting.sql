CREATE TABLE "generated_documents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"case_id" uuid,
	"kind" text NOT NULL,
	"object_key" text NOT NULL,
	"bytes" bigint NOT NULL,
	"fingerprint" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "row_bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The rows already imported count too: their JSON as stored (close to what the importers count,
-- the JSON of each item's content) plus the measured per-item overhead (ROW_OVERHEAD_BYTES).
UPDATE "cases" SET "row_bytes" =
  coalesce((SELECT sum(octet_length(row_to_json(e)::text) + 440) FROM "emails" e WHERE e."case_id" = "cases"."id"), 0)
  + coalesce((SELECT sum(octet_length(row_to_json(m)::text) + 420) FROM "network_messages" m WHERE m."case_id" = "cases"."id"), 0)
  + coalesce((SELECT sum(octet_length(row_to_json(t)::text) + 300) FROM "support_tickets" t WHERE t."case_id" = "cases"."id"), 0)
  + coalesce((SELECT sum(octet_length(row_to_json(n)::text) + 300) FROM "device_notes" n WHERE n."case_id" = "cases"."id"), 0);--> statement-breakpoint
ALTER TABLE "generated_documents" ADD CONSTRAINT "generated_documents_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "generated_documents_fingerprint_idx" ON "generated_documents" USING btree ("organization_id","fingerprint","expires_at");--> statement-breakpoint
CREATE INDEX "generated_documents_expiry_idx" ON "generated_documents" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "storage_reservations_expiry_idx" ON "storage_reservations" USING btree ("expires_at");