CREATE TABLE "audit_verification_checkpoints" (
	"organization_id" uuid PRIMARY KEY NOT NULL,
	"sequence" bigint NOT NULL,
	"hash" text NOT NULL,
	"verified_at" timestamp with time zone NOT NULL,
	"method" text NOT NULL,
	"full_started_at" timestamp with time zone,
	"full_cursor_sequence" bigint,
	"full_cursor_hash" text,
	"last_full_started_at" timestamp with time zone,
	"last_full_finished_at" timestamp with time zone,
	"last_full_through_sequence" bigint,
	"last_full_valid" boolean,
	"last_full_first_invalid_sequence" bigint,
	CONSTRAINT "audit_verification_checkpoints_sequence_check" CHECK ("audit_verification_checkpoints"."sequence" >= 0),
	CONSTRAINT "audit_verification_checkpoints_method_check" CHECK ("audit_verification_checkpoints"."method" in ('incremental', 'full'))
);
--> statement-breakpoint
-- What a verification established stays established (lib/audit/verify.ts): the checkpoint never
-- moves back, a failed full verification is never overwritten (only an operator with the table's
-- ownership can, trigger off), and no row is removed.
CREATE FUNCTION "audit_verification_keeps_results"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'UPDATE' THEN
    RAISE EXCEPTION 'audit_verification_checkpoints: % refused', TG_OP USING ERRCODE = '42501';
  END IF;
  IF NEW.sequence < OLD.sequence THEN
    RAISE EXCEPTION 'audit verification checkpoint cannot move back' USING ERRCODE = '42501';
  END IF;
  IF OLD.last_full_valid IS FALSE AND (NEW.last_full_valid IS DISTINCT FROM FALSE
      OR NEW.last_full_first_invalid_sequence IS DISTINCT FROM OLD.last_full_first_invalid_sequence
      OR NEW.last_full_finished_at IS DISTINCT FROM OLD.last_full_finished_at) THEN
    RAISE EXCEPTION 'a failed full audit verification cannot be overwritten' USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "audit_verification_keeps_results" BEFORE UPDATE OR DELETE ON "audit_verification_checkpoints" FOR EACH ROW EXECUTE FUNCTION "audit_verification_keeps_results"();--> statement-breakpoint
CREATE TRIGGER "audit_verification_no_truncate" BEFORE TRUNCATE ON "audit_verification_checkpoints" FOR EACH STATEMENT EXECUTE FUNCTION "audit_verification_keeps_results"();
