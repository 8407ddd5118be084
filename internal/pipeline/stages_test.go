package pipeline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The package's files are its stages (the package doc lists them in
// order). A stage goes on to another only through that stage's entries,
// never through its helpers, so each reads top to bottom and changes
// without the others; what stages share lives in the shared files. A new
// file is either a stage, with its entries listed here, or shared.
func TestStagesReachEachOtherOnlyThroughTheirEntries(t *testing.T) {
	entries := map[string][]string{
		"ingest.go":         {"ingest"},
		"poll.go":           nil,
		"accept.go":         {"accept"},
		"reuse.go":          {"reuseDone"},
		"prepare.go":        {"prepare"},
		"recognize_sync.go": {"recognizeSync"},
		"admit.go":          {"admit"},
		"submit.go":         {"submit", "submitWaiting"},
		"check.go":          {"check", "checkSoon"},
		"finish.go":         {"finish", "finishWith"},
		"settle.go":         {"settle", "ended", "purgeIfDeleted"},
		"outage.go":         {"outage", "pass", "heard", "heardAside", "waitOutage"},
		"housekeep.go":      nil,
	}
	shared := map[string]bool{"pipeline.go": true, "ports.go": true, "config.go": true, "heartbeat.go": true}

	names, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, n := range names {
		name := n.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		_, stage := entries[name]
		require.True(t, stage || shared[name], "%s is neither a stage nor shared: list it in this test", name)
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		files[name] = f
	}

	// Where each unexported name of a stage is declared: functions,
	// methods, types, variables and constants.
	declared := map[string]string{}
	for name, f := range files {
		if shared[name] {
			continue
		}
		for _, d := range f.Decls {
			for _, id := range declNames(d) {
				if !id.IsExported() {
					declared[id.Name] = name
				}
			}
		}
	}
	isEntry := map[string]bool{}
	for _, es := range entries {
		for _, e := range es {
			isEntry[e] = true
		}
	}
	for name, es := range entries {
		for _, e := range es {
			require.Equal(t, name, declared[e], "entry %s is declared in %s", e, name)
		}
	}

	var reaches []string
	for name, f := range files {
		if shared[name] {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			// A method or field after a selector, or a name declared in
			// another file, is not resolved in this one (Obj is nil).
			id, ok := n.(*ast.Ident)
			if !ok || id.Obj != nil {
				return true
			}
			if home, ok := declared[id.Name]; ok && home != name && !isEntry[id.Name] {
				reaches = append(reaches, fset.Position(id.Pos()).String()+": "+id.Name+" of "+home)
			}
			return true
		})
	}
	sort.Strings(reaches)
	require.Empty(t, reaches, "stages reaching into another stage's helpers")
}

// declNames are the names a top-level declaration declares.
func declNames(d ast.Decl) []*ast.Ident {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return []*ast.Ident{d.Name}
	case *ast.GenDecl:
		var ids []*ast.Ident
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				ids = append(ids, s.Name)
			case *ast.ValueSpec:
				ids = append(ids, s.Names...)
			}
		}
		return ids
	}
	return nil
}
