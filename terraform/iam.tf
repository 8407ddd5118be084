# Service accounts and their roles. Every role and why it is needed is listed
# in docs/deploy.md, "Service accounts and roles". Each function runs as its
# own account with only what it uses.

locals {
  sa = {
    api       = yandex_iam_service_account.api.id
    telegram  = yandex_iam_service_account.telegram.id
    ingest    = yandex_iam_service_account.ingest.id
    poll      = yandex_iam_service_account.poll.id
    trigger   = yandex_iam_service_account.trigger.id
    gateway   = yandex_iam_service_account.gateway.id
    presigner = yandex_iam_service_account.presigner.id
    deployer  = yandex_iam_service_account.deployer.id
  }
  member = { for k, id in local.sa : k => "serviceAccount:${id}" }
}

resource "yandex_iam_service_account" "api" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-api"
  description = "The api function: jobs, presigned uploads, transcripts, API tokens."
}

resource "yandex_iam_service_account" "telegram" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-telegram"
  description = "The telegram function: the bot's webhook."
}

resource "yandex_iam_service_account" "ingest" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-ingest"
  description = "The ingest function: probe, convert, submit to SpeechKit."
}

resource "yandex_iam_service_account" "poll" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-poll"
  description = "The poll function: check recognitions, write results, deliver, sweep."
}

resource "yandex_iam_service_account" "trigger" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-trigger"
  description = "The triggers: invokes ingest and poll, writes failed events to the dead-letter queues."
}

resource "yandex_iam_service_account" "gateway" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-gateway"
  description = "API Gateway: invokes the api and telegram functions."
}

resource "yandex_iam_service_account" "presigner" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-presigner"
  description = "Owns the static key the functions use for Object Storage and presigned URLs."
}

resource "yandex_iam_service_account" "deployer" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-deployer"
  description = "Terraform's own S3 and Message Queue key: buckets, function zips, dead-letter queues."
}

# YDB: the four functions read and write jobs, tokens and the bot's state.
resource "yandex_ydb_database_iam_binding" "editor" {
  database_id = yandex_ydb_database_serverless.main.id
  role        = "ydb.editor"
  members = [
    local.member.api,
    local.member.telegram,
    local.member.ingest,
    local.member.poll,
  ]
}

# SpeechKit: ingest and poll submit and read recognitions; api (DELETE) and
# telegram (/forget) delete them. SpeechKit roles are granted on the folder.
resource "yandex_resourcemanager_folder_iam_member" "speechkit" {
  for_each  = toset(["api", "telegram", "ingest", "poll"])
  folder_id = var.folder_id
  role      = "ai.speechkit-stt.user"
  member    = local.member[each.key]
}

# Translate (transcript?translate_to, the bot's /translate and its button):
# the api and telegram functions translate on request, ingest and poll when
# they deliver a chat's result with its translation. Granted on the folder,
# as SpeechKit's role.
resource "yandex_resourcemanager_folder_iam_member" "translate" {
  for_each  = toset(["api", "telegram", "ingest", "poll"])
  folder_id = var.folder_id
  role      = "ai.translate.user"
  member    = local.member[each.key]
}

# SpeechKit reads the audio by its Object Storage URL with the caller's
# account: the accounts that submit (ingest, and poll's sweep) must be able to
# read the data bucket.
resource "yandex_storage_bucket_iam_binding" "data_viewer" {
  bucket  = yandex_storage_bucket.data.bucket
  role    = "storage.viewer"
  members = [local.member.ingest, local.member.poll]
}

# The functions' S3 client and presigned URLs use the presigner's static key:
# read, write, delete and multipart uploads in the data bucket, nothing else.
# This is also what lets ingest pin an accepted upload: a server-side copy
# (S3 CopyObject) of sources/<id> to audio/<id>/source reads the source and
# writes the copy, then sources/<id> is deleted, all in the data bucket with
# this key (storage.editor: "any operation with buckets and objects"). The
# ingest account's own storage.viewer above is only for SpeechKit, which
# reads the audio, the copy included, with the submitting account.
resource "yandex_storage_bucket_iam_binding" "data_editor" {
  bucket  = yandex_storage_bucket.data.bucket
  role    = "storage.editor"
  members = [local.member.presigner]
}

# The static key of the presigner. Its secret never enters Terraform's state:
# the provider writes it into Lockbox, where the functions read it.
resource "yandex_iam_service_account_static_access_key" "presigner" {
  service_account_id = yandex_iam_service_account.presigner.id
  description        = "S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY of the functions"

  output_to_lockbox {
    secret_id            = yandex_lockbox_secret.s3_key.id
    entry_for_access_key = "access_key_id"
    entry_for_secret_key = "secret_access_key"
  }
}

# Triggers: invoking ingest and poll, and no other function. Cloud Functions
# takes roles on a function as well as on its folder; the folder would let
# this account call api and telegram too (docs/deploy.md, "Roles and their
# sources").
resource "yandex_function_iam_binding" "ingest_invoker" {
  function_id = yandex_function.ingest.id
  role        = "functions.functionInvoker"
  members     = [local.member.trigger]
}

resource "yandex_function_iam_binding" "poll_invoker" {
  function_id = yandex_function.poll.id
  role        = "functions.functionInvoker"
  members     = [local.member.trigger]
}

# Triggers: writing an event that exhausted its retries to a dead-letter queue.
# The trigger's dlq block names an account "with rights to write messages to
# the queue"; that is ymq.writer. Message Queue takes roles only on a folder
# or a cloud, not on a queue, and the provider has no per-queue binding.
resource "yandex_resourcemanager_folder_iam_member" "trigger_dlq_writer" {
  folder_id = var.folder_id
  role      = "ymq.writer"
  member    = local.member.trigger
}

# API Gateway: invoking the two functions behind it, and no other.
resource "yandex_function_iam_binding" "api_invoker" {
  function_id = yandex_function.api.id
  role        = "functions.functionInvoker"
  members     = [local.member.gateway]
}

resource "yandex_function_iam_binding" "telegram_invoker" {
  function_id = yandex_function.telegram.id
  role        = "functions.functionInvoker"
  members     = [local.member.gateway]
}

# The deployer: Terraform creates the buckets, uploads the zips and creates the
# dead-letter queues with this account's static key. Message Queue takes only
# static keys; using the same key for Object Storage works with every provider
# version (docs/deploy.md).
resource "yandex_resourcemanager_folder_iam_member" "deployer_storage" {
  folder_id = var.folder_id
  role      = "storage.editor"
  member    = local.member.deployer
}

# Lifecycle rules and CORS are bucket settings that Object Storage's role
# reference gives to storage.configurer ("manage the settings of object
# lifecycles, static website hosting, access policy, and CORS"); its role
# chart does not place that role under storage.editor, so the deployer holds
# both.
resource "yandex_resourcemanager_folder_iam_member" "deployer_storage_config" {
  folder_id = var.folder_id
  role      = "storage.configurer"
  member    = local.member.deployer
}

# Creating the dead-letter queues (ymq.writer may create queues), setting
# their attributes and deleting them (only ymq.admin may).
resource "yandex_resourcemanager_folder_iam_member" "deployer_ymq" {
  folder_id = var.folder_id
  role      = "ymq.admin"
  member    = local.member.deployer
}

resource "yandex_iam_service_account_static_access_key" "deployer" {
  service_account_id = yandex_iam_service_account.deployer.id
  description        = "Terraform: buckets, function zips, dead-letter queues"
}
