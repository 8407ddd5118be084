variable "cloud_id" {
  description = "The Yandex Cloud cloud the folder belongs to (yc config get cloud-id)."
  type        = string
}

variable "folder_id" {
  description = "The folder everything is created in (yc config get folder-id). It is also sent to SpeechKit as x-folder-id."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]{20}$", var.folder_id))
    error_message = "folder_id: want the folder's id (20 lowercase letters and digits), not its name."
  }
}

variable "zone" {
  description = "The default availability zone of the provider."
  type        = string
  default     = "ru-central1-a"
}

variable "telegram_bot_token" {
  description = "The bot's token from @BotFather. It goes to Lockbox; the state keeps only hashes of it, but a saved plan file holds it (docs/deploy.md, \"What the state holds\")."
  type        = string
  sensitive   = true

  validation {
    condition     = can(regex("^[0-9]+:[A-Za-z0-9_-]+$", var.telegram_bot_token))
    error_message = "telegram_bot_token: want the token @BotFather gave, such as 123456:AAE..."
  }
}

variable "telegram_allowed_users" {
  description = "Who may use the bot: Telegram user ids separated by commas, or * for everyone (TELEGRAM_ALLOWED_USERS)."
  type        = string

  validation {
    condition     = can(regex("^(\\*|[0-9]+( *, *[0-9]+)*)$", var.telegram_allowed_users))
    error_message = "telegram_allowed_users: want * or user ids separated by commas, such as 12345,67890."
  }
}

variable "telegram_owner_id" {
  description = "The owner's numeric Telegram user id, who alone gets /status and the alerts; empty: no owner, no alerts (TELEGRAM_OWNER_ID)."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([1-9][0-9]*)?$", var.telegram_owner_id))
    error_message = "telegram_owner_id: want the owner's numeric Telegram user id, such as 12345678, or empty."
  }
}

variable "limit_audio_per_day" {
  description = "Seconds SpeechKit bills one API token or Telegram user per UTC day, such as 6h; 0 is no limit (LIMIT_AUDIO_PER_DAY)."
  type        = string
  default     = "6h"
}

variable "limit_audio_per_month" {
  description = "Seconds SpeechKit bills the whole installation per UTC month, such as 100h; 0 is no limit (LIMIT_AUDIO_PER_MONTH)."
  type        = string
  default     = "0"
}

variable "limit_budget_per_month" {
  description = "Rubles the whole installation may spend per UTC month on SpeechKit and summaries, a decimal such as 1500; 0 is no budget (LIMIT_BUDGET_PER_MONTH). Set it, or limit_audio_per_month, when the bot is open to everyone."
  type        = string
  default     = "0"
}

variable "limit_active_jobs" {
  description = "Jobs one API token or Telegram user may have unfinished at once; 0 is no limit (LIMIT_ACTIVE_JOBS)."
  type        = number
  default     = 3

  validation {
    condition     = var.limit_active_jobs >= 0 && var.limit_active_jobs <= 100 && floor(var.limit_active_jobs) == var.limit_active_jobs
    error_message = "limit_active_jobs: want a whole number from 0 (no limit) to 100."
  }
}

variable "limit_exempt_users" {
  description = "Telegram user ids the per-user limits do not apply to (the owner), separated by commas (LIMIT_EXEMPT_USERS)."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([0-9]+( *, *[0-9]+)*)?$", var.limit_exempt_users))
    error_message = "limit_exempt_users: want Telegram user ids separated by commas, such as 12345,67890."
  }
}

variable "speechkit_requests_per_hour" {
  description = "SpeechKit's quota of recognition requests an hour, as granted to the cloud: 500 unless support raised it (SPEECHKIT_REQUESTS_PER_HOUR; docs/scale.md)."
  type        = number
  default     = 500

  validation {
    condition     = var.speechkit_requests_per_hour >= 2 && var.speechkit_requests_per_hour <= 1000000 && floor(var.speechkit_requests_per_hour) == var.speechkit_requests_per_hour
    error_message = "speechkit_requests_per_hour: want a whole number from 2 to 1000000."
  }
}

variable "speechkit_sync_url" {
  description = "SpeechKit's synchronous recognition endpoint, REST API v1 (SPEECHKIT_SYNC_URL; docs/configuration.md)."
  type        = string
  default     = "https://stt.api.cloud.yandex.net/speech/v1/stt:recognize"

  validation {
    condition     = can(regex("^https://[^/@]+/", var.speechkit_sync_url))
    error_message = "speechkit_sync_url: want an https URL without a user name or password, such as https://stt.api.cloud.yandex.net/speech/v1/stt:recognize."
  }
}

variable "speechkit_sync_max_duration" {
  description = "The longest recording recognized synchronously, in one request, at most SpeechKit's 30s; 0 turns synchronous recognition off (SPEECHKIT_SYNC_MAX_DURATION; docs/settings.md)."
  type        = string
  default     = "30s"

  validation {
    condition     = can(regex("^(0|0s|[1-9]s|[12][0-9]s|30s)$", var.speechkit_sync_max_duration))
    error_message = "speechkit_sync_max_duration: want 0 (off) or whole seconds from 1s to 30s, such as 30s."
  }
}

variable "default_language" {
  description = "A job's recognition language when it names none (DEFAULT_LANGUAGE)."
  type        = string
  default     = "ru-RU"
}

variable "name_prefix" {
  description = "Prefix of every resource's name; bucket names add the folder id, since they are global."
  type        = string
  default     = "transcriber"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,19}$", var.name_prefix))
    error_message = "name_prefix: want 2 to 20 lowercase letters, digits and hyphens, starting with a letter."
  }
}

variable "dist_dir" {
  description = "Where `make package` wrote the function zips (api.zip, ingest.zip, poll.zip, telegram.zip); relative paths are relative to this directory."
  type        = string
  default     = "../dist"
}

variable "log_level" {
  description = "The functions' log level (LOG_LEVEL)."
  type        = string
  default     = "info"

  validation {
    condition     = contains(["debug", "info", "warn", "error"], var.log_level)
    error_message = "log_level: want debug, info, warn or error."
  }
}

variable "force_destroy_buckets" {
  description = "Let `terraform destroy` delete the buckets with everything in them. Off by default: set it only to uninstall."
  type        = bool
  default     = false
}

variable "summary_model_uri" {
  description = "The model SpeechKit summarizes with when a job asks for a summary (SUMMARY_MODEL_URI), such as gpt://<folder id>/yandexgpt-lite/latest; empty turns summaries off. The functions' accounts then also need the role to use language models in the folder, which this configuration does not grant (docs/deploy.md)."
  type        = string
  default     = ""
}

variable "reuse_scope" {
  description = "How far a done job's transcript is reused for the same recording and options: payer, installation or off (REUSE_SCOPE; docs/configuration.md)."
  type        = string
  default     = "payer"
  validation {
    condition     = contains(["payer", "installation", "off"], var.reuse_scope)
    error_message = "reuse_scope is payer, installation or off."
  }
}

variable "limit_translation_per_day" {
  description = "Characters one API token or Telegram user may have translated per UTC day; 0 is no limit (LIMIT_TRANSLATION_PER_DAY)."
  type        = number
  default     = 250000
}
