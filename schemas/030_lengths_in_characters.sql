-- Activity types, activity ids and channel labels are bounded in characters (Unicode scalars), as the published
-- schemas' maxLength counts them and as the API and the job validator now check them (issue 32: "lengths in the
-- unit the code counts"). Before, these columns counted bytes, so a 150-character id in a script of three-byte
-- characters passed the document and was refused. The control-character rule is unchanged.

ALTER TABLE activity_start_tokens DROP CONSTRAINT activity_start_tokens_activity_type_check;
ALTER TABLE activity_start_tokens ADD CONSTRAINT activity_start_tokens_activity_type_check
    CHECK (char_length(activity_type) BETWEEN 1 AND 200 AND activity_type !~ '[\x01-\x1f\x7f]');

ALTER TABLE activity_update_tokens DROP CONSTRAINT activity_update_tokens_activity_id_check;
ALTER TABLE activity_update_tokens ADD CONSTRAINT activity_update_tokens_activity_id_check
    CHECK (char_length(activity_id) BETWEEN 1 AND 200 AND activity_id !~ '[\x01-\x1f\x7f]');

ALTER TABLE activity_channels DROP CONSTRAINT activity_channels_label_check;
ALTER TABLE activity_channels ADD CONSTRAINT activity_channels_label_check
    CHECK (char_length(label) <= 200 AND label !~ '[\x01-\x1f\x7f]');
