CREATE TABLE "evidence_import_segments" (
	"import_id" uuid NOT NULL,
	"segment" integer NOT NULL,
	"sha256" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"part_etag" text NOT NULL,
	CONSTRAINT "evidence_import_segments_import_id_segment_pk" PRIMARY KEY("import_id","segment")
);
--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD COLUMN "copy_segment_bytes" bigint;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD COLUMN "copy_upload_id" text;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD COLUMN "copied_bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "evidence_imports" ADD COLUMN "copy_hash_state" text;--> statement-breakpoint
ALTER TABLE "evidence_import_segments" ADD CONSTRAINT "evidence_import_segments_import_id_evidence_imports_id_fk" FOREIGN KEY ("import_id") REFERENCES "public"."evidence_imports"("id") ON DELETE cascade ON UPDATE no action;