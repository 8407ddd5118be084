package tftest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/telegram"
)

// The tests run in terraform/tftest: the configuration is one level up, the
// repository two.
const (
	tfDir    = ".."
	repoRoot = "../.."
)

func load(t *testing.T) (map[string][]byte, *config) {
	t.Helper()
	src, err := readConfig(tfDir)
	require.NoError(t, err)
	c, err := parseConfig(src)
	require.NoError(t, err)
	return src, c
}

// mutate parses a copy of the configuration with one edit made to one file's
// text; the edit must apply exactly once.
func mutate(t *testing.T, src map[string][]byte, file, old, new string) *config {
	t.Helper()
	text := string(src[file])
	require.Equal(t, 1, strings.Count(text, old), "%s: the edit %q must match exactly once", file, old)
	cp := map[string][]byte{}
	for k, v := range src {
		cp[k] = v
	}
	cp[file] = []byte(strings.Replace(text, old, new, 1))
	c, err := parseConfig(cp)
	require.NoError(t, err)
	return c
}

// requireReported: the check found a problem mentioning every fragment.
func requireReported(t *testing.T, problems []string, fragments ...string) {
	t.Helper()
	all := strings.Join(problems, "\n")
	for _, f := range fragments {
		require.Contains(t, all, f, "the check should report it; it reported:\n%s", all)
	}
}

// loaderReads is every environment variable the functions' loader asks for:
// app.FromEnv (the configuration) and app.CloudStores (the job store), run
// with a getenv that records the names and answers "".
func loaderReads(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	record := func(name string) string { names[name] = true; return "" }
	_, err := app.FromEnv(record)
	require.NoError(t, err, "an empty environment is a valid configuration")
	_, err = app.CloudStores(context.Background(), record)
	require.True(t, errors.Is(err, app.ErrNoCloudStore), "without YDB_CONNECTION_STRING CloudStores stops before connecting: %v", err)
	require.NotEmpty(t, names)
	return names
}

// Only this package's Go lives in terraform/.
func TestOnlyThisPackageIsGoInTerraform(t *testing.T) {
	err := filepath.WalkDir(tfDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, _ := filepath.Rel(tfDir, path)
			require.Equal(t, "tftest", filepath.Dir(rel), "%s: the only Go in terraform/ is terraform/tftest", rel)
		}
		return nil
	})
	require.NoError(t, err)
}

func TestFormatted(t *testing.T) {
	src, _ := load(t)
	require.Empty(t, checkFormat(src))
}

func TestFunctionsRunTheirHandlers(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkFunctions(c, repoRoot))
}

func TestEnvironmentIsWhatTheLoaderReads(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkEnvironment(c, loaderReads(t)))
}

func TestBucketAndTriggerUseTheJobKeys(t *testing.T) {
	_, c := load(t)
	const id = "01jobid"
	source := prefixOf(job.SourceKey(id), id)
	require.Equal(t, "sources/", source)
	require.Empty(t, checkTriggers(c, source))
	require.Empty(t, checkLifecycle(c, "data", []string{
		source,
		prefixOf(job.AudioKey(id, 0), id),
		prefixOf(job.ResultKey(id), id),
	}))
	// Every key the code writes expires, the accepted copy of an upload
	// included; that copy is outside the trigger's prefix, so making it
	// starts no second ingest.
	require.Empty(t, checkKeysExpire(c, "data", jobKeys(id)))
	require.False(t, strings.HasPrefix(job.AcceptedKey(id), source), "the accepted copy %s would start ingest again", job.AcceptedKey(id))
}

// jobKeys is every object key a job's files take in the data bucket, as
// the code lists them (job.FileKeys) for a job with one converted piece.
func jobKeys(id string) []string {
	return job.FileKeys(job.Job{ID: id, Segments: []job.Segment{{AudioKey: job.AudioKey(id, 0)}}})
}

// No bucket sets the deprecated acl.
func TestBucketsSetNoACL(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkNoBucketACL(c))
}

// Every role granted is one the role reference documents.
func TestRolesAreDocumented(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkRoles(c, documentedRoles))
}

// Each function's account can read the Lockbox secrets it is given, and the
// S3 key they use may read, write and delete in the data bucket (ingest's
// copy of sources/<id> to audio/<id>/source and the delete after it).
func TestFunctionsCanUseTheirSecretsAndTheBucket(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkSecretAccess(c))
	require.Empty(t, checkS3KeyAccess(c))
}

func TestGatewayServesTheOpenAPIDocument(t *testing.T) {
	_, c := load(t)
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "openapi.yaml"))
	require.NoError(t, err)
	require.Empty(t, checkGateway(c, string(doc)))
	require.Empty(t, checkSpecExtensions(string(doc)))
	require.Empty(t, checkSpecPortable(string(doc)))
}

// The webhook Terraform registers is the path the bot serves.
func TestWebhookURLIsTheBotsPath(t *testing.T) {
	_, c := load(t)
	a := c.locals["webhook_url"]
	require.NotNil(t, a, "local.webhook_url")
	got := c.text(c.where[a], a.Expr)
	require.Equal(t, `"${local.public_url}`+telegram.WebhookPath+`"`, got)
}

func TestCommandsInterpolateNothing(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkCommands(c))
}

func TestNoDependencyCycle(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkAcyclic(c))
}

// Each check reports what it exists to catch: the same checks, run on a
// copy of the configuration (or of the loader's names, or of a function's
// source) with one thing broken.
func TestChecksCanFail(t *testing.T) {
	src, good := load(t)
	reads := loaderReads(t)

	t.Run("unformatted file", func(t *testing.T) {
		cp := map[string][]byte{"outputs.tf": []byte("output \"x\" {\nvalue = 1\n}\n")}
		requireReported(t, checkFormat(cp), "outputs.tf is not formatted")
	})

	t.Run("entrypoint renamed", func(t *testing.T) {
		c := mutate(t, src, "functions.tf",
			"entrypoint         = \"index.Handler\"\n  memory             = 1024",
			"entrypoint         = \"main.Handler\"\n  memory             = 1024")
		requireReported(t, checkFunctions(c, repoRoot), `yandex_function.ingest: entrypoint "main.Handler", want index.Handler`)
	})

	t.Run("runtime changed", func(t *testing.T) {
		c := mutate(t, src, "functions.tf",
			"runtime            = \"golang123\"\n  entrypoint         = \"index.Handler\"\n  memory             = 512",
			"runtime            = \"golang121\"\n  entrypoint         = \"index.Handler\"\n  memory             = 512")
		requireReported(t, checkFunctions(c, repoRoot), `yandex_function.poll: runtime "golang121"`)
	})

	t.Run("package names a zip nobody builds", func(t *testing.T) {
		c := mutate(t, src, "functions.tf",
			`object_name = yandex_storage_object.zip["poll"].key`,
			`object_name = yandex_storage_object.zip["worker"].key`)
		requireReported(t, checkFunctions(c, repoRoot),
			`its package is zip "worker", which yandex_storage_object.zip does not upload`,
			"functions/poll/index.go is deployed by no yandex_function")
	})

	t.Run("version hash of another zip", func(t *testing.T) {
		c := mutate(t, src, "functions.tf",
			`user_hash          = local.zip_sha["telegram"]`,
			`user_hash          = local.zip_sha["api"]`)
		requireReported(t, checkFunctions(c, repoRoot), "yandex_function.telegram: user_hash should be filesha256 of telegram.zip")
	})

	t.Run("function without func Handler", func(t *testing.T) {
		root := t.TempDir()
		for _, name := range []string{"api", "ingest", "poll", "telegram"} {
			b, err := os.ReadFile(filepath.Join(repoRoot, "functions", name, "index.go"))
			require.NoError(t, err)
			if name == "ingest" {
				b = []byte(strings.Replace(string(b), "func Handler(", "func handler(", 1))
			}
			require.NoError(t, os.MkdirAll(filepath.Join(root, "functions", name), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "functions", name, "index.go"), b, 0o600))
		}
		requireReported(t, checkFunctions(good, root), "yandex_function.ingest deploys ingest.zip", "declares no func Handler")
	})

	t.Run("environment name misspelt", func(t *testing.T) {
		c := mutate(t, src, "functions.tf", "S3_BUCKET              =", "S3_BUKCET              =")
		requireReported(t, checkEnvironment(c, reads),
			"yandex_function.api: S3_BUKCET is not a variable the loader reads",
			"yandex_function.poll: S3_BUCKET is not set")
	})

	t.Run("secret renamed", func(t *testing.T) {
		c := mutate(t, src, "functions.tf",
			"environment_variable = \"TELEGRAM_WEBHOOK_SECRET\"",
			"environment_variable = \"WEBHOOK_SECRET\"")
		requireReported(t, checkEnvironment(c, reads),
			"yandex_function.telegram: WEBHOOK_SECRET is not a variable the loader reads",
			"yandex_function.telegram: TELEGRAM_WEBHOOK_SECRET is not set")
	})

	t.Run("secret in the plain environment", func(t *testing.T) {
		c := mutate(t, src, "functions.tf",
			"TELEGRAM_ALLOWED_USERS = var.telegram_allowed_users",
			"TELEGRAM_ALLOWED_USERS = var.telegram_allowed_users\n    UPLOAD_LINK_SECRET     = \"x\"")
		requireReported(t, checkEnvironment(c, reads),
			"yandex_function.telegram: UPLOAD_LINK_SECRET is a secret",
			"yandex_function.telegram: UPLOAD_LINK_SECRET is given 2 times")
	})

	t.Run("a secret the function does not need", func(t *testing.T) {
		c := mutate(t, src, "functions.tf",
			"    environment_variable = \"UPLOAD_LINK_SECRET\"\n  }\n\n  depends_on = [\n    terraform_data.migrate,\n    yandex_lockbox_secret_iam_binding.s3_key,\n    yandex_lockbox_secret_iam_binding.upload_link_secret,",
			"    environment_variable = \"UPLOAD_LINK_SECRET\"\n  }\n  secrets {\n    id                   = yandex_lockbox_secret.bot_token.id\n    version_id           = yandex_lockbox_secret_version_hashed.bot_token.id\n    key                  = \"token\"\n    environment_variable = \"TELEGRAM_BOT_TOKEN\"\n  }\n\n  depends_on = [\n    terraform_data.migrate,\n    yandex_lockbox_secret_iam_binding.s3_key,\n    yandex_lockbox_secret_iam_binding.upload_link_secret,")
		requireReported(t, checkEnvironment(c, reads), "yandex_function.api: gets secret TELEGRAM_BOT_TOKEN, which it does not need")
	})

	t.Run("loader stops reading a variable", func(t *testing.T) {
		renamed := map[string]bool{}
		for k := range reads {
			renamed[k] = k != "UPLOAD_LINK_SECRET"
		}
		requireReported(t, checkEnvironment(good, renamed),
			"the test requires UPLOAD_LINK_SECRET for api, but the loader does not read it",
			"yandex_function.api: UPLOAD_LINK_SECRET is not a variable the loader reads")
	})

	t.Run("trigger prefix", func(t *testing.T) {
		c := mutate(t, src, "triggers.tf", `prefix       = "sources/"`, `prefix       = "source/"`)
		requireReported(t, checkTriggers(c, "sources/"), `prefix "source/", want "sources/"`)
	})

	t.Run("lifecycle prefix", func(t *testing.T) {
		c := mutate(t, src, "storage.tf", `prefix = "audio/"`, `prefix = "audios/"`)
		requireReported(t, checkLifecycle(c, "data", []string{"sources/", "audio/", "results/"}), "lifecycle rules cover [audios/ results/ sources/]")
	})

	t.Run("lifecycle misses the accepted copy", func(t *testing.T) {
		c := mutate(t, src, "storage.tf", `prefix = "audio/"`, `prefix = "audio/pieces/"`)
		requireReported(t, checkKeysExpire(c, "data", jobKeys("01jobid")), "no lifecycle rule expires audio/01jobid/source")
	})

	t.Run("bucket sets acl", func(t *testing.T) {
		c := mutate(t, src, "storage.tf",
			"  bucket        = local.deploy_bucket\n",
			"  bucket        = local.deploy_bucket\n  acl           = \"private\"\n")
		requireReported(t, checkNoBucketACL(c), "yandex_storage_bucket.deploy sets acl")
	})

	t.Run("batch_cutoff out of range", func(t *testing.T) {
		c := mutate(t, src, "triggers.tf", `batch_cutoff = "1"`, `batch_cutoff = "0"`)
		requireReported(t, checkTriggers(c, "sources/"), `yandex_function_trigger.ingest: batch_cutoff "0", want 1-60 seconds`)
	})

	t.Run("batched uploads", func(t *testing.T) {
		c := mutate(t, src, "triggers.tf", `batch_size   = "1"`, `batch_size   = "10"`)
		requireReported(t, checkTriggers(c, "sources/"), `yandex_function_trigger.ingest: batch_size "10", want 1`)
	})

	t.Run("undocumented role", func(t *testing.T) {
		c := mutate(t, src, "iam.tf", `role      = "ymq.writer"`, `role      = "ymq.sender"`)
		requireReported(t, checkRoles(c, documentedRoles), `yandex_resourcemanager_folder_iam_member.trigger_dlq_writer: role "ymq.sender"`)
	})

	t.Run("a function that cannot read its secret", func(t *testing.T) {
		c := mutate(t, src, "lockbox.tf",
			"members   = [local.member.telegram, local.member.ingest, local.member.poll]",
			"members   = [local.member.telegram, local.member.poll]")
		requireReported(t, checkSecretAccess(c),
			"yandex_function.ingest: its account (yandex_iam_service_account.ingest) has no lockbox.payloadViewer on yandex_lockbox_secret.bot_token, which gives it TELEGRAM_BOT_TOKEN")
	})

	t.Run("the S3 key cannot write the data bucket", func(t *testing.T) {
		c := mutate(t, src, "iam.tf", `role    = "storage.editor"`, `role    = "storage.viewer"`)
		requireReported(t, checkS3KeyAccess(c),
			"yandex_function.ingest: S3_ACCESS_KEY_ID is the key of yandex_iam_service_account.presigner, which cannot write and delete in the data bucket")
	})

	t.Run("gateway-wide CORS outside x-yc-apigateway", func(t *testing.T) {
		doc := "openapi: 3.0.0\nx-yc-apigateway-cors:\n  origin: \"*\"\npaths: {}\n"
		requireReported(t, checkSpecExtensions(doc),
			"top-level x-yc-apigateway-cors is not an API Gateway setting",
			"no x-yc-apigateway.cors rule")
	})

	t.Run("YAML anchors in the gateway's document", func(t *testing.T) {
		doc := "openapi: 3.0.0\nx-shared: &shared\n  type: cloud_functions\npaths:\n  /a:\n    get:\n" +
			"      x-yc-apigateway-integration: *shared\n  /b:\n    get:\n      x-yc-apigateway-integration:\n        <<: *shared\n"
		requireReported(t, checkSpecPortable(doc), "anchor &shared", "alias *shared", "merge key <<")
	})

	t.Run("a security scheme without a function authorizer", func(t *testing.T) {
		doc := "openapi: 3.0.0\ncomponents:\n  securitySchemes:\n    bearer: {type: http, scheme: bearer}\n" +
			"    jwt:\n      type: http\n      scheme: bearer\n      x-yc-apigateway-authorizer: {type: jwt}\n" +
			"    fn:\n      type: http\n      scheme: bearer\n      x-yc-apigateway-authorizer: {type: function, function_id: x}\npaths: {}\n"
		got := checkSpecPortable(doc)
		requireReported(t, got, "security scheme bearer has no function authorizer", "security scheme jwt has no function authorizer")
		require.Len(t, got, 2, "the scheme with a function authorizer passes: %v", got)
	})

	t.Run("gateway template variable missing", func(t *testing.T) {
		c := mutate(t, src, "gateway.tf", "    telegram_function_id       = yandex_function.telegram.id\n", "")
		doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "openapi.yaml"))
		require.NoError(t, err)
		requireReported(t, checkGateway(c, string(doc)), "templatefile passes [api_function_id gateway_service_account_id]")
	})

	t.Run("gateway renders another file", func(t *testing.T) {
		c := mutate(t, src, "gateway.tf", `"${path.module}/../docs/openapi.yaml"`, `"${path.module}/openapi.yaml"`)
		requireReported(t, checkGateway(c, "${api_function_id} ${telegram_function_id} ${gateway_service_account_id}"),
			`local.gateway_spec renders "${path.module}/openapi.yaml"`)
	})

	t.Run("secret in a command", func(t *testing.T) {
		c := mutate(t, src, "gateway.tf", `| curl --silent`, `| curl --user "${var.telegram_bot_token}" --silent`)
		requireReported(t, checkCommands(c), "terraform_data.webhook: the command interpolates var.telegram_bot_token")
	})

	t.Run("a function given the gateway's address", func(t *testing.T) {
		// The cycle the bot's request-derived upload links avoid: the
		// gateway depends on the functions, so no function may depend on it.
		c := mutate(t, src, "functions.tf",
			"TELEGRAM_ALLOWED_USERS = var.telegram_allowed_users",
			"TELEGRAM_ALLOWED_USERS = var.telegram_allowed_users\n    PUBLIC_URL             = local.public_url")
		requireReported(t, checkAcyclic(c), "dependency cycle:", "yandex_api_gateway.main", "yandex_function.telegram")
	})
}

// With the Terraform CLI (or OpenTofu) on PATH, its own formatter agrees;
// `validate` needs the providers, so it runs only after `terraform init`.
func TestTerraformCLI(t *testing.T) {
	var tool string
	for _, name := range []string{"terraform", "tofu"} {
		if _, err := exec.LookPath(name); err == nil {
			tool = name
			break
		}
	}
	if tool == "" {
		t.Skip("skipped: neither terraform nor tofu is on PATH")
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(tool, args...)
		cmd.Dir = tfDir
		cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1") // no version check over the network
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", tool, strings.Join(args, " "), out)
	}
	run("fmt", "-check", "-recursive")
	if _, err := os.Stat(filepath.Join(tfDir, ".terraform", "providers")); err != nil {
		t.Logf("%s validate skipped: the providers are not installed (run %s init in terraform/)", tool, tool)
		return
	}
	run("validate", "-no-color")
}
