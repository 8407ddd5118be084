# Terraform and the providers, pinned. The yandex provider's version was read
# from its changelog (.changes/0.238.0.md, October 8, 2026); the resources and
# fields used here were checked against its documentation (docs/deploy.md,
# "What Terraform creates", lists what is still uncertain).
terraform {
  required_version = ">= 1.5.0"

  required_providers {
    yandex = {
      source  = "yandex-cloud/yandex"
      version = "0.238.0"
    }
    random = {
      source  = "hashicorp/random"
      version = "3.7.2"
    }
  }
}

# Credentials come from the environment: YC_TOKEN (an IAM token,
# `yc iam create-token`) or YC_SERVICE_ACCOUNT_KEY_FILE. docs/deploy.md,
# "Before you start".
provider "yandex" {
  cloud_id  = var.cloud_id
  folder_id = var.folder_id
  zone      = var.zone
}
