# Secrets. The functions get them as Lockbox-backed environment variables
# (`secrets` blocks in functions.tf); each function's account may read only
# the secrets it uses. Every version is a
# yandex_lockbox_secret_version_hashed: the state keeps a hash of each value,
# not the value (docs/deploy.md, "What the state holds").

# S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: the presigner's static key, written
# here by the provider (output_to_lockbox in iam.tf).
resource "yandex_lockbox_secret" "s3_key" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-s3-key"
  description = "Static access key of the presigner account: the functions' S3 client and presigned URLs."
}

# TELEGRAM_BOT_TOKEN.
resource "yandex_lockbox_secret" "bot_token" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-bot-token"
  description = "The Telegram bot token."
}

resource "yandex_lockbox_secret_version_hashed" "bot_token" {
  secret_id    = yandex_lockbox_secret.bot_token.id
  key_1        = "token"
  text_value_1 = var.telegram_bot_token
}

# TELEGRAM_WEBHOOK_SECRET: the secret_token given to setWebhook; Telegram sends
# it in X-Telegram-Bot-Api-Secret-Token. setWebhook takes 1-256 characters of
# A-Z, a-z, 0-9, _ and -.
resource "random_password" "webhook_secret" {
  length           = 64
  special          = true
  override_special = "_-"
}

resource "yandex_lockbox_secret" "webhook_secret" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-webhook-secret"
  description = "The secret_token of the Telegram webhook."
}

resource "yandex_lockbox_secret_version_hashed" "webhook_secret" {
  secret_id    = yandex_lockbox_secret.webhook_secret.id
  key_1        = "secret"
  text_value_1 = random_password.webhook_secret.result
}

# UPLOAD_LINK_SECRET: signs the one-time upload links for files over 20 MB;
# the same in the telegram function (makes links) and the api function
# (checks them). At least 32 bytes (uploadlink.MinSecretLen).
resource "random_password" "upload_link_secret" {
  length  = 64
  special = false
}

resource "yandex_lockbox_secret" "upload_link_secret" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-upload-link-secret"
  description = "The key of the bot's one-time upload links."
}

resource "yandex_lockbox_secret_version_hashed" "upload_link_secret" {
  secret_id    = yandex_lockbox_secret.upload_link_secret.id
  key_1        = "secret"
  text_value_1 = random_password.upload_link_secret.result
}

# Who reads what (lockbox.payloadViewer per secret).
resource "yandex_lockbox_secret_iam_binding" "s3_key" {
  secret_id = yandex_lockbox_secret.s3_key.id
  role      = "lockbox.payloadViewer"
  members   = [local.member.api, local.member.telegram, local.member.ingest, local.member.poll]
}

resource "yandex_lockbox_secret_iam_binding" "bot_token" {
  secret_id = yandex_lockbox_secret.bot_token.id
  role      = "lockbox.payloadViewer"
  members   = [local.member.telegram, local.member.ingest, local.member.poll]
}

resource "yandex_lockbox_secret_iam_binding" "webhook_secret" {
  secret_id = yandex_lockbox_secret.webhook_secret.id
  role      = "lockbox.payloadViewer"
  members   = [local.member.telegram]
}

resource "yandex_lockbox_secret_iam_binding" "upload_link_secret" {
  secret_id = yandex_lockbox_secret.upload_link_secret.id
  role      = "lockbox.payloadViewer"
  members   = [local.member.api, local.member.telegram]
}
