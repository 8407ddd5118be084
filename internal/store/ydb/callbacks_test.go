package ydb

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/callback"
)

// fullCallback is a callback with every field set, as a delivery that
// failed once has it.
func fullCallback() callback.Delivery {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return callback.Delivery{
		JobID: "01jd0m3y8k9q2r5t7v4w6x8z0a", URL: "https://hooks.example.com/cb", TokenHash: strings.Repeat("a", 64),
		WebhookID: "msg_01jd0m3y8k9q2r5t7v4w6x8z0a", State: callback.Pending, Attempts: 1,
		NextAt: at.Add(time.Minute), LeaseUntil: at.Add(time.Second), FirstAt: at, LastAt: at, LastStatus: 503,
		LastError: "status_not_2xx", CreatedAt: at.Add(-time.Hour), UpdatedAt: at.Add(time.Second),
	}
}

// The callbacks table is in step 1 with the token column it needs, and
// has the shape the statements read.
func TestCallbacksSchemaSteps(t *testing.T) {
	require.Contains(t, steps[0].ddl, createCallbacks)
	require.Contains(t, steps[0].ddl, createAPITokens)

	schema, errs := parseSchema(ddlOf(statementConstants(t)))
	require.Empty(t, errs)
	cb := schema["callbacks"]
	require.Len(t, cb.columns, len(callbackColumnList))
	for _, c := range callbackColumnList {
		_, ok := cb.columns[c.name]
		require.True(t, ok, "column %s", c.name)
	}
	require.True(t, cb.columns["job_id"].notNull)
	require.True(t, cb.indexes["callbacks_due"])
	require.Equal(t, column{typ: "Utf8"}, schema["api_tokens"].columns["callback_secret"])
}

// The agreement check catches drift in the callback statements too.
func TestCallbackStatementsAgreementCatchesDrift(t *testing.T) {
	consts := statementConstants(t)
	schema, _ := parseSchema(ddlOf(consts))
	bound := boundParams()
	for _, name := range []string{"insertCallbacks", "upsertCallbacks", "selectCallback", "selectDueCallbacks", "insertToken", "selectTokenByHash"} {
		require.Empty(t, checkStatement(schema, consts[name], bound[name]), "%s as written agrees", name)
	}
	for name, edit := range map[string][2]string{
		"selectDueCallbacks": {"lease_until <= $now", "lease_untl <= $now"},
		"selectCallback":     {"WHERE job_id = $job_id", "WHERE job = $job_id"},
		"upsertCallbacks":    {"SELECT job_id, url, token_hash", "SELECT job_id, uri, token_hash"},
		"insertToken":        {"revoked_at, callback_secret)", "revoked_at, callback_secrt)"},
	} {
		altered := strings.Replace(consts[name], edit[0], edit[1], 1)
		require.NotEqual(t, consts[name], altered, name)
		require.NotEmpty(t, checkStatement(schema, altered, bound[name]), name)
	}
	// A parameter bound with another type than declared.
	wrong := callbacksParams(fullCallback())
	altered := strings.Replace(consts["upsertCallbacks"], "last_status: Int32", "last_status: Int64", 1)
	require.NotEmpty(t, checkStatement(schema, altered, wrong))
}
