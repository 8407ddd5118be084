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
  description = "The bot's token from @BotFather. It goes to Lockbox; Terraform's state holds it too, so keep the state private."
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
