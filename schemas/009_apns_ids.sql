-- The apns-id each notification carried (derived from the app, the job id and the token: every send of one job's
-- notification to one device carries the same one, see HeraldCore/NotificationID.swift), kept with dead-token
-- records and delivery failures, so that a re-send can be matched against Herald's records and Apple's delivery log.
-- Rows written before this migration have none. Any worker runs with or without this column: older ones leave it
-- empty.

ALTER TABLE dead_tokens ADD COLUMN apns_id uuid;
ALTER TABLE delivery_failures ADD COLUMN apns_id uuid;
