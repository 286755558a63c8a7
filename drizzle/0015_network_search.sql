CREATE TABLE "network_message_lexemes" (
	"lexeme" text COLLATE "C" PRIMARY KEY NOT NULL
);
--> statement-breakpoint
-- Every lexeme a message brings, once, but those starting with a digit (numbers, mostly unique:
-- the search keeps a prefix match for words starting with one). Transition tables allow one event
-- per trigger, hence two triggers.
CREATE FUNCTION "network_message_lexemes_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "network_message_lexemes" ("lexeme")
    SELECT DISTINCT "lexeme" FROM "new_messages", unnest(tsvector_to_array("search")) AS "lexeme"
    WHERE "lexeme" !~ '^[0-9]'
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "network_message_lexemes_on_insert" AFTER INSERT ON "network_messages" REFERENCING NEW TABLE AS "new_messages" FOR EACH STATEMENT EXECUTE FUNCTION "network_message_lexemes_add"();--> statement-breakpoint
CREATE TRIGGER "network_message_lexemes_on_update" AFTER UPDATE ON "network_messages" REFERENCING NEW TABLE AS "new_messages" FOR EACH STATEMENT EXECUTE FUNCTION "network_message_lexemes_add"();--> statement-breakpoint
-- The messages already stored.
INSERT INTO "network_message_lexemes" ("lexeme")
  SELECT DISTINCT "lexeme" FROM "network_messages", unnest(tsvector_to_array("search")) AS "lexeme"
  WHERE "lexeme" !~ '^[0-9]'
  ON CONFLICT DO NOTHING;--> statement-breakpoint
-- Generated as DROP INDEX + CREATE INDEX; a storage parameter needs no rebuild. A small pending
-- list: every search scans the whole list until it is merged into the tree.
ALTER INDEX "network_messages_search_idx" SET (gin_pending_list_limit = 256);
