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

// The package's point is to build fast in a function's plugin build
// (docs/architecture.md, "Build budget"): its non-test code imports the
// standard library, this module, and from the AWS SDK only the SigV4
// signer, the standard retryer's rules and smithy-go's path escaping,
// which come from the SDK's core module and smithy-go; never the S3
// service client, the credential chain or the config loader, which are
// modules of their own and cost most of the SDK's build time.

// allowedModules are the modules the package may depend on besides the
// standard library.
var allowedModules = map[string]bool{
	"transcriber":                  true,
	"github.com/aws/aws-sdk-go-v2": true, // the core module: aws, aws/signer/v4, aws/retry
	"github.com/aws/smithy-go":     true,
}

// allowedImport tells whether the package's non-test code may import path.
func allowedImport(path string) bool {
	switch {
	case strings.HasPrefix(path, "transcriber/"),
		path == "github.com/aws/aws-sdk-go-v2/aws",
		path == "github.com/aws/aws-sdk-go-v2/aws/signer/v4",
		path == "github.com/aws/aws-sdk-go-v2/aws/retry",
		path == "github.com/aws/smithy-go/encoding/httpbinding":
		return true
	}
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") // the standard library has no dot in its first element
}

func TestNonTestCodeImportsOnlyTheSigner(t *testing.T) {
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

func TestDependenciesHoldNoServiceClient(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the dependencies")
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var deps []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, module, _ := strings.Cut(line, " ")
		deps = append(deps, pkg)
		if module != "" { // the standard library has no module
			require.True(t, allowedModules[module], "the package depends on %s, of module %s", pkg, module)
		}
	}
	require.Contains(t, deps, "transcriber/internal/storage/s3")
	require.Contains(t, deps, "github.com/aws/aws-sdk-go-v2/aws/signer/v4")
	require.Contains(t, deps, "net/http")
}
