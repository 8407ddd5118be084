# The job store: serverless YDB. Its schema is not described here: it is the
# code's schema steps (internal/store/ydb/schema.go), applied by
# `transcriber migrate` the same way in every environment (docs/deploy.md,
# "The database schema").

# The database's limits. A new serverless database is throttled to 10
# request units (RU) a second, with about five minutes of unused units kept
# for bursts (Yandex Cloud documentation, "Serverless and dedicated operation
# modes"); a query past the limit fails with "Throughput limit exceeded",
# which the SDK retries with backoff until the store call's deadline, and
# then the call fails as store_unavailable. The limit here is sized from the
# load the database is meant to carry (docs/deploy.md, "Sizing the
# database"; the units per store call are in docs/database.md, "Cost in
# request units").

variable "ydb_jobs_per_hour" {
  description = "The most jobs an hour the database is sized for; raise it when jobs start failing with store_unavailable under load. Its throttling limit follows (local.ydb_ru_per_second)."
  type        = number
  default     = 60

  validation {
    condition     = var.ydb_jobs_per_hour > 0
    error_message = "ydb_jobs_per_hour: want a positive number of jobs an hour."
  }
}

variable "ydb_ru_per_job" {
  description = "Request units one job costs from creation to delivery, all store calls included (docs/database.md, \"Cost in request units\": about 180 for a short recording, 200 with a margin; a long one adds about 25 per further recognition check)."
  type        = number
  default     = 200

  validation {
    condition     = var.ydb_ru_per_job > 0
    error_message = "ydb_ru_per_job: want a positive number of request units."
  }
}

variable "ydb_ru_per_idle_minute" {
  description = "Request units the timer costs a minute with nothing to do: the agenda's one read of the first due job, delivery and callback."
  type        = number
  default     = 6

  validation {
    condition     = var.ydb_ru_per_idle_minute >= 0
    error_message = "ydb_ru_per_idle_minute: want a number of request units, 0 or more."
  }
}

variable "ydb_storage_limit_gb" {
  description = "The most data, in GB, the database may hold (rows and indexes): a few KB a job, kept for JOB_RETENTION. Writes fail past it, so keep it well above the data."
  type        = number
  default     = 10

  validation {
    condition     = var.ydb_storage_limit_gb >= 1
    error_message = "ydb_storage_limit_gb: want at least 1 GB."
  }
}

locals {
  # The units a second the jobs and the idle timer need on average, doubled
  # for bursts and for transactions run again after a lock conflict, and
  # never below the 10 a new database gets.
  ydb_ru_per_second = max(10, ceil(2 * (var.ydb_jobs_per_hour * var.ydb_ru_per_job / 3600 + var.ydb_ru_per_idle_minute / 60)))
}

resource "yandex_ydb_database_serverless" "main" {
  folder_id           = var.folder_id
  name                = "${var.name_prefix}-jobs"
  deletion_protection = false

  # The provider sends the whole block: an attribute left out goes as 0 (a
  # throttling limit of 0 refuses every query, a storage limit of 0 every
  # write), so all four are set. Provisioned capacity is billed by the hour
  # whether used or not; 0 keeps the database on per-request billing.
  serverless_database {
    enable_throttling_rcu_limit = true
    throttling_rcu_limit        = local.ydb_ru_per_second
    provisioned_rcu_limit       = 0
    storage_size_limit          = var.ydb_storage_limit_gb
  }
}

# Applies the schema steps with the credentials of whoever runs Terraform
# (an IAM token from the yc CLI; it never appears in the command line or the
# state). It runs again when the schema steps change or the database is new.
resource "terraform_data" "migrate" {
  triggers_replace = {
    database = yandex_ydb_database_serverless.main.id
    schema   = filesha256("${path.module}/../internal/store/ydb/schema.go")
  }

  provisioner "local-exec" {
    working_dir = "${path.module}/.."
    interpreter = ["/bin/sh", "-c"]
    command     = <<-EOT
      set -eu
      YDB_ACCESS_TOKEN_CREDENTIALS="$${YC_TOKEN:-$(yc iam create-token)}"
      export YDB_ACCESS_TOKEN_CREDENTIALS
      go run ./cmd/transcriber migrate
    EOT
    environment = {
      YDB_CONNECTION_STRING = yandex_ydb_database_serverless.main.ydb_full_endpoint
    }
  }
}
