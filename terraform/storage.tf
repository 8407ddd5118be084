# Object Storage: the data bucket (sources/, audio/, results/) and the deploy
# bucket that holds the function zips. Both are made with the deployer's
# static key (iam.tf); bucket names are global, so they carry the folder id.

# Both buckets are private: that is Object Storage's default, so neither sets
# `acl` (the provider deprecates the argument in favour of
# yandex_storage_bucket_grant; a test in terraform/tftest keeps it unset).
# Access is by IAM roles (iam.tf) and presigned URLs only.

locals {
  data_bucket   = "${var.name_prefix}-data-${var.folder_id}"
  deploy_bucket = "${var.name_prefix}-deploy-${var.folder_id}"

  # Relative dist paths are relative to this module, whatever the directory
  # terraform runs in.
  dist_dir = startswith(var.dist_dir, "/") ? var.dist_dir : "${path.module}/${var.dist_dir}"
  zip_sha  = { for name in ["api", "ingest", "poll", "telegram"] : name => filesha256("${local.dist_dir}/${name}.zip") }

  s3_keys = {
    access_key = yandex_iam_service_account_static_access_key.deployer.access_key
    secret_key = yandex_iam_service_account_static_access_key.deployer.secret_key
  }
}

resource "yandex_storage_bucket" "data" {
  bucket        = local.data_bucket
  access_key    = local.s3_keys.access_key
  secret_key    = local.s3_keys.secret_key
  force_destroy = var.force_destroy_buckets

  # How long objects live, by prefix (docs/deploy.md, "Lifecycle rules"). The
  # prefixes are those of job.SourceKey, job.AudioKey and job.ResultKey; a test
  # (terraform/tftest) keeps them equal. Each rule also aborts the multipart
  # uploads a crashed conversion left behind (docs/settings.md, "Abort after a
  # failed upload": this rule is the backstop).
  lifecycle_rule {
    id      = "expire-sources"
    enabled = true
    filter {
      prefix = "sources/"
    }
    expiration {
      days = 3
    }
    abort_incomplete_multipart_upload_days = 1
  }

  # audio/ holds the converted pieces (job.AudioKey) and, since ingest pins
  # what it checked, the accepted source itself: a server-side copy of
  # sources/<id> at audio/<id>/source (job.AcceptedKey), after which ingest
  # deletes sources/<id>. A copy is a new object, so its 3 days count from the
  # copy. A test checks that every key the code writes has a rule.
  lifecycle_rule {
    id      = "expire-audio"
    enabled = true
    filter {
      prefix = "audio/"
    }
    expiration {
      days = 3
    }
    abort_incomplete_multipart_upload_days = 1
  }

  lifecycle_rule {
    id      = "expire-results"
    enabled = true
    filter {
      prefix = "results/"
    }
    expiration {
      days = 30
    }
    abort_incomplete_multipart_upload_days = 1
  }

  # The upload page (a browser) PUTs the file straight to the presigned URL.
  cors_rule {
    allowed_methods = ["PUT"]
    allowed_origins = ["*"]
    allowed_headers = ["Content-Type", "Content-Length"]
    expose_headers  = ["ETag"]
    max_age_seconds = 3600
  }

  depends_on = [
    yandex_resourcemanager_folder_iam_member.deployer_storage,
    yandex_resourcemanager_folder_iam_member.deployer_storage_config,
  ]
}

resource "yandex_storage_bucket" "deploy" {
  bucket        = local.deploy_bucket
  access_key    = local.s3_keys.access_key
  secret_key    = local.s3_keys.secret_key
  force_destroy = var.force_destroy_buckets

  depends_on = [yandex_resourcemanager_folder_iam_member.deployer_storage]
}

# One object per function zip, named by its SHA-256: a new build is a new
# object, and the function's package names it.
resource "yandex_storage_object" "zip" {
  for_each = toset(["api", "ingest", "poll", "telegram"])

  bucket       = yandex_storage_bucket.deploy.bucket
  key          = "functions/${each.key}/${local.zip_sha[each.key]}.zip"
  source       = "${local.dist_dir}/${each.key}.zip"
  content_type = "application/zip"
  access_key   = local.s3_keys.access_key
  secret_key   = local.s3_keys.secret_key
}
