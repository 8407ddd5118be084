# The job store: serverless YDB. Its schema is not described here: it is the
# code's schema steps (internal/store/ydb/schema.go), applied by
# `transcriber migrate` the same way in every environment (docs/deploy.md,
# "The database schema").

resource "yandex_ydb_database_serverless" "main" {
  folder_id           = var.folder_id
  name                = "${var.name_prefix}-jobs"
  deletion_protection = false
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
