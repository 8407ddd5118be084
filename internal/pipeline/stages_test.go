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

// The stages are listed once, in the package comment (pipeline.go), each
// file with its entries. A stage reaches another only through that
// stage's entries, never its helpers, so each reads top to bottom; what
// stages share lives in the shared files. A new file is a stage, listed
// there, or shared.
func TestStagesReachEachOtherOnlyThroughTheirEntries(t *testing.T) {
	entries := stageList(t)
	require.Contains(t, entries, "ingest.go", "the package comment lists the stages")
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
		require.True(t, stage || shared[name], "%s is neither a stage nor shared: list it in the package comment", name)
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

// stageList reads the stage list of the package comment: lines
// "<file>.go  <entry>,<entry>  <what it does>", "-" for no entries.
func stageList(t *testing.T) map[string][]string {
	f, err := parser.ParseFile(token.NewFileSet(), "pipeline.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	list := map[string][]string{}
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		fields := strings.Fields(line)
		if !strings.HasPrefix(line, "\t") || len(fields) < 3 || !strings.HasSuffix(fields[0], ".go") {
			continue
		}
		list[fields[0]] = nil
		if fields[1] != "-" {
			list[fields[0]] = strings.Split(fields[1], ",")
		}
	}
	return list
}
