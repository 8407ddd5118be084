package app_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each function is built by the platform from source within a time limit
// (docs/architecture.md, "Build budget"), so each compiles only what it uses.
func TestFunctionsImportOnlyWhatTheyUse(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	forbidden := map[string][]string{
		// Never in a function: the embedded store is for the local stack,
		// test servers and the OpenAPI checker are for tests.
		"*": {"github.com/aws/aws-sdk-go-v2/service", "github.com/aws/aws-sdk-go-v2/credentials", "github.com/aws/aws-sdk-go-v2/config", "github.com/aws/aws-sdk-go-v2/feature", "github.com/aws/aws-sdk-go/", "modernc.org/sqlite", "github.com/johannesboyne/gofakes3", "transcriber/internal/localstack", "/speechkittest", "/s3test", "/telegramtest", "/ffmpegtest", "/openapitest", "github.com/getkin/kin-openapi"},
		// The api function has no bot.
		"api": {"github.com/go-telegram/bot", "transcriber/internal/telegram", "transcriber/internal/app/withbot"},
	}
	for _, fn := range []string{"api", "telegram", "ingest", "poll"} {
		cmd := exec.Command("go", "list", "-tags", "ycf", "-deps", "./functions/"+fn)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		deps := strings.Fields(string(out))
		for _, bad := range append(forbidden["*"], forbidden[fn]...) {
			for _, d := range deps {
				require.False(t, matches(d, bad), "functions/%s imports %s", fn, d)
			}
		}
	}
}

// The owner's status and the bot read and talk; neither compiles the
// recognizer's gRPC client.
func TestStatusAndTheBotStayOffGRPC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, pkg := range []string{"./internal/status", "./internal/telegram", "./internal/telegram/tgconf"} {
		cmd := exec.Command("go", "list", "-deps", pkg)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, d := range strings.Fields(string(out)) {
			for _, bad := range []string{"google.golang.org/grpc", "google.golang.org/genproto", "github.com/yandex-cloud/go-genproto"} {
				require.False(t, matches(d, bad), "%s imports %s", pkg, d)
			}
		}
	}
}

// matches tells whether package d is the forbidden bad: a module path
// covers its packages, a path of this module names one package, and a
// leading slash matches the last element.
func matches(d, bad string) bool {
	switch {
	case strings.HasPrefix(bad, "/"):
		return strings.HasSuffix(d, bad)
	case strings.HasPrefix(bad, "transcriber/"):
		return d == bad
	}
	return d == bad || strings.HasPrefix(d, bad+"/")
}
