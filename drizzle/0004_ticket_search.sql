ALTER TABLE "support_tickets" drop column "search";--> statement-breakpoint
ALTER TABLE "support_tickets" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(subject, '')) || jsonb_to_tsvector('simple', jsonb_path_query_array(comments, '$[*].comment'), '["string"]')) STORED NOT NULL;--> statement-breakpoint
-- Dropping the column dropped its index: build it again (drizzle-kit does not see that).
CREATE INDEX "support_tickets_search_idx" ON "support_tickets" USING gin ("search");