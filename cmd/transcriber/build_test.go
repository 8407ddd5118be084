package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's top directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// stdRoots is STD_ROOTS of scripts/build-local.sh.
func stdRoots(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "build-local.sh"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^STD_ROOTS="([^"]*)"`).FindSubmatch(b)
	require.NotNil(t, m, "scripts/build-local.sh sets no STD_ROOTS")
	return strings.Fields(string(m[1]))
}

// The standard packages build-local.sh compiles during the downloads are
// the binary's, and with their imports they are all the standard library
// the binary needs: none compiled for nothing, none left for after the
// downloads.
func TestBuildLocalStdRoots(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	list := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if .Standard}}{{.ImportPath}}{{end}}"}, args...)...)
		cmd.Dir = repoRoot(t)
		out, err := cmd.Output()
		require.NoError(t, err, "go list %s", args)
		return strings.Fields(string(out))
	}
	roots := stdRoots(t)
	need := list("./cmd/transcriber")
	for _, r := range roots {
		require.Contains(t, need, r, "STD_ROOTS in scripts/build-local.sh names %s, which the binary does not import", r)
	}
	built := list(roots...)
	for _, p := range need {
		require.True(t, slices.Contains(built, p),
			"the binary needs %s, which STD_ROOTS in scripts/build-local.sh does not build: add the package of the binary's that imports it", p)
	}
}

// A first build (the modules not in the cache) compiles the standard
// library while the modules download and says so; a later one just
// builds. The go command is a stand-in that records its calls.
func TestBuildLocalFirstBuild(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash, as make run does")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	fakeGo := filepath.Join(dir, "go")
	// The standard library's build waits for the download to start (the
	// marker), so a script that ran them one after the other is seen.
	require.NoError(t, os.WriteFile(fakeGo, []byte(`#!/bin/sh
case "$1 $2" in
"list -deps")
	if [ "$GOPROXY" = off ]; then
		echo "offline list" >>"$LOG"
		[ -e "$DIR/cached" ]
		exit
	fi
	touch "$DIR/downloading"
	echo "download" >>"$LOG"
	echo "go: downloading google.golang.org/grpc v1.74.2" >&2
	;;
"build -v")
	echo "build binary: $*" >>"$LOG"
	printf 'runtime\ninternal/abi\ngoogle.golang.org/grpc\ngoogle.golang.org/grpc/codes\ngithub.com/ydb-platform/ydb-go-sdk/v3\ngolang.org/x/net/http2\nmodernc.org/sqlite/lib\ntranscriber/cmd/transcriber\n' >&2
	if [ -e "$DIR/broken" ]; then
		printf '# transcriber/internal/app\ninternal/app/app.go:3:2: undefined: x\n' >&2
		exit 1
	fi
	;;
"build "*)
	for i in $(seq 1 100); do [ -e "$DIR/downloading" ] && break; sleep 0.1; done
	if [ -e "$DIR/downloading" ]; then echo "build std during the download: $*" >>"$LOG"; else echo "build std alone: $*" >>"$LOG"; fi
	;;
esac
`), 0o755))
	try := func() (string, error) {
		t.Helper()
		_ = os.Remove(log)
		_ = os.Remove(filepath.Join(dir, "downloading"))
		cmd := exec.Command("bash", filepath.Join(repoRoot(t), "scripts", "build-local.sh"))
		cmd.Env = append(os.Environ(), "GO="+fakeGo, "LOG="+log, "DIR="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	run := func() string {
		t.Helper()
		out, err := try()
		require.NoError(t, err, "%s", out)
		return out
	}

	out := run()
	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, []string{
		"offline list",
		"build std during the download: build " + strings.Join(stdRoots(t), " "),
		"download",
		"build binary: build -v -o transcriber ./cmd/transcriber",
	}, sortedMiddle(strings.Split(strings.TrimSpace(string(calls)), "\n")))
	require.Contains(t, out, "building ./transcriber for the first time")
	require.Contains(t, out, "go: downloading google.golang.org/grpc", "the downloads are shown")
	require.Contains(t, out, "\n  downloaded the modules and compiled the standard library in ")
	require.Contains(t, out, "\n  compiling the standard library, google.golang.org/grpc,\n    github.com/ydb-platform/ydb-go-sdk, "+
		"golang.org/x/net, modernc.org/sqlite,\n    transcriber\nbuilt ./transcriber in ", "each module once, in lines of at most 78 characters")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "cached"), nil, 0o600))
	out = run()
	calls, err = os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, "offline list\nbuild binary: build -v -o transcriber ./cmd/transcriber\n", string(calls))
	require.True(t, strings.HasPrefix(out, "building ./transcriber\n"), out)

	// A failed build fails make run, its errors shown as go gave them.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken"), nil, 0o600))
	out, err = try()
	require.Error(t, err)
	require.Contains(t, out, "\n    transcriber\n# transcriber/internal/app\ninternal/app/app.go:3:2: undefined: x\n")
	require.NotContains(t, out, "built ./transcriber")
}

// sortedMiddle is calls with the two that run at once, the download and
// the standard library's build, in a fixed order.
func sortedMiddle(calls []string) []string {
	if len(calls) == 4 {
		slices.Sort(calls[1:3])
	}
	return calls
}

// The binary's packages in the order go build would start them when all
// are ready (go list -deps walks the sorted imports depth first, as the
// build's scheduler does): SQLite's chain, the longest, comes before the
// SDKs, so it compiles beside them instead of alone at the end.
func TestBuildStartsSQLiteEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/transcriber")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	require.NoError(t, err)
	order := strings.Fields(string(out))
	at := func(p string) int {
		i := slices.Index(order, p)
		require.GreaterOrEqual(t, i, 0, "%s is not in the binary", p)
		return i
	}
	for _, sdk := range []string{"google.golang.org/protobuf/proto", "google.golang.org/grpc", "github.com/ydb-platform/ydb-go-sdk/v3", "github.com/aws/aws-sdk-go-v2/aws"} {
		require.Less(t, at("modernc.org/sqlite/lib"), at(sdk), "modernc.org/sqlite/lib comes after %s", sdk)
	}
}

// No test code in the binary: no testing, no …test package, no load
// model.
func TestBinaryLinksNoTestCode(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "./cmd/transcriber")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, std, _ := strings.Cut(line, " ")
		last := p[strings.LastIndex(p, "/")+1:]
		test := p == "testing" || strings.HasPrefix(p, "testing/") || last == "httptest" || last == "iotest" ||
			(std == "false" && strings.HasSuffix(last, "test")) || strings.HasSuffix(p, "/loadsim")
		require.False(t, test, "the binary links %s", p)
	}
}
