CREATE TABLE "storage_reservations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"case_id" uuid NOT NULL,
	"object_key" text NOT NULL,
	"bytes" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "base_fee_charge_key" text;--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "storage_reservations" ADD CONSTRAINT "storage_reservations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "storage_reservations_object_key" ON "storage_reservations" USING btree ("object_key");--> statement-breakpoint
CREATE INDEX "storage_reservations_organization_idx" ON "storage_reservations" USING btree ("organization_id","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "credit_ledger_idempotency_key" ON "credit_ledger" USING btree ("idempotency_key");--> statement-breakpoint
-- The plan enforced follows the tier selected: organizations already on a tier get its caps
-- (lib/billing/tiers.ts), instead of the free plan written when they were created.
UPDATE "organization_plans" AS p SET "type" = o."billing_tier", "seats" = t.seats, "devices" = t.devices, "storage_bytes" = t.storage_bytes
FROM "organizations" AS o
JOIN (VALUES
  ('tier1', 2, 2, 25::bigint * 1073741824),
  ('tier2', 5, 5, 100::bigint * 1073741824),
  ('tier3', 10, 10, 250::bigint * 1073741824),
  ('tier4', 25, 25, 500::bigint * 1073741824),
  ('tier5', 50, 50, 1024::bigint * 1073741824),
  ('tier6', 100, 100, 2048::bigint * 1073741824),
  ('tier7', 250, 250, 5120::bigint * 1073741824)
) AS t(tier, seats, devices, storage_bytes) ON t.tier = o."billing_tier"
WHERE p."organization_id" = o."id" AND o."billing_mode" = 'pay_as_you_go';--> statement-breakpoint
-- The base fee of the current period: the newest base-fee charge of each organization on a tier.
UPDATE "organizations" AS o SET "base_fee_charge_key" = f."charge_key"
FROM (
  SELECT DISTINCT ON ("organization_id") "organization_id", "charge_key"
  FROM "billing_rows"
  WHERE "sku_key" LIKE 'platform\_base\_fee\_tier%' AND "amount_cents" > 0
  ORDER BY "organization_id", "created_at" DESC
) AS f
WHERE f."organization_id" = o."id" AND o."billing_mode" = 'pay_as_you_go';
