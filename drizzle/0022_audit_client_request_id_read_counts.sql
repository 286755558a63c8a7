CREATE TABLE "audit_read_counts" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"read_key" text NOT NULL,
	"first_read_at" timestamp with time zone NOT NULL,
	"last_read_at" timestamp with time zone NOT NULL,
	"count" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "client_request_id" text;--> statement-breakpoint
CREATE INDEX "audit_read_counts_key_idx" ON "audit_read_counts" USING btree ("read_key","first_read_at");--> statement-breakpoint
-- audit_append (0012) also stores the client's request id, beside the chain: it is not in the template the hash is taken over.
CREATE OR REPLACE FUNCTION "audit_append"("events" jsonb, "genesis_hash" text) RETURNS integer LANGUAGE plpgsql AS $$
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
      case_id, target_type, target_id, ip, user_agent, request_id, client_request_id, metadata, prev_hash, hash)
    VALUES ((event ->> 'id')::uuid, organization, chained.sequence, (event ->> 'occurredAt')::timestamptz,
      event ->> 'action', event ->> 'actorType', (event ->> 'actorUserId')::uuid, (event ->> 'tokenId')::uuid,
      (event ->> 'caseId')::uuid, event ->> 'targetType', event ->> 'targetId', event ->> 'ip', event ->> 'userAgent',
      event ->> 'requestId', event ->> 'clientRequestId', event -> 'metadata', chained.prev_hash, chained.hash);
  END LOOP;
  RETURN jsonb_array_length(events);
END
$$;
