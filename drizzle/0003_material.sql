CREATE TABLE "attachments" (
	"id" uuid PRIMARY KEY NOT NULL,
	"email_id" uuid NOT NULL,
	"name" text NOT NULL,
	"provider_id" text NOT NULL,
	"converted_name" text,
	"converted_provider_id" text DEFAULT '' NOT NULL,
	"provider" text DEFAULT 's3' NOT NULL,
	"size" bigint NOT NULL,
	"transfer_state" integer,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "device_notes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"case_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"note_id" bigint NOT NULL,
	"title" text NOT NULL,
	"summary" text,
	"note_created_at" text,
	"note_modified_at" text,
	"html_content" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"attachment_keys" text[] DEFAULT '{}'::text[] NOT NULL,
	"imported_by_id" uuid,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "email_tags" (
	"email_id" uuid NOT NULL,
	"tag_id" uuid NOT NULL,
	"added_by" text NOT NULL,
	"added_by_id" text,
	"removed_at" timestamp with time zone,
	"removed_by" text,
	"removed_by_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "email_tags_email_id_tag_id_pk" PRIMARY KEY("email_id","tag_id")
);
--> statement-breakpoint
CREATE TABLE "email_threads" (
	"id" uuid PRIMARY KEY NOT NULL,
	"case_id" uuid NOT NULL,
	"root_message_id" text NOT NULL,
	"subject" text,
	"participants" text[] DEFAULT '{}'::text[] NOT NULL,
	"message_count" integer DEFAULT 0 NOT NULL,
	"last_message_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "emails" (
	"id" uuid PRIMARY KEY NOT NULL,
	"case_id" uuid NOT NULL,
	"thread_id" uuid NOT NULL,
	"grant_id" text NOT NULL,
	"external_id" text NOT NULL,
	"source_email" text NOT NULL,
	"subject" text,
	"body" text,
	"snippet" text,
	"object" text,
	"date" timestamp with time zone,
	"from" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"to" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"cc" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"bcc" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"reply_to" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"folders" text[] DEFAULT '{}'::text[] NOT NULL,
	"starred" boolean DEFAULT false NOT NULL,
	"unread" boolean DEFAULT false NOT NULL,
	"thread_index" integer DEFAULT 0 NOT NULL,
	"participant_emails" text[] DEFAULT '{}'::text[] NOT NULL,
	"participant_domains" text[] DEFAULT '{}'::text[] NOT NULL,
	"in_reply_to" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "extraction_attempts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"extraction_code_id" uuid,
	"device_id" text,
	"outcome" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "material_profiles" (
	"id" uuid PRIMARY KEY NOT NULL,
	"case_id" uuid NOT NULL,
	"platform" text NOT NULL,
	"external_id" text NOT NULL,
	"name" text NOT NULL,
	"visible_to_opposing_counsel" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "network_conversation_tags" (
	"conversation_id" uuid NOT NULL,
	"tag_id" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "network_conversation_tags_conversation_id_tag_id_pk" PRIMARY KEY("conversation_id","tag_id")
);
--> statement-breakpoint
CREATE TABLE "network_conversations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"case_id" uuid NOT NULL,
	"profile_id" uuid NOT NULL,
	"external_id" text NOT NULL,
	"title" text,
	"participants" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "network_messages" (
	"id" uuid PRIMARY KEY NOT NULL,
	"case_id" uuid NOT NULL,
	"conversation_id" uuid NOT NULL,
	"profile_id" uuid NOT NULL,
	"external_id" text NOT NULL,
	"from" text NOT NULL,
	"to" text NOT NULL,
	"date" timestamp with time zone NOT NULL,
	"subject" text,
	"content" text NOT NULL,
	"folder" text,
	"is_draft" boolean DEFAULT false NOT NULL,
	"attachments" text DEFAULT '' NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(subject, '') || ' ' || content)) STORED NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "support_tickets" (
	"id" uuid PRIMARY KEY NOT NULL,
	"case_id" uuid NOT NULL,
	"profile_id" uuid NOT NULL,
	"ticket_id" bigint NOT NULL,
	"subject" text,
	"status" text,
	"ticket_created_at" timestamp with time zone,
	"comments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(subject, '') || ' ' || jsonb_path_query_array(comments, '$[*].comment')::text)) STORED NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tags" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"case_id" uuid,
	"name" text NOT NULL,
	"name_lowercase" text NOT NULL,
	"background_color" text DEFAULT '#E5E7EB' NOT NULL,
	"text_color" text DEFAULT '#111827' NOT NULL,
	"type" text DEFAULT 'case' NOT NULL,
	"severity" text DEFAULT 'info' NOT NULL,
	"origin" text DEFAULT 'manual' NOT NULL,
	"creator_access_type" text,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "extraction_codes" ADD COLUMN "case_id" uuid;--> statement-breakpoint
ALTER TABLE "extraction_codes" ADD COLUMN "device_id" text;--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_email_id_emails_id_fk" FOREIGN KEY ("email_id") REFERENCES "public"."emails"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_notes" ADD CONSTRAINT "device_notes_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_notes" ADD CONSTRAINT "device_notes_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_notes" ADD CONSTRAINT "device_notes_imported_by_id_users_id_fk" FOREIGN KEY ("imported_by_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_tags" ADD CONSTRAINT "email_tags_email_id_emails_id_fk" FOREIGN KEY ("email_id") REFERENCES "public"."emails"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_tags" ADD CONSTRAINT "email_tags_tag_id_tags_id_fk" FOREIGN KEY ("tag_id") REFERENCES "public"."tags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_threads" ADD CONSTRAINT "email_threads_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "emails" ADD CONSTRAINT "emails_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "emails" ADD CONSTRAINT "emails_thread_id_email_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."email_threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extraction_attempts" ADD CONSTRAINT "extraction_attempts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "material_profiles" ADD CONSTRAINT "material_profiles_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ADD CONSTRAINT "network_conversation_tags_conversation_id_network_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."network_conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_conversation_tags" ADD CONSTRAINT "network_conversation_tags_tag_id_tags_id_fk" FOREIGN KEY ("tag_id") REFERENCES "public"."tags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_conversations" ADD CONSTRAINT "network_conversations_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_conversations" ADD CONSTRAINT "network_conversations_profile_id_material_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."material_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_messages" ADD CONSTRAINT "network_messages_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_messages" ADD CONSTRAINT "network_messages_conversation_id_network_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."network_conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_messages" ADD CONSTRAINT "network_messages_profile_id_material_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."material_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_tickets" ADD CONSTRAINT "support_tickets_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_tickets" ADD CONSTRAINT "support_tickets_profile_id_material_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."material_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tags" ADD CONSTRAINT "tags_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tags" ADD CONSTRAINT "tags_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "attachments_email_idx" ON "attachments" USING btree ("email_id");--> statement-breakpoint
CREATE UNIQUE INDEX "device_notes_case_device_note_key" ON "device_notes" USING btree ("case_id","device_id","note_id");--> statement-breakpoint
CREATE INDEX "email_tags_tag_idx" ON "email_tags" USING btree ("tag_id");--> statement-breakpoint
CREATE UNIQUE INDEX "email_threads_case_root_key" ON "email_threads" USING btree ("case_id","root_message_id");--> statement-breakpoint
CREATE INDEX "email_threads_case_activity_idx" ON "email_threads" USING btree ("case_id","last_message_at");--> statement-breakpoint
CREATE UNIQUE INDEX "emails_case_external_key" ON "emails" USING btree ("case_id","external_id");--> statement-breakpoint
CREATE INDEX "emails_thread_date_idx" ON "emails" USING btree ("thread_id","date");--> statement-breakpoint
CREATE INDEX "emails_participant_domains_idx" ON "emails" USING gin ("participant_domains");--> statement-breakpoint
CREATE INDEX "emails_participant_emails_idx" ON "emails" USING gin ("participant_emails");--> statement-breakpoint
CREATE INDEX "emails_folders_idx" ON "emails" USING gin ("folders");--> statement-breakpoint
CREATE INDEX "extraction_attempts_organization_idx" ON "extraction_attempts" USING btree ("organization_id");--> statement-breakpoint
CREATE UNIQUE INDEX "material_profiles_case_platform_external_key" ON "material_profiles" USING btree ("case_id","platform","external_id");--> statement-breakpoint
CREATE INDEX "network_conversation_tags_tag_idx" ON "network_conversation_tags" USING btree ("tag_id");--> statement-breakpoint
CREATE UNIQUE INDEX "network_conversations_profile_external_key" ON "network_conversations" USING btree ("profile_id","external_id");--> statement-breakpoint
CREATE UNIQUE INDEX "network_messages_conversation_external_key" ON "network_messages" USING btree ("conversation_id","external_id");--> statement-breakpoint
CREATE INDEX "network_messages_case_date_idx" ON "network_messages" USING btree ("case_id","date");--> statement-breakpoint
CREATE INDEX "network_messages_search_idx" ON "network_messages" USING gin ("search");--> statement-breakpoint
CREATE UNIQUE INDEX "support_tickets_profile_ticket_key" ON "support_tickets" USING btree ("profile_id","ticket_id");--> statement-breakpoint
CREATE INDEX "support_tickets_search_idx" ON "support_tickets" USING gin ("search");--> statement-breakpoint
CREATE INDEX "tags_organization_idx" ON "tags" USING btree ("organization_id");