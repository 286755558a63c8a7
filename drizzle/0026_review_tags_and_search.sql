CREATE TABLE "device_note_tags" (
	"note_id" uuid NOT NULL,
	"id" uuid PRIMARY KEY NOT NULL,
	"tag_id" uuid NOT NULL,
	"added_by" text NOT NULL,
	"added_by_id" text,
	"removed_at" timestamp with time zone,
	"removed_by" text,
	"removed_by_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "support_ticket_tags" (
	"ticket_id" uuid NOT NULL,
	"id" uuid PRIMARY KEY NOT NULL,
	"tag_id" uuid NOT NULL,
	"added_by" text NOT NULL,
	"added_by_id" text,
	"removed_at" timestamp with time zone,
	"removed_by" text,
	"removed_by_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tagging_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"case_id" uuid NOT NULL,
	"created_by_id" uuid,
	"side" text NOT NULL,
	"add" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"remove" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"filter" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"total_items" integer,
	"processed_items" integer DEFAULT 0 NOT NULL,
	"added_links" integer DEFAULT 0 NOT NULL,
	"removed_links" integer DEFAULT 0 NOT NULL,
	"error" text,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
DROP INDEX "email_tags_tag_idx";--> statement-breakpoint
DROP INDEX "network_conversation_tags_tag_idx";--> statement-breakpoint
ALTER TABLE "email_tags" DROP CONSTRAINT "email_tags_email_id_tag_id_pk";--> statement-breakpoint
ALTER TABLE "network_conversation_tags" DROP CONSTRAINT "network_conversation_tags_conversation_id_tag_id_pk";--> statement-breakpoint
ALTER TABLE "device_notes" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', title || ' ' || coalesce(summary, '') || ' ' || left(regexp_replace(coalesce(html_content, ''), '<[^>]*>', ' ', 'g'), 200000))) STORED NOT NULL;--> statement-breakpoint
-- Rows from before this migration get an id here; new rows get theirs from the service.
ALTER TABLE "email_tags" ADD COLUMN "id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL;--> statement-breakpoint
ALTER TABLE "email_tags" ALTER COLUMN "id" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "emails" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(subject, '') || ' ' || left(coalesce(body, ''), 200000))) STORED NOT NULL;--> statement-breakpoint
-- Rows from before this migration get an id here; new rows get theirs from the service.
ALTER TABLE "network_conversation_tags" ADD COLUMN "id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ALTER COLUMN "id" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ADD COLUMN "added_by" text DEFAULT 'user' NOT NULL;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ALTER COLUMN "added_by" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ADD COLUMN "added_by_id" text;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ADD COLUMN "removed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ADD COLUMN "removed_by" text;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ADD COLUMN "removed_by_id" text;--> statement-breakpoint
ALTER TABLE "tags" ADD COLUMN "created_by_id" uuid;--> statement-breakpoint
ALTER TABLE "device_note_tags" ADD CONSTRAINT "device_note_tags_note_id_device_notes_id_fk" FOREIGN KEY ("note_id") REFERENCES "public"."device_notes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_note_tags" ADD CONSTRAINT "device_note_tags_tag_id_tags_id_fk" FOREIGN KEY ("tag_id") REFERENCES "public"."tags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_ticket_tags" ADD CONSTRAINT "support_ticket_tags_ticket_id_support_tickets_id_fk" FOREIGN KEY ("ticket_id") REFERENCES "public"."support_tickets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_ticket_tags" ADD CONSTRAINT "support_ticket_tags_tag_id_tags_id_fk" FOREIGN KEY ("tag_id") REFERENCES "public"."tags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tagging_jobs" ADD CONSTRAINT "tagging_jobs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tagging_jobs" ADD CONSTRAINT "tagging_jobs_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tagging_jobs" ADD CONSTRAINT "tagging_jobs_created_by_id_users_id_fk" FOREIGN KEY ("created_by_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_note_tags_note_idx" ON "device_note_tags" USING btree ("note_id");--> statement-breakpoint
CREATE UNIQUE INDEX "device_note_tags_active_key" ON "device_note_tags" USING btree ("note_id","tag_id") WHERE removed_at is null;--> statement-breakpoint
CREATE INDEX "device_note_tags_tag_active_idx" ON "device_note_tags" USING btree ("tag_id","note_id") WHERE removed_at is null;--> statement-breakpoint
CREATE INDEX "support_ticket_tags_ticket_idx" ON "support_ticket_tags" USING btree ("ticket_id");--> statement-breakpoint
CREATE UNIQUE INDEX "support_ticket_tags_active_key" ON "support_ticket_tags" USING btree ("ticket_id","tag_id") WHERE removed_at is null;--> statement-breakpoint
CREATE INDEX "support_ticket_tags_tag_active_idx" ON "support_ticket_tags" USING btree ("tag_id","ticket_id") WHERE removed_at is null;--> statement-breakpoint
CREATE INDEX "tagging_jobs_case_idx" ON "tagging_jobs" USING btree ("case_id","created_at");--> statement-breakpoint
ALTER TABLE "tags" ADD CONSTRAINT "tags_created_by_id_users_id_fk" FOREIGN KEY ("created_by_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_notes_search_idx" ON "device_notes" USING gin ("search");--> statement-breakpoint
CREATE INDEX "email_tags_email_idx" ON "email_tags" USING btree ("email_id");--> statement-breakpoint
CREATE UNIQUE INDEX "email_tags_active_key" ON "email_tags" USING btree ("email_id","tag_id") WHERE removed_at is null;--> statement-breakpoint
CREATE INDEX "email_tags_tag_active_idx" ON "email_tags" USING btree ("tag_id","email_id") WHERE removed_at is null;--> statement-breakpoint
CREATE INDEX "emails_search_idx" ON "emails" USING gin ("search") WITH (gin_pending_list_limit=256);--> statement-breakpoint
CREATE INDEX "network_conversation_tags_conversation_idx" ON "network_conversation_tags" USING btree ("conversation_id");--> statement-breakpoint
CREATE UNIQUE INDEX "network_conversation_tags_active_key" ON "network_conversation_tags" USING btree ("conversation_id","tag_id") WHERE removed_at is null;--> statement-breakpoint
CREATE INDEX "network_conversation_tags_tag_active_idx" ON "network_conversation_tags" USING btree ("tag_id","conversation_id") WHERE removed_at is null;--> statement-breakpoint
CREATE INDEX "tags_case_idx" ON "tags" USING btree ("case_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tags_active_name_key" ON "tags" USING btree ("organization_id","type",coalesce(case_id, '00000000-0000-0000-0000-000000000000'::uuid),coalesce(creator_access_type, 'org'),coalesce(case when type = 'user' then created_by_id end, '00000000-0000-0000-0000-000000000000'::uuid),"name_lowercase") WHERE is_active;