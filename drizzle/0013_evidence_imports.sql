CREATE TABLE "evidence_imports" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"case_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"file_name" text NOT NULL,
	"content_type" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"profile" text,
	"object_key" text NOT NULL,
	"sha256" text,
	"status" text DEFAULT 'awaiting_upload' NOT NULL,
	"bytes_read" bigint DEFAULT 0 NOT NULL,
	"items_read" integer DEFAULT 0 NOT NULL,
	"items_imported" integer DEFAULT 0 NOT NULL,
	"items_skipped" integer DEFAULT 0 NOT NULL,
	"error_code" text,
	"error_message" text,
	"error_item_index" integer,
	"lease_until" timestamp with time zone,
	"created_by_id" uuid,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD CONSTRAINT "evidence_imports_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD CONSTRAINT "evidence_imports_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD CONSTRAINT "evidence_imports_created_by_id_users_id_fk" FOREIGN KEY ("created_by_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "evidence_imports_case_idx" ON "evidence_imports" USING btree ("case_id","created_at");--> statement-breakpoint
CREATE INDEX "evidence_imports_pending_idx" ON "evidence_imports" USING btree ("status") WHERE "evidence_imports"."status" in ('queued', 'running');