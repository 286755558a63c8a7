CREATE TABLE "audit_chain_heads" (
	"organization_id" uuid PRIMARY KEY NOT NULL,
	"sequence" bigint NOT NULL,
	"hash" text NOT NULL,
	"prev_hash" text
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"sequence" bigint NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"action" text NOT NULL,
	"actor_type" text NOT NULL,
	"actor_user_id" uuid,
	"token_id" uuid,
	"case_id" uuid,
	"target_type" text,
	"target_id" text,
	"ip" text,
	"user_agent" text,
	"request_id" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "evidence_objects" (
	"key" text PRIMARY KEY NOT NULL,
	"case_id" uuid NOT NULL,
	"sha256" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "attachments" ADD COLUMN "sha256" text;--> statement-breakpoint
ALTER TABLE "device_notes" ADD COLUMN "sha256" text;--> statement-breakpoint
ALTER TABLE "device_notes" ADD COLUMN "size_bytes" bigint;--> statement-breakpoint
ALTER TABLE "emails" ADD COLUMN "sha256" text;--> statement-breakpoint
ALTER TABLE "emails" ADD COLUMN "size_bytes" bigint;--> statement-breakpoint
ALTER TABLE "emails" ADD COLUMN "import_source" text;--> statement-breakpoint
ALTER TABLE "emails" ADD COLUMN "imported_by_id" uuid;--> statement-breakpoint
ALTER TABLE "network_messages" ADD COLUMN "sha256" text;--> statement-breakpoint
ALTER TABLE "network_messages" ADD COLUMN "size_bytes" bigint;--> statement-breakpoint
ALTER TABLE "network_messages" ADD COLUMN "import_source" text;--> statement-breakpoint
ALTER TABLE "network_messages" ADD COLUMN "imported_by_id" uuid;--> statement-breakpoint
ALTER TABLE "support_tickets" ADD COLUMN "sha256" text;--> statement-breakpoint
ALTER TABLE "support_tickets" ADD COLUMN "size_bytes" bigint;--> statement-breakpoint
ALTER TABLE "support_tickets" ADD COLUMN "import_source" text;--> statement-breakpoint
ALTER TABLE "support_tickets" ADD COLUMN "imported_by_id" uuid;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_events_organization_sequence_key" ON "audit_events" USING btree ("organization_id","sequence");--> statement-breakpoint
CREATE INDEX "audit_events_case_idx" ON "audit_events" USING btree ("organization_id","case_id","sequence") WHERE "audit_events"."case_id" is not null;--> statement-breakpoint
CREATE INDEX "audit_events_actor_idx" ON "audit_events" USING btree ("organization_id","actor_user_id","sequence") WHERE "audit_events"."actor_user_id" is not null;--> statement-breakpoint
CREATE INDEX "evidence_objects_case_idx" ON "evidence_objects" USING btree ("case_id");--> statement-breakpoint
-- The audit trail is append-only: no UPDATE, DELETE or TRUNCATE, whoever asks (lib/audit).
CREATE FUNCTION "audit_events_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = '42501';
END
$$;--> statement-breakpoint
CREATE TRIGGER "audit_events_no_change" BEFORE UPDATE OR DELETE ON "audit_events" FOR EACH ROW EXECUTE FUNCTION "audit_events_append_only"();--> statement-breakpoint
CREATE TRIGGER "audit_events_no_truncate" BEFORE TRUNCATE ON "audit_events" FOR EACH STATEMENT EXECUTE FUNCTION "audit_events_append_only"();
--> statement-breakpoint
-- Appends a transaction's audit events (lib/audit/record.ts) in one call: for each event, in the
-- order given (sorted by organization, so heads are locked in one order), move the organization's
-- chain head under its row lock, hash the event's canonical text with the head's sequence + 1 and
-- hash put in (U+0001 P U+0001 and U+0001 S U+0001 mark where), and insert the event. A function,
-- so the statements inside are planned once per connection, and the request pays one round trip.
CREATE FUNCTION "audit_append"("events" jsonb, "genesis_hash" text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  event jsonb;
  organization uuid;
  chained record;
BEGIN
  FOR i IN 0 .. jsonb_array_length(events) - 1 LOOP
    event := events -> i;
    organization := (event ->> 'organizationId')::uuid;
    LOOP
      UPDATE audit_chain_heads AS head
      SET sequence = head.sequence + 1,
        prev_hash = head.hash,
        hash = encode(sha256(convert_to(replace(replace(event ->> 'template', chr(1) || 'P' || chr(1), head.hash),
          chr(1) || 'S' || chr(1), (head.sequence + 1)::text), 'UTF8')), 'hex')
      WHERE head.organization_id = organization
      RETURNING head.sequence, head.prev_hash, head.hash INTO chained;
      EXIT WHEN FOUND;
      -- The organization's first event: its head starts at the genesis hash.
      INSERT INTO audit_chain_heads (organization_id, sequence, hash) VALUES (organization, 0, genesis_hash)
      ON CONFLICT (organization_id) DO NOTHING;
    END LOOP;
    INSERT INTO audit_events (id, organization_id, sequence, occurred_at, action, actor_type, actor_user_id, token_id,
      case_id, target_type, target_id, ip, user_agent, request_id, metadata, prev_hash, hash)
    VALUES ((event ->> 'id')::uuid, organization, chained.sequence, (event ->> 'occurredAt')::timestamptz,
      event ->> 'action', event ->> 'actorType', (event ->> 'actorUserId')::uuid, (event ->> 'tokenId')::uuid,
      (event ->> 'caseId')::uuid, event ->> 'targetType', event ->> 'targetId', event ->> 'ip', event ->> 'userAgent',
      event ->> 'requestId', event -> 'metadata', chained.prev_hash, chained.hash);
  END LOOP;
  RETURN jsonb_array_length(events);
END
$$;
