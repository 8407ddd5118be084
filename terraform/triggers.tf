# What calls ingest and poll. A trigger delivers at least once: it retries a
# failed call, then puts the event in its dead-letter queue (Message Queue),
# where a person can see it. Nothing is lost by giving up: the poll function's
# sweep retries every job whose step failed (docs/architecture.md, "The poll
# sweep also ingests"). The numbers: docs/deploy.md, "Triggers".

resource "yandex_message_queue" "ingest_dlq" {
  name                      = "${var.name_prefix}-ingest-dlq"
  message_retention_seconds = 1209600 # 14 days, the most Message Queue keeps
  access_key                = local.s3_keys.access_key
  secret_key                = local.s3_keys.secret_key

  depends_on = [yandex_resourcemanager_folder_iam_member.deployer_ymq]
}

resource "yandex_message_queue" "poll_dlq" {
  name                      = "${var.name_prefix}-poll-dlq"
  message_retention_seconds = 1209600
  access_key                = local.s3_keys.access_key
  secret_key                = local.s3_keys.secret_key

  depends_on = [yandex_resourcemanager_folder_iam_member.deployer_ymq]
}

# Every object created under sources/ (job.SourceKey) starts ingest, one
# object per call: a conversion may take most of the function's timeout.
# batch_size 1 sends each event on its own; batch_cutoff is the longest a
# batch waits to fill, 1-60 s (the provider requires it; the CLI reference
# gives the range and the default, 1 s); with batch_size 1 a batch is full
# with its first event. A test in terraform/tftest checks both. The copy
# ingest makes of an accepted upload goes to audio/ (job.AcceptedKey),
# outside the prefix, so it starts nothing.
resource "yandex_function_trigger" "ingest" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-ingest"
  description = "An upload under sources/ starts the ingest function."

  object_storage {
    bucket_id    = yandex_storage_bucket.data.id
    prefix       = "sources/"
    create       = true
    batch_size   = "1"
    batch_cutoff = "1"
  }

  function {
    id                 = yandex_function.ingest.id
    service_account_id = yandex_iam_service_account.trigger.id
    retry_attempts     = "3"
    retry_interval     = "30"
  }

  dlq {
    queue_id           = yandex_message_queue.ingest_dlq.arn
    service_account_id = yandex_iam_service_account.trigger.id
  }

  depends_on = [
    yandex_function_iam_binding.ingest_invoker,
    yandex_resourcemanager_folder_iam_member.trigger_dlq_writer,
  ]
}

# Every minute (six fields, UTC; the provider's own example uses this
# expression).
resource "yandex_function_trigger" "poll" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-poll"
  description = "Every minute: the poll function."

  timer {
    cron_expression = "* * * * ? *"
  }

  function {
    id                 = yandex_function.poll.id
    service_account_id = yandex_iam_service_account.trigger.id
    retry_attempts     = "1"
    retry_interval     = "10"
  }

  dlq {
    queue_id           = yandex_message_queue.poll_dlq.arn
    service_account_id = yandex_iam_service_account.trigger.id
  }

  depends_on = [
    yandex_function_iam_binding.poll_invoker,
    yandex_resourcemanager_folder_iam_member.trigger_dlq_writer,
  ]
}
