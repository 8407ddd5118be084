output "api_url" {
  description = "The service's public address: the HTTP API, the upload page and the webhook."
  value       = local.public_url
}

output "webhook_url" {
  description = "Where Telegram sends the bot's updates."
  value       = local.webhook_url
}

output "bucket" {
  description = "The data bucket: sources/, audio/, results/."
  value       = yandex_storage_bucket.data.bucket
}

output "deploy_bucket" {
  description = "The bucket holding the function zips."
  value       = yandex_storage_bucket.deploy.bucket
}

output "function_ids" {
  description = "The functions' ids, by name."
  value = {
    api      = yandex_function.api.id
    telegram = yandex_function.telegram.id
    ingest   = yandex_function.ingest.id
    poll     = yandex_function.poll.id
  }
}

output "ydb_endpoint" {
  description = "YDB_CONNECTION_STRING of the job store, for `transcriber migrate` and `transcriber token`."
  value       = yandex_ydb_database_serverless.main.ydb_full_endpoint
}

output "selftest" {
  description = "What to run next, from the repository's root with an API token in TOKEN (transcriber token create): real jobs through the API, and the bot's webhook; docs/deploy.md, step 4."
  value       = "TELEGRAM_BOT_TOKEN=$TF_VAR_telegram_bot_token go run ./cmd/transcriber selftest --api ${local.public_url} --token $TOKEN --bot"
}
