CREATE TABLE "idempotency_keys" (
	"scope" text NOT NULL,
	"route" text NOT NULL,
	"key_hash" text NOT NULL,
	"fingerprint" text NOT NULL,
	"status" text NOT NULL,
	"locked_until" timestamp with time zone NOT NULL,
	"response_status" integer,
	"response_sealed" text,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_scope_route_key_hash_pk" PRIMARY KEY("scope","route","key_hash")
);
--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "idempotency_keys" USING btree ("expires_at");