CREATE TABLE "email_suppressions" (
	"address" text PRIMARY KEY NOT NULL,
	"reason" text NOT NULL,
	"first_event_at" timestamp with time zone NOT NULL,
	"last_event_at" timestamp with time zone NOT NULL,
	"feedback_id" text NOT NULL,
	"detail" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "email_suppressions_address_lowercase" CHECK ("email_suppressions"."address" = lower("email_suppressions"."address")),
	CONSTRAINT "email_suppressions_reason" CHECK ("email_suppressions"."reason" in ('bounce', 'complaint'))
);
