package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/store/sqlite"
)

// tokenEnv is an environment whose DATA_DIR is dir.
func tokenEnv(dir string) func(string) string {
	return func(k string) string {
		if k == "DATA_DIR" {
			return dir
		}
		return ""
	}
}

// runToken runs `transcriber token args…` and returns what it printed.
func runToken(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := tokenCmd(context.Background(), args, tokenEnv(dir), &out)
	return out.String(), err
}

func mustRunToken(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := runToken(t, dir, args...)
	require.NoError(t, err, "token %v", args)
	return out
}

// authenticate checks secret against the store the command wrote, opened
// afresh as the API would.
func authenticate(t *testing.T, dir, secret string) (apitoken.Token, error) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, DBFile), clock.System())
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	return apitoken.Authenticate(ctx, sqlite.NewTokenStore(db), secret)
}

var (
	createdLine  = regexp.MustCompile(`(?m)^created token ([0-9a-z]{26}) \(([^)]*)\)$`)
	secretLine   = regexp.MustCompile(`(?m)^secret: (\S+)$`)
	callbackLine = regexp.MustCompile(`(?m)^callback secret: (whsec_\S+)$`)
)

func TestTokenCreateListRevoke(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")

	out := mustRunToken(t, dir, "create", "--name", "  build server  ")
	m := createdLine.FindStringSubmatch(out)
	require.NotNil(t, m, "create names the token:\n%s", out)
	id, name := m[1], m[2]
	require.Equal(t, "build server", name)
	s := secretLine.FindStringSubmatch(out)
	require.NotNil(t, s, "create prints the secret:\n%s", out)
	secret := s[1]
	require.True(t, apitoken.LooksLikeSecret(secret))
	require.Equal(t, 1, strings.Count(out, secret), "the secret is printed once")
	require.Contains(t, out, "shown only this once")

	tok, err := authenticate(t, dir, secret)
	require.NoError(t, err, "the printed secret authenticates")
	require.Equal(t, id, tok.ID)
	cb := callbackLine.FindStringSubmatch(out)
	require.NotNil(t, cb, "create prints the callback secret:\n%s", out)
	require.Equal(t, tok.CallbackSecret, cb[1], "the printed callback secret is the one kept to sign with")
	require.Equal(t, name, tok.Name)

	other := mustRunToken(t, dir, "create", "--name=phone")
	otherSecret := secretLine.FindStringSubmatch(other)[1]

	list := mustRunToken(t, dir, "list")
	require.Contains(t, list, id)
	require.Contains(t, list, "build server")
	require.Contains(t, list, "phone")
	require.NotContains(t, list, secret, "list never shows a secret")
	require.NotContains(t, list, cb[1], "nor a callback secret")
	require.NotContains(t, list, tok.Hash, "list never shows a hash")
	require.Regexp(t, `(?m)^`+id+`\s+build server\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+live$`, list)
	require.Less(t, strings.Index(list, "build server"), strings.Index(list, "phone"), "oldest first")

	out = mustRunToken(t, dir, "revoke", strings.ToUpper(id))
	require.Contains(t, out, "token "+id+" (build server) is revoked since ")
	again := mustRunToken(t, dir, "revoke", id)
	require.Equal(t, out, again, "revoking twice keeps the first time")

	list = mustRunToken(t, dir, "list")
	require.Regexp(t, `(?m)^`+id+`\s+build server\s+\S+\s+revoked \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, list)
	require.Regexp(t, `(?m)\s+phone\s+\S+\s+live$`, list)

	_, err = authenticate(t, dir, secret)
	require.ErrorIs(t, err, apitoken.ErrUnauthorized, "a revoked token's secret no longer authenticates")
	_, err = authenticate(t, dir, otherSecret)
	require.NoError(t, err, "the other token stays live")
}

func TestTokenRevokeUnknown(t *testing.T) {
	dir := t.TempDir()
	mustMigrate(t, dir)
	require.Contains(t, mustRunToken(t, dir, "list"), "no tokens")
	unknown := "01jd0m3y8k9q2r5t7v4w6x8z0a"
	_, err := runToken(t, dir, "revoke", unknown)
	require.ErrorContains(t, err, "no token has the id "+unknown)
	require.NotErrorIs(t, err, errUsage)

	_, err = runToken(t, dir, "revoke", "../etc/passwd")
	require.ErrorContains(t, err, "not a token id")
}

// mustMigrate creates the embedded store under dir, as `transcriber migrate` does.
func mustMigrate(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, run(context.Background(), []string{"migrate"}, env(map[string]string{"DATA_DIR": dir}), io.Discard))
}

// A list or revoke pointed at a directory without a store refuses, naming
// where it looked and how to make one, and leaves no store behind: opening
// the store there would make an empty one and answer "no tokens" or "no
// token has the id" about tokens that live elsewhere.
func TestTokenListAndRevokeNeedAStore(t *testing.T) {
	unknown := "01jd0m3y8k9q2r5t7v4w6x8z0a"
	base := t.TempDir()
	for what, dir := range map[string]string{
		"an empty directory":   base,
		"a missing directory":  filepath.Join(base, "not", "there"),
		"a relative directory": "testdata-no-such-dir",
	} {
		for _, args := range [][]string{{"list"}, {"revoke", unknown}} {
			out, err := runToken(t, dir, args...)
			require.Error(t, err, "%s: token %v", what, args)
			require.NotErrorIs(t, err, errUsage, "%s: token %v", what, args)
			msg := err.Error()
			require.Contains(t, msg, "no job store in DATA_DIR="+dir, "%s: token %v", what, args)
			require.Contains(t, msg, DBFile, "%s: token %v", what, args)
			require.Contains(t, msg, "transcriber migrate", "%s: token %v", what, args)
			require.Contains(t, msg, "make run", "%s: token %v", what, args)
			require.NotContains(t, msg, "no token has the id", "%s: token %v", what, args)
			require.Empty(t, out, "%s: token %v", what, args)
			_, serr := os.Stat(filepath.Join(dir, DBFile))
			require.ErrorIs(t, serr, fs.ErrNotExist, "%s: token %v made no store", what, args)
		}
	}
	_, err := os.Stat(filepath.Join(base, "not"))
	require.ErrorIs(t, err, fs.ErrNotExist, "no directory was made")
	_, err = os.Stat("testdata-no-such-dir")
	require.ErrorIs(t, err, fs.ErrNotExist, "no directory was made")

	// The relative directory is shown with its absolute form too.
	_, err = runToken(t, "testdata-no-such-dir", "list")
	abs, aerr := filepath.Abs("testdata-no-such-dir")
	require.NoError(t, aerr)
	require.ErrorContains(t, err, abs)

	// Once the store exists, the same commands work.
	mustMigrate(t, base)
	require.Contains(t, mustRunToken(t, base, "list"), "no tokens")
	_, err = runToken(t, base, "revoke", unknown)
	require.ErrorContains(t, err, "no token has the id "+unknown)
}

// create makes the store where none is, as migrate would; list then finds it.
func TestTokenCreateMakesTheStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fresh")
	out := mustRunToken(t, dir, "create", "--name", "first")
	id := createdLine.FindStringSubmatch(out)[1]
	require.FileExists(t, filepath.Join(dir, DBFile))
	require.Contains(t, mustRunToken(t, dir, "list"), id)
}

func TestTokenCreateRefusesABadName(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"   ", strings.Repeat("x", apitoken.MaxNameLen+1), "a\nb"} {
		out, err := runToken(t, dir, "create", "--name", name)
		require.ErrorIs(t, err, apitoken.ErrInvalid, "%q", name)
		require.Equal(t, errs.Invalid, errs.KindOf(err))
		require.Empty(t, out, "nothing is printed, no secret above all")
	}
	require.Contains(t, mustRunToken(t, dir, "list"), "no tokens", "nothing was stored")
}

func TestTokenUsageErrors(t *testing.T) {
	dir := t.TempDir()
	_, secret, err := apitoken.New("x", clock.System().Now())
	require.NoError(t, err)
	for what, tc := range map[string]struct {
		args []string
		says string
	}{
		"no subcommand":          {nil, "needs a subcommand"},
		"unknown subcommand":     {[]string{"rotate"}, `unknown token subcommand "rotate"`},
		"create without a name":  {[]string{"create"}, "needs --name NAME"},
		"create with empty name": {[]string{"create", "--name="}, "needs --name NAME"},
		"create, name unquoted":  {[]string{"create", "--name", "build", "server"}, "quote a name with spaces"},
		"create, unknown flag":   {[]string{"create", "--owner", "x"}, "flag provided but not defined"},
		"create, flag no value":  {[]string{"create", "--name"}, "flag needs an argument"},
		"create --help":          {[]string{"create", "--help"}, "token create takes --name NAME"},
		"list with an argument":  {[]string{"list", "all"}, "takes no arguments"},
		"revoke without an id":   {[]string{"revoke"}, "takes one token id"},
		"revoke two ids":         {[]string{"revoke", "a", "b"}, "takes one token id"},
		"revoke by secret":       {[]string{"revoke", secret}, "a token's secret, not its id"},
	} {
		out, err := runToken(t, dir, tc.args...)
		require.ErrorIs(t, err, errUsage, what)
		require.ErrorContains(t, err, tc.says, what)
		require.ErrorContains(t, err, "transcriber token create --name NAME", "%s: the usage is shown", what)
		require.NotContains(t, err.Error(), secret, what)
		require.Empty(t, out, what)
	}

	out := mustRunToken(t, dir, "help")
	require.Contains(t, out, "transcriber token revoke ID")
	require.Contains(t, out, "create makes that store if it does not exist yet")
}
