CREATE TABLE "custody_exports" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"case_id" uuid NOT NULL,
	"requested_by_id" uuid,
	"status" text NOT NULL,
	"covers" text NOT NULL,
	"as_of" timestamp with time zone NOT NULL,
	"chain_head_sequence" bigint NOT NULL,
	"chain_head_hash" text NOT NULL,
	"item_total" bigint NOT NULL,
	"event_total" bigint NOT NULL,
	"items_written" bigint DEFAULT 0 NOT NULL,
	"events_written" bigint DEFAULT 0 NOT NULL,
	"item_cursor" text,
	"items_done" integer DEFAULT 0 NOT NULL,
	"event_cursor" bigint DEFAULT 0 NOT NULL,
	"volumes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_until" timestamp with time zone,
	"error" jsonb,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "custody_exports" ADD CONSTRAINT "custody_exports_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "custody_exports_case_idx" ON "custody_exports" USING btree ("case_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "custody_exports_one_pending_idx" ON "custody_exports" USING btree ("case_id","covers") WHERE "custody_exports"."status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "custody_exports_pending_idx" ON "custody_exports" USING btree ("status") WHERE "custody_exports"."status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "device_notes_case_custody_idx" ON "device_notes" USING btree ("case_id","created_at","id");--> statement-breakpoint
CREATE INDEX "emails_case_custody_idx" ON "emails" USING btree ("case_id","created_at","id");--> statement-breakpoint
CREATE INDEX "network_messages_case_custody_idx" ON "network_messages" USING btree ("case_id","created_at","id");--> statement-breakpoint
CREATE INDEX "support_tickets_case_custody_idx" ON "support_tickets" USING btree ("case_id","created_at","id");