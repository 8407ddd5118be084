package s3local_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every refusal the store can answer, each status and code its source
// passes to refuse, has its row in docs/configuration.md's table of the
// local object store's refusals.
func TestEveryRefusalIsDocumented(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	refusals := refusalsIn(t, dir)
	require.NotEmpty(t, refusals)
	require.Contains(t, refusals, "400 AuthorizationHeaderMalformed", "a code given by a constant is found")

	doc, err := os.ReadFile(filepath.Join(dir, "..", "..", "..", "..", "docs", "configuration.md"))
	require.NoError(t, err)
	for r := range refusals {
		status, code, _ := strings.Cut(r, " ")
		require.Contains(t, string(doc), "\n| "+status+" | `"+code+"` | ",
			"docs/configuration.md has no row for the local object store's %s %s", status, code)
	}
}

// refusalsIn are the "status code" pairs the package's source passes to
// refuse(http.StatusX, code, …), with code a string literal or a constant
// of the function that calls it; a code passed in as a parameter is found
// where the callers name it.
func refusalsIn(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	statuses := map[string]int{
		"StatusBadRequest": http.StatusBadRequest, "StatusForbidden": http.StatusForbidden,
		"StatusInternalServerError": http.StatusInternalServerError, "StatusPreconditionFailed": http.StatusPreconditionFailed,
	}
	out := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		consts := map[string]string{} // the file's own string constants
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok {
				stringConsts(gd, consts)
			}
		}
		for _, decl := range f.Decls {
			local := map[string]string{}
			for k, v := range consts {
				local[k] = v
			}
			if fn, ok := decl.(*ast.FuncDecl); ok {
				// A function's own constants shadow the file's, and its
				// parameters name no constant.
				stringConsts(fn.Body, local)
				for _, field := range fn.Type.Params.List {
					for _, id := range field.Names {
						delete(local, id.Name)
					}
				}
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "refuse" {
					return true
				}
				sel, ok := call.Args[0].(*ast.SelectorExpr)
				require.True(t, ok, "%s: refuse's status is not http.StatusX", fset.Position(call.Pos()))
				status, ok := statuses[sel.Sel.Name]
				require.True(t, ok, "%s: add %s to the statuses here", fset.Position(call.Pos()), sel.Sel.Name)
				var code string
				switch a := call.Args[1].(type) {
				case *ast.BasicLit:
					code, _ = strconv.Unquote(a.Value)
				case *ast.Ident:
					if code, ok = local[a.Name]; !ok {
						return true // a parameter: its callers' refusals name it
					}
				}
				require.NotEmpty(t, code, "%s: refuse's code is neither a literal nor a constant", fset.Position(call.Pos()))
				out[strconv.Itoa(status)+" "+code] = true
				return true
			})
		}
	}
	return out
}

// stringConsts adds to into the string constants declared in n.
func stringConsts(n ast.Node, into map[string]string) {
	ast.Inspect(n, func(n ast.Node) bool {
		gd, ok := n.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			return true
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if i >= len(vs.Values) {
					break
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					into[id.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
		return true
	})
}
