# The four Cloud Functions. Each is built by the platform from its zip
# (`make package`, docs/deploy.md): Go 1.23.9, entrypoint index.Handler.
# Memory and timeouts, with their reasons: docs/deploy.md, "Function sizes".
# The environment holds only what each function's loader reads
# (internal/app.FromEnv, app.CloudStores); a test (terraform/tftest) checks
# every name against the loader.

locals {
  # The spend limits (docs/configuration.md, "Spend limits") bite in every
  # function: the api and the bot count unfinished jobs, ingest reserves
  # audio, and each shows usage or settles a reservation.
  common_env = merge({
    S3_BUCKET              = yandex_storage_bucket.data.bucket
    YDB_CONNECTION_STRING  = yandex_ydb_database_serverless.main.ydb_full_endpoint
    SPEECHKIT_FOLDER_ID    = var.folder_id
    DEFAULT_LANGUAGE       = var.default_language
    LOG_LEVEL              = var.log_level
    LIMIT_AUDIO_PER_DAY    = var.limit_audio_per_day
    LIMIT_AUDIO_PER_MONTH  = var.limit_audio_per_month
    LIMIT_BUDGET_PER_MONTH = var.limit_budget_per_month
    LIMIT_ACTIVE_JOBS      = tostring(var.limit_active_jobs)
    TELEGRAM_OWNER_ID      = var.telegram_owner_id
    # The request quota is kept by ingest and poll, which submit; the
    # others never read it, harmlessly.
    SPEECHKIT_REQUESTS_PER_HOUR = tostring(var.speechkit_requests_per_hour)
    # Synchronous recognition is made where the audio is at hand: the
    # bot's function for voice notes, ingest for fast API jobs.
    SPEECHKIT_SYNC_URL          = var.speechkit_sync_url
    REUSE_SCOPE                 = var.reuse_scope
    LIMIT_TRANSLATION_PER_DAY   = tostring(var.limit_translation_per_day)
    SPEECHKIT_SYNC_MAX_DURATION = var.speechkit_sync_max_duration
    }, var.limit_exempt_users == "" ? {} : {
    LIMIT_EXEMPT_USERS = var.limit_exempt_users
    }, var.summary_model_uri == "" ? {} : {
    SUMMARY_MODEL_URI = var.summary_model_uri
  })

  s3_key_version = yandex_iam_service_account_static_access_key.presigner.output_to_lockbox_version_id
}

resource "yandex_function" "api" {
  folder_id          = var.folder_id
  name               = "${var.name_prefix}-api"
  description        = "HTTP API behind API Gateway: jobs, presigned uploads, transcripts, the upload page."
  runtime            = "golang123"
  entrypoint         = "index.Handler"
  memory             = 256
  execution_timeout  = "30"
  service_account_id = yandex_iam_service_account.api.id
  user_hash          = local.zip_sha["api"]

  package {
    bucket_name = yandex_storage_bucket.deploy.bucket
    object_name = yandex_storage_object.zip["api"].key
    sha_256     = local.zip_sha["api"]
  }

  environment = local.common_env

  secrets {
    id                   = yandex_lockbox_secret.s3_key.id
    version_id           = local.s3_key_version
    key                  = "access_key_id"
    environment_variable = "S3_ACCESS_KEY_ID"
  }
  secrets {
    id                   = yandex_lockbox_secret.s3_key.id
    version_id           = local.s3_key_version
    key                  = "secret_access_key"
    environment_variable = "S3_SECRET_ACCESS_KEY"
  }
  secrets {
    id                   = yandex_lockbox_secret.upload_link_secret.id
    version_id           = yandex_lockbox_secret_version_hashed.upload_link_secret.id
    key                  = "secret"
    environment_variable = "UPLOAD_LINK_SECRET"
  }

  depends_on = [
    terraform_data.migrate,
    yandex_lockbox_secret_iam_binding.s3_key,
    yandex_lockbox_secret_iam_binding.upload_link_secret,
  ]
}

resource "yandex_function" "telegram" {
  folder_id          = var.folder_id
  name               = "${var.name_prefix}-telegram"
  description        = "The Telegram bot's webhook behind API Gateway."
  runtime            = "golang123"
  entrypoint         = "index.Handler"
  memory             = 256
  execution_timeout  = "60"
  service_account_id = yandex_iam_service_account.telegram.id
  user_hash          = local.zip_sha["telegram"]

  package {
    bucket_name = yandex_storage_bucket.deploy.bucket
    object_name = yandex_storage_object.zip["telegram"].key
    sha_256     = local.zip_sha["telegram"]
  }

  environment = merge(local.common_env, {
    TELEGRAM_ALLOWED_USERS = var.telegram_allowed_users
  })

  secrets {
    id                   = yandex_lockbox_secret.s3_key.id
    version_id           = local.s3_key_version
    key                  = "access_key_id"
    environment_variable = "S3_ACCESS_KEY_ID"
  }
  secrets {
    id                   = yandex_lockbox_secret.s3_key.id
    version_id           = local.s3_key_version
    key                  = "secret_access_key"
    environment_variable = "S3_SECRET_ACCESS_KEY"
  }
  secrets {
    id                   = yandex_lockbox_secret.bot_token.id
    version_id           = yandex_lockbox_secret_version_hashed.bot_token.id
    key                  = "token"
    environment_variable = "TELEGRAM_BOT_TOKEN"
  }
  secrets {
    id                   = yandex_lockbox_secret.webhook_secret.id
    version_id           = yandex_lockbox_secret_version_hashed.webhook_secret.id
    key                  = "secret"
    environment_variable = "TELEGRAM_WEBHOOK_SECRET"
  }
  secrets {
    id                   = yandex_lockbox_secret.upload_link_secret.id
    version_id           = yandex_lockbox_secret_version_hashed.upload_link_secret.id
    key                  = "secret"
    environment_variable = "UPLOAD_LINK_SECRET"
  }

  depends_on = [
    terraform_data.migrate,
    yandex_lockbox_secret_iam_binding.s3_key,
    yandex_lockbox_secret_iam_binding.bot_token,
    yandex_lockbox_secret_iam_binding.webhook_secret,
    yandex_lockbox_secret_iam_binding.upload_link_secret,
  ]
}

resource "yandex_function" "ingest" {
  folder_id          = var.folder_id
  name               = "${var.name_prefix}-ingest"
  description        = "Object Storage upload events under sources/: probe, convert, submit to SpeechKit."
  runtime            = "golang123"
  entrypoint         = "index.Handler"
  memory             = 1024
  execution_timeout  = "600"
  service_account_id = yandex_iam_service_account.ingest.id
  user_hash          = local.zip_sha["ingest"]

  package {
    bucket_name = yandex_storage_bucket.deploy.bucket
    object_name = yandex_storage_object.zip["ingest"].key
    sha_256     = local.zip_sha["ingest"]
  }

  environment = local.common_env

  secrets {
    id                   = yandex_lockbox_secret.s3_key.id
    version_id           = local.s3_key_version
    key                  = "access_key_id"
    environment_variable = "S3_ACCESS_KEY_ID"
  }
  secrets {
    id                   = yandex_lockbox_secret.s3_key.id
    version_id           = local.s3_key_version
    key                  = "secret_access_key"
    environment_variable = "S3_SECRET_ACCESS_KEY"
  }
  secrets {
    id                   = yandex_lockbox_secret.bot_token.id
    version_id           = yandex_lockbox_secret_version_hashed.bot_token.id
    key                  = "token"
    environment_variable = "TELEGRAM_BOT_TOKEN"
  }

  depends_on = [
    terraform_data.migrate,
    yandex_lockbox_secret_iam_binding.s3_key,
    yandex_lockbox_secret_iam_binding.bot_token,
  ]
}

resource "yandex_function" "poll" {
  folder_id          = var.folder_id
  name               = "${var.name_prefix}-poll"
  description        = "Every minute: check recognitions, write results, deliver, sweep (including retried ingest work)."
  runtime            = "golang123"
  entrypoint         = "index.Handler"
  memory             = 512
  execution_timeout  = "600"
  service_account_id = yandex_iam_service_account.poll.id
  user_hash          = local.zip_sha["poll"]

  package {
    bucket_name = yandex_storage_bucket.deploy.bucket
    object_name = yandex_storage_object.zip["poll"].key
    sha_256     = local.zip_sha["poll"]
  }

  environment = local.common_env

  secrets {
    id                   = yandex_lockbox_secret.s3_key.id
    version_id           = local.s3_key_version
    key                  = "access_key_id"
    environment_variable = "S3_ACCESS_KEY_ID"
  }
  secrets {
    id                   = yandex_lockbox_secret.s3_key.id
    version_id           = local.s3_key_version
    key                  = "secret_access_key"
    environment_variable = "S3_SECRET_ACCESS_KEY"
  }
  secrets {
    id                   = yandex_lockbox_secret.bot_token.id
    version_id           = yandex_lockbox_secret_version_hashed.bot_token.id
    key                  = "token"
    environment_variable = "TELEGRAM_BOT_TOKEN"
  }

  depends_on = [
    terraform_data.migrate,
    yandex_lockbox_secret_iam_binding.s3_key,
    yandex_lockbox_secret_iam_binding.bot_token,
  ]
}
