package tftest

import (
	"fmt"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/stretchr/testify/require"
)

// --- secrets in the state and who may invoke what -----------------------------

// checkSecretsHashed: no Lockbox secret version keeps a value in Terraform's
// state. yandex_lockbox_secret_version stores each entry's text_value as
// given; yandex_lockbox_secret_version_hashed stores a hash of each
// text_value_N (docs/deploy.md, "What the state holds").
func checkSecretsHashed(c *config) []string {
	var bad []string
	vs := c.resources("yandex_lockbox_secret_version")
	for _, label := range sortedKeys(vs) {
		for _, e := range blocksOf(vs[label].Body, "entries") {
			if attr(e.Body, "text_value") != nil {
				key, _ := literal(e.Body, "key")
				bad = append(bad, fmt.Sprintf("yandex_lockbox_secret_version.%s: entry %q keeps its text_value in the state; use yandex_lockbox_secret_version_hashed", label, key))
			}
		}
	}
	return bad
}

// versionSecret is the yandex_lockbox_secret a version expression belongs
// to: the secret_id of the yandex_lockbox_secret_version(_hashed) it names,
// or the secret a static key writes into (output_to_lockbox_version_id); a
// local is followed to its expression. "" when it is none of these.
func (c *config) versionSecret(e hclsyntax.Expression) string {
	for _, tr := range e.Variables() {
		addr := traversalAddr(tr)
		if len(tr) > 1 && tr.RootName() == "local" {
			if a, ok := c.locals[addr[len("local."):]]; ok {
				if s := c.versionSecret(a.Expr); s != "" {
					return s
				}
			}
			continue
		}
		name := resourceRef(e, tr.RootName())
		switch tr.RootName() {
		case "yandex_lockbox_secret_version", "yandex_lockbox_secret_version_hashed":
			if v, ok := c.resources(tr.RootName())[name]; ok {
				if s := attr(v.Body, "secret_id"); s != nil {
					return resourceRef(s.Expr, "yandex_lockbox_secret")
				}
			}
		case "yandex_iam_service_account_static_access_key":
			if k, ok := c.resources(tr.RootName())[name]; ok {
				for _, o := range blocksOf(k.Body, "output_to_lockbox") {
					if s := attr(o.Body, "secret_id"); s != nil {
						return resourceRef(s.Expr, "yandex_lockbox_secret")
					}
				}
			}
		}
	}
	return ""
}

// checkSecretVersions: each function's secrets block names a version of
// the secret it names, so renaming or retyping a version resource cannot
// hand a function another secret's value.
func checkSecretVersions(c *config) []string {
	var bad []string
	fns := c.resources("yandex_function")
	for _, label := range sortedKeys(fns) {
		for _, s := range blocksOf(fns[label].Body, "secrets") {
			name, _ := literal(s.Body, "environment_variable")
			id, v := attr(s.Body, "id"), attr(s.Body, "version_id")
			if id == nil || v == nil {
				bad = append(bad, fmt.Sprintf("yandex_function.%s: the secret for %s has no id or no version_id", label, name))
				continue
			}
			secret := resourceRef(id.Expr, "yandex_lockbox_secret")
			if got := c.versionSecret(v.Expr); got != secret {
				bad = append(bad, fmt.Sprintf("yandex_function.%s: %s takes yandex_lockbox_secret.%s with a version of %q", label, name, secret, got))
			}
		}
	}
	return bad
}

// Roles that let an account invoke a function: functions.functionInvoker,
// and serverless.functions.invoker, the name the provider's examples use.
var invokerRoles = []string{"functions.functionInvoker", "serverless.functions.invoker"}

// Bindings on a folder or a cloud: a role there reaches every resource in it.
var folderBindings = []string{
	"yandex_resourcemanager_folder_iam_member", "yandex_resourcemanager_folder_iam_binding",
	"yandex_resourcemanager_cloud_iam_member", "yandex_resourcemanager_cloud_iam_binding",
}

// checkInvokers: nobody may invoke functions by a role on the folder or the
// cloud (the trigger account would reach api and telegram, the gateway's
// ingest and poll); each trigger's account holds the invoker role on the
// function it calls, and the account its dlq block names holds ymq.writer
// on the folder, the narrowest place Message Queue takes a role.
func checkInvokers(c *config) []string {
	var bad []string
	for _, typ := range folderBindings {
		bs := c.resources(typ)
		for _, label := range sortedKeys(bs) {
			role, _ := literal(bs[label].Body, "role")
			if contains(invokerRoles, role) {
				bad = append(bad, fmt.Sprintf("%s.%s grants %s on the folder or cloud: it reaches every function there; grant it on the function (yandex_function_iam_binding)", typ, label, role))
			}
		}
	}
	fnBindings := []string{"yandex_function_iam_binding", "yandex_function_iam_member"}
	trs := c.resources("yandex_function_trigger")
	for _, label := range sortedKeys(trs) {
		addr := "yandex_function_trigger." + label
		for _, f := range blocksOf(trs[label].Body, "function") {
			id, sa := attr(f.Body, "id"), attr(f.Body, "service_account_id")
			if id == nil || sa == nil {
				bad = append(bad, addr+": its function block has no id or no service_account_id")
				continue
			}
			fn := resourceRef(id.Expr, "yandex_function")
			account := resourceRef(sa.Expr, "yandex_iam_service_account")
			if !c.granted(fnBindings, "function_id", "yandex_function."+fn, account, invokerRoles...) {
				bad = append(bad, fmt.Sprintf("%s: its account (yandex_iam_service_account.%s) has no functions.functionInvoker on yandex_function.%s, which it calls", addr, account, fn))
			}
		}
		for _, d := range blocksOf(trs[label].Body, "dlq") {
			sa := attr(d.Body, "service_account_id")
			if sa == nil {
				bad = append(bad, addr+": its dlq block has no service_account_id")
				continue
			}
			account := resourceRef(sa.Expr, "yandex_iam_service_account")
			if !c.granted(folderBindings[:2], "folder_id", "var.folder_id", account, "ymq.writer", "ymq.admin") {
				bad = append(bad, fmt.Sprintf("%s: its dlq account (yandex_iam_service_account.%s) has no ymq.writer on the folder", addr, account))
			}
		}
	}
	return bad
}

// No secret value sits in the state as Lockbox versions; each function
// takes a version of the secret it names.
func TestSecretsStayOutOfTheState(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkSecretsHashed(c))
	require.Empty(t, checkSecretVersions(c))
}

// The triggers' account invokes ingest and poll and nothing else; nobody
// invokes by a folder role.
func TestInvokersAreBoundPerFunction(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkInvokers(c))
}

func TestAccessChecksCanFail(t *testing.T) {
	src, _ := load(t)

	t.Run("a secret version with its text in the state", func(t *testing.T) {
		c := mutate(t, src, "lockbox.tf",
			"resource \"yandex_lockbox_secret_version_hashed\" \"bot_token\" {\n  secret_id    = yandex_lockbox_secret.bot_token.id\n  key_1        = \"token\"\n  text_value_1 = var.telegram_bot_token\n}",
			"resource \"yandex_lockbox_secret_version\" \"bot_token\" {\n  secret_id = yandex_lockbox_secret.bot_token.id\n  entries {\n    key        = \"token\"\n    text_value = var.telegram_bot_token\n  }\n}")
		requireReported(t, checkSecretsHashed(c), `yandex_lockbox_secret_version.bot_token: entry "token" keeps its text_value in the state`)
		// The functions still name the hashed version, which is gone.
		requireReported(t, checkSecretVersions(c), `yandex_function.telegram: TELEGRAM_BOT_TOKEN takes yandex_lockbox_secret.bot_token with a version of ""`)
	})

	t.Run("a function given another secret's version", func(t *testing.T) {
		c := mutate(t, src, "functions.tf",
			"    id                   = yandex_lockbox_secret.webhook_secret.id\n    version_id           = yandex_lockbox_secret_version_hashed.webhook_secret.id",
			"    id                   = yandex_lockbox_secret.webhook_secret.id\n    version_id           = yandex_lockbox_secret_version_hashed.upload_link_secret.id")
		requireReported(t, checkSecretVersions(c),
			`yandex_function.telegram: TELEGRAM_WEBHOOK_SECRET takes yandex_lockbox_secret.webhook_secret with a version of "upload_link_secret"`)
	})

	t.Run("the trigger account invokes by a folder role", func(t *testing.T) {
		c := mutate(t, src, "iam.tf",
			"resource \"yandex_function_iam_binding\" \"ingest_invoker\" {\n  function_id = yandex_function.ingest.id\n  role        = \"functions.functionInvoker\"\n  members     = [local.member.trigger]\n}",
			"resource \"yandex_resourcemanager_folder_iam_member\" \"trigger_invoker\" {\n  folder_id = var.folder_id\n  role      = \"functions.functionInvoker\"\n  member    = local.member.trigger\n}")
		requireReported(t, checkInvokers(c),
			"yandex_resourcemanager_folder_iam_member.trigger_invoker grants functions.functionInvoker on the folder or cloud",
			"yandex_function_trigger.ingest: its account (yandex_iam_service_account.trigger) has no functions.functionInvoker on yandex_function.ingest")
	})

	t.Run("the trigger account bound to the wrong function", func(t *testing.T) {
		c := mutate(t, src, "iam.tf", "  function_id = yandex_function.poll.id\n", "  function_id = yandex_function.ingest.id\n")
		requireReported(t, checkInvokers(c),
			"yandex_function_trigger.poll: its account (yandex_iam_service_account.trigger) has no functions.functionInvoker on yandex_function.poll")
	})

	t.Run("the dead-letter queues' writer missing", func(t *testing.T) {
		c := mutate(t, src, "iam.tf", `role      = "ymq.writer"`, `role      = "ymq.reader"`)
		requireReported(t, checkInvokers(c),
			"yandex_function_trigger.ingest: its dlq account (yandex_iam_service_account.trigger) has no ymq.writer on the folder")
	})
}
