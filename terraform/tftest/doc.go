// Package tftest checks the Terraform configuration in terraform/ against the
// code it deploys, with no Terraform and no cloud: the files are parsed with
// HCL and compared with the functions' sources (functions/<name>/index.go),
// the configuration loader (internal/app), the object keys (internal/job),
// the OpenAPI document API Gateway serves (docs/openapi.yaml) and the webhook
// path (internal/telegram). Everything is in its tests; run them with
// `go test ./terraform/...`. docs/deploy.md, "Checks", lists what they cover.
package tftest
