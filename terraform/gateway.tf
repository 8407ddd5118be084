# API Gateway: the HTTP API, the upload page and the Telegram webhook, with
# the project's OpenAPI document as its specification. The functions do not
# need the gateway's address: the bot's upload links point to the address its
# webhook was called at, which is the gateway's, so the gateway can depend on
# the functions with no cycle (docs/deploy.md, "API Gateway").

locals {
  # The document API Gateway serves. templatefile fills in exactly these
  # names; a test (terraform/tftest) checks they are all the document uses.
  gateway_spec = templatefile("${path.module}/../docs/openapi.yaml", {
    api_function_id            = yandex_function.api.id
    telegram_function_id       = yandex_function.telegram.id
    gateway_service_account_id = yandex_iam_service_account.gateway.id
  })

  public_url  = "https://${yandex_api_gateway.main.domain}"
  webhook_url = "${local.public_url}/telegram/webhook"
}

resource "yandex_api_gateway" "main" {
  folder_id   = var.folder_id
  name        = "${var.name_prefix}-gateway"
  description = "transcriber: HTTP API, upload page, Telegram webhook (docs/openapi.yaml)"
  spec        = local.gateway_spec

  depends_on = [
    yandex_function_iam_binding.api_invoker,
    yandex_function_iam_binding.telegram_invoker,
  ]
}

# Registers the webhook with Telegram (setWebhook: url, secret_token,
# allowed_updates). The token and the secret reach curl through the
# environment and, as a curl config, its standard input (printf is a shell
# builtin): never a command line, Terraform's output or the process list.
resource "terraform_data" "webhook" {
  triggers_replace = {
    url    = local.webhook_url
    secret = sha256(random_password.webhook_secret.result)
    token  = sha256(var.telegram_bot_token)
  }

  provisioner "local-exec" {
    interpreter = ["/bin/sh", "-c"]
    command     = <<-EOT
      set -eu
      {
        printf 'url = "https://api.telegram.org/bot%s/setWebhook"\n' "$TELEGRAM_BOT_TOKEN"
        printf 'data-urlencode = "url=%s"\n' "$WEBHOOK_URL"
        printf 'data-urlencode = "secret_token=%s"\n' "$WEBHOOK_SECRET"
        printf 'data-urlencode = "allowed_updates=[\\"message\\",\\"callback_query\\"]"\n'
      } | curl --silent --show-error --fail-with-body --retry 3 --config -
      echo
    EOT
    environment = {
      TELEGRAM_BOT_TOKEN = var.telegram_bot_token
      WEBHOOK_SECRET     = random_password.webhook_secret.result
      WEBHOOK_URL        = local.webhook_url
    }
  }

  depends_on = [yandex_api_gateway.main, yandex_function.telegram]
}
