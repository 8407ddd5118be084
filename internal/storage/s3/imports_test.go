package s3_test

import (
	"bytes"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The package's point is to build fast in a function's plugin build: its
// non-test code imports the standard library and this module only, never
// the AWS SDK or smithy-go (docs/architecture.md, "Build budget"). Its tests
// may import the SDK, to check the signatures against it.

// allowedImport tells whether the package's non-test code may import path.
func allowedImport(path string) bool {
	if strings.HasPrefix(path, "transcriber/") {
		return true
	}
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") // the standard library has no dot in its first element
}

func TestNonTestCodeImportsNoSDK(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var checked int
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		// Every file, whatever its build tags: ImportsOnly reads no further.
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			require.True(t, allowedImport(path), "%s imports %s", name, path)
		}
		checked++
	}
	require.Positive(t, checked)
}

func TestDependenciesHoldNoSDK(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the dependencies")
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "transcriber/internal/storage/s3")
	require.Contains(t, deps, "net/http")
	for _, dep := range deps {
		require.False(t, strings.HasPrefix(dep, "github.com/aws/"), "the package depends on %s", dep)
		require.True(t, allowedImport(dep), "the package depends on %s, outside the standard library and this module", dep)
	}
}
