package tftest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"gopkg.in/yaml.v3"
)

// The checks below take the parsed configuration and return what is wrong
// with it, one sentence per problem; the tests fail on any. They are plain
// functions so that the tests can also run them on a mutated copy and show
// that they notice (tf_test.go, "...CanFail").

// block is a top-level block of a .tf file, with the file it came from.
type block struct {
	*hclsyntax.Block
	file string
}

// config is the parsed terraform/*.tf.
type config struct {
	src    map[string][]byte // file name -> text
	blocks []block
	locals map[string]*hclsyntax.Attribute
	where  map[*hclsyntax.Attribute]string // local -> file
}

// parseConfig parses the files (name -> text) the way Terraform reads them.
func parseConfig(src map[string][]byte) (*config, error) {
	c := &config{src: src, locals: map[string]*hclsyntax.Attribute{}, where: map[*hclsyntax.Attribute]string{}}
	names := make([]string, 0, len(src))
	for name := range src {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f, diags := hclsyntax.ParseConfig(src[name], name, hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s: %s", name, diags.Error())
		}
		body := f.Body.(*hclsyntax.Body)
		if len(body.Attributes) > 0 {
			return nil, fmt.Errorf("%s: attributes outside any block", name)
		}
		for _, b := range body.Blocks {
			c.blocks = append(c.blocks, block{b, name})
			if b.Type == "locals" {
				for k, a := range b.Body.Attributes {
					if _, dup := c.locals[k]; dup {
						return nil, fmt.Errorf("%s: local.%s is defined twice", name, k)
					}
					c.locals[k] = a
					c.where[a] = name
				}
			}
		}
	}
	return c, nil
}

// readConfig reads every *.tf in dir.
func readConfig(dir string) (map[string][]byte, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no .tf files in %s", dir)
	}
	src := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		src[filepath.Base(p)] = b
	}
	return src, nil
}

// resources returns the resource blocks of a type, by name.
func (c *config) resources(typ string) map[string]block {
	out := map[string]block{}
	for _, b := range c.blocks {
		if b.Type == "resource" && len(b.Labels) == 2 && b.Labels[0] == typ {
			out[b.Labels[1]] = b
		}
	}
	return out
}

// text is an expression's source text.
func (c *config) text(file string, e hclsyntax.Expression) string {
	r := e.Range()
	return string(c.src[file][r.Start.Byte:r.End.Byte])
}

func attr(b *hclsyntax.Body, name string) *hclsyntax.Attribute { return b.Attributes[name] }

func blocksOf(b *hclsyntax.Body, typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, x := range b.Blocks {
		if x.Type == typ {
			out = append(out, x)
		}
	}
	return out
}

// literal is the value of an attribute that needs no context (a literal), as
// text.
func literal(b *hclsyntax.Body, name string) (string, bool) {
	a := attr(b, name)
	if a == nil {
		return "", false
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() {
		return "", false
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), true
	case cty.Number:
		return v.AsBigFloat().Text('f', -1), true
	case cty.Bool:
		return fmt.Sprint(v.True()), true
	}
	return "", false
}

// refersTo reports whether the expression refers to the given address, such
// as "yandex_function.ingest".
func refersTo(e hclsyntax.Expression, addr string) bool {
	for _, tr := range e.Variables() {
		if traversalAddr(tr) == addr {
			return true
		}
	}
	return false
}

// traversalAddr is the graph node a reference names: local.x, var.x,
// data.t.n, or t.n for a resource; "" for path, each, self and the like.
func traversalAddr(tr hcl.Traversal) string {
	root := tr.RootName()
	name := func(i int) string {
		if len(tr) > i {
			if a, ok := tr[i].(hcl.TraverseAttr); ok {
				return a.Name
			}
		}
		return ""
	}
	switch root {
	case "path", "each", "count", "self", "terraform":
		return ""
	case "local", "var":
		return root + "." + name(1)
	case "data":
		return "data." + name(1) + "." + name(2)
	}
	return root + "." + name(1)
}

// --- formatting ------------------------------------------------------------

// checkFormat: every file is as `terraform fmt` (hclwrite.Format) leaves it.
func checkFormat(src map[string][]byte) []string {
	var bad []string
	for name, b := range src {
		if !bytes.Equal(hclwrite.Format(b), b) {
			bad = append(bad, fmt.Sprintf("%s is not formatted as terraform fmt formats it (run terraform fmt)", name))
		}
	}
	sort.Strings(bad)
	return bad
}

// --- functions and their zips ---------------------------------------------

// Stand-ins for evaluation: the dist directory and filesha256, so that a
// zip's path and its hash can be compared as text.
const distStub = "DIST"

var filesha256Stub = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "path", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.StringVal("sha256(" + args[0].AsString() + ")"), nil
	},
})

// evalContext evaluates the locals that name the zips: local.dist_dir is
// distStub and local.zip_sha maps each function to filesha256Stub of its zip.
func (c *config) evalContext() (*hcl.EvalContext, error) {
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"local": cty.ObjectVal(map[string]cty.Value{"dist_dir": cty.StringVal(distStub)})},
		Functions: map[string]function.Function{"filesha256": filesha256Stub},
	}
	a := c.locals["zip_sha"]
	if a == nil {
		return nil, fmt.Errorf("local.zip_sha (each function's zip SHA-256) is not defined")
	}
	sha, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, fmt.Errorf("local.zip_sha: %s", diags.Error())
	}
	ctx.Variables["local"] = cty.ObjectVal(map[string]cty.Value{"dist_dir": cty.StringVal(distStub), "zip_sha": sha})
	return ctx, nil
}

// forEachKeys reads a for_each of the form toset(["a", "b"]) or a literal
// list.
func forEachKeys(e hclsyntax.Expression) ([]string, error) {
	if call, ok := e.(*hclsyntax.FunctionCallExpr); ok && call.Name == "toset" && len(call.Args) == 1 {
		e = call.Args[0]
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.CanIterateElements() {
		return nil, fmt.Errorf("for_each is not a literal list of names")
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, x := it.Element()
		if x.Type() != cty.String {
			return nil, fmt.Errorf("for_each holds a non-string")
		}
		out = append(out, x.AsString())
	}
	return out, nil
}

// zipOf follows a function's package to its zip: the yandex_storage_object
// named by package.object_name, its for_each key, and the file it uploads.
// It returns the function name the zip is built for (<name>.zip).
func (c *config) zipOf(fn block, ctx *hcl.EvalContext) (string, []string) {
	label := "yandex_function." + fn.Labels[1]
	pkgs := blocksOf(fn.Body, "package")
	if len(pkgs) != 1 {
		return "", []string{label + ": want one package block (the zip in the deploy bucket)"}
	}
	pkg := pkgs[0].Body
	obj := attr(pkg, "object_name")
	if obj == nil {
		return "", []string{label + ": package has no object_name"}
	}
	tr, diags := hcl.AbsTraversalForExpr(obj.Expr)
	if diags.HasErrors() || len(tr) != 4 || tr.RootName() != "yandex_storage_object" {
		return "", []string{label + `: package.object_name should be yandex_storage_object.<name>["<function>"].key`}
	}
	objName := tr[1].(hcl.TraverseAttr).Name
	idx, ok := tr[2].(hcl.TraverseIndex)
	if !ok || idx.Key.Type() != cty.String {
		return "", []string{label + ": package.object_name should index the zip object by the function's name"}
	}
	name := idx.Key.AsString()
	zip, ok := c.resources("yandex_storage_object")[objName]
	if !ok {
		return "", []string{fmt.Sprintf("%s: no yandex_storage_object.%s", label, objName)}
	}
	var bad []string
	fe := attr(zip.Body, "for_each")
	if fe == nil {
		return "", []string{fmt.Sprintf("yandex_storage_object.%s has no for_each over the function names", objName)}
	}
	keys, err := forEachKeys(fe.Expr)
	if err != nil {
		return "", []string{fmt.Sprintf("yandex_storage_object.%s: %v", objName, err)}
	}
	if !contains(keys, name) {
		bad = append(bad, fmt.Sprintf("%s: its package is zip %q, which yandex_storage_object.%s does not upload (it has %v)", label, name, objName, keys))
	}
	zctx := ctx.NewChild()
	zctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(name), "value": cty.StringVal(name)})}
	want := distStub + "/" + name + ".zip"
	if a := attr(zip.Body, "source"); a == nil {
		bad = append(bad, fmt.Sprintf("yandex_storage_object.%s has no source", objName))
	} else if v, diags := a.Expr.Value(zctx); diags.HasErrors() || v.Type() != cty.String || v.AsString() != want {
		bad = append(bad, fmt.Sprintf("yandex_storage_object.%s[%q]: source should be <dist_dir>/%s.zip", objName, name, name))
	}
	// The function's version is the zip's hash: package.sha_256 and user_hash.
	wantSHA := "sha256(" + want + ")"
	for _, a := range []struct {
		body *hclsyntax.Body
		name string
	}{{pkg, "sha_256"}, {fn.Body, "user_hash"}} {
		x := attr(a.body, a.name)
		if x == nil {
			bad = append(bad, fmt.Sprintf("%s: no %s (want the SHA-256 of %s.zip)", label, a.name, name))
			continue
		}
		v, diags := x.Expr.Value(ctx)
		if diags.HasErrors() || v.Type() != cty.String || v.AsString() != wantSHA {
			bad = append(bad, fmt.Sprintf("%s: %s should be filesha256 of %s.zip", label, a.name, name))
		}
	}
	return name, bad
}

// checkFunctions: each yandex_function runs Go 1.23 from index.Handler, and
// its zip is built from functions/<name>/index.go, which exports
// func Handler; every function in functions/ is deployed, once.
func checkFunctions(c *config, repoRoot string) []string {
	var bad []string
	ctx, err := c.evalContext()
	if err != nil {
		return []string{err.Error()}
	}
	fns := c.resources("yandex_function")
	deployed := map[string]string{}
	for _, label := range sortedKeys(fns) {
		fn := fns[label]
		addr := "yandex_function." + label
		if v, _ := literal(fn.Body, "runtime"); v != "golang123" {
			bad = append(bad, fmt.Sprintf("%s: runtime %q, want golang123 (Go 1.23.9)", addr, v))
		}
		if v, _ := literal(fn.Body, "entrypoint"); v != "index.Handler" {
			bad = append(bad, fmt.Sprintf("%s: entrypoint %q, want index.Handler", addr, v))
		}
		name, zbad := c.zipOf(fn, ctx)
		bad = append(bad, zbad...)
		if name == "" {
			continue
		}
		if name != label {
			bad = append(bad, fmt.Sprintf("%s deploys %s.zip: name the resource after its function", addr, name))
		}
		if other, dup := deployed[name]; dup {
			bad = append(bad, fmt.Sprintf("%s and %s both deploy %s.zip", other, addr, name))
		}
		deployed[name] = addr
		if err := exportsHandler(filepath.Join(repoRoot, "functions", name, "index.go")); err != nil {
			bad = append(bad, fmt.Sprintf("%s deploys %s.zip: %v", addr, name, err))
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(repoRoot, "functions", "*", "index.go"))
	for _, d := range dirs {
		name := filepath.Base(filepath.Dir(d))
		if _, ok := deployed[name]; !ok {
			bad = append(bad, fmt.Sprintf("functions/%s/index.go is deployed by no yandex_function", name))
		}
	}
	return bad
}

// exportsHandler reports whether the file is package main with an exported
// func Handler (no receiver), which index.Handler names.
func exportsHandler(path string) error {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("cannot read its source: %w", err)
	}
	if f.Name.Name != "main" {
		return fmt.Errorf("%s is package %s, want main", path, f.Name.Name)
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "Handler" {
			return nil
		}
	}
	return fmt.Errorf("%s declares no func Handler", path)
}

// --- environment -------------------------------------------------------------

// envKeys lists the keys of a function's environment: an object, a local
// holding one, merge() of those, or a condition choosing between them
// (the keys either may give).
func (c *config) envKeys(e hclsyntax.Expression) ([]string, error) {
	switch e := e.(type) {
	case *hclsyntax.ObjectConsExpr:
		var out []string
		for _, it := range e.Items {
			k, diags := it.KeyExpr.Value(nil)
			if diags.HasErrors() || k.Type() != cty.String {
				return nil, fmt.Errorf("a key that is not a literal name")
			}
			out = append(out, k.AsString())
		}
		return out, nil
	case *hclsyntax.ScopeTraversalExpr:
		if e.Traversal.RootName() == "local" && len(e.Traversal) == 2 {
			name := e.Traversal[1].(hcl.TraverseAttr).Name
			if a := c.locals[name]; a != nil {
				return c.envKeys(a.Expr)
			}
			return nil, fmt.Errorf("local.%s is not defined", name)
		}
	case *hclsyntax.ConditionalExpr:
		var out []string
		for _, branch := range []hclsyntax.Expression{e.TrueResult, e.FalseResult} {
			ks, err := c.envKeys(branch)
			if err != nil {
				return nil, err
			}
			out = append(out, ks...)
		}
		return out, nil
	case *hclsyntax.FunctionCallExpr:
		if e.Name == "merge" {
			var out []string
			for _, a := range e.Args {
				ks, err := c.envKeys(a)
				if err != nil {
					return nil, err
				}
				out = append(out, ks...)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("an expression this check cannot read (use an object, a local, merge() or a condition)")
}

// functionEnv is what a function is given: environment names and secret
// names (the environment_variable of each secrets block).
type functionEnv struct {
	env, secrets []string
}

func (c *config) functionEnvs() (map[string]functionEnv, []string) {
	out := map[string]functionEnv{}
	var bad []string
	fns := c.resources("yandex_function")
	for _, label := range sortedKeys(fns) {
		fn := fns[label]
		var fe functionEnv
		if a := attr(fn.Body, "environment"); a != nil {
			ks, err := c.envKeys(a.Expr)
			if err != nil {
				bad = append(bad, fmt.Sprintf("yandex_function.%s: environment: %v", label, err))
			}
			fe.env = ks
		}
		for _, s := range blocksOf(fn.Body, "secrets") {
			v, ok := literal(s.Body, "environment_variable")
			if !ok {
				bad = append(bad, fmt.Sprintf("yandex_function.%s: a secrets block without a literal environment_variable", label))
				continue
			}
			fe.secrets = append(fe.secrets, v)
		}
		out[label] = fe
	}
	return out, bad
}

// Names that are secrets: they reach a function only through a secrets block
// (Lockbox), never in its plain environment.
var secretNames = []string{"S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "UPLOAD_LINK_SECRET"}

// What each function must be given (docs/configuration.md). The secrets
// among them are exactly the function's secrets: a function gets no secret
// it does not use (api has no bot token; ingest and poll no webhook or
// upload-link secret).
var requiredEnv = func() map[string][]string {
	common := []string{"S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "YDB_CONNECTION_STRING",
		"SPEECHKIT_FOLDER_ID", "DEFAULT_LANGUAGE", "LOG_LEVEL"}
	with := func(more ...string) []string { return append(append([]string{}, common...), more...) }
	return map[string][]string{
		"api":      with("UPLOAD_LINK_SECRET"),
		"telegram": with("UPLOAD_LINK_SECRET", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_ALLOWED_USERS"),
		"ingest":   with("TELEGRAM_BOT_TOKEN"),
		"poll":     with("TELEGRAM_BOT_TOKEN"),
	}
}()

// checkEnvironment: every name a function is given is one its loader reads
// (loaderReads), each function has its required names, secrets come only
// through secrets blocks, and the required lists themselves name only what
// the loader reads, so a rename on either side fails.
func checkEnvironment(c *config, loaderReads map[string]bool) []string {
	var bad []string
	for _, fn := range sortedKeys(requiredEnv) {
		for _, n := range requiredEnv[fn] {
			if !loaderReads[n] {
				bad = append(bad, fmt.Sprintf("the test requires %s for %s, but the loader does not read it (renamed?)", n, fn))
			}
		}
	}
	envs, ebad := c.functionEnvs()
	bad = append(bad, ebad...)
	for _, fn := range sortedKeys(requiredEnv) {
		if _, ok := envs[fn]; !ok {
			bad = append(bad, fmt.Sprintf("no yandex_function.%s", fn))
		}
	}
	for _, fn := range sortedKeys(envs) {
		fe := envs[fn]
		addr := "yandex_function." + fn
		given := map[string]int{}
		for _, n := range fe.env {
			given[n]++
			if contains(secretNames, n) {
				bad = append(bad, fmt.Sprintf("%s: %s is a secret: give it through a secrets block (Lockbox), not environment", addr, n))
			}
		}
		for _, n := range fe.secrets {
			given[n]++
		}
		for _, n := range sortedKeys(given) {
			if !loaderReads[n] {
				bad = append(bad, fmt.Sprintf("%s: %s is not a variable the loader reads (internal/app: FromEnv, CloudStores)", addr, n))
			}
			if given[n] > 1 {
				bad = append(bad, fmt.Sprintf("%s: %s is given %d times", addr, n, given[n]))
			}
		}
		req, known := requiredEnv[fn]
		if !known {
			bad = append(bad, fmt.Sprintf("%s: the test has no required list for it", addr))
			continue
		}
		for _, n := range req {
			if given[n] == 0 {
				bad = append(bad, fmt.Sprintf("%s: %s is not set", addr, n))
			}
		}
		for _, n := range fe.secrets {
			if !contains(req, n) {
				bad = append(bad, fmt.Sprintf("%s: gets secret %s, which it does not need", addr, n))
			}
		}
	}
	return bad
}

// --- storage and triggers ---------------------------------------------------

// prefixOf is the part of an object key before the job id.
func prefixOf(key, id string) string {
	i := strings.Index(key, id)
	if i < 0 {
		return key
	}
	return key[:i]
}

// checkLifecycle: the data bucket's lifecycle rules expire exactly the given
// prefixes (sources/, audio/, results/), each after some days.
func checkLifecycle(c *config, bucket string, prefixes []string) []string {
	b, ok := c.resources("yandex_storage_bucket")[bucket]
	if !ok {
		return []string{"no yandex_storage_bucket." + bucket}
	}
	var bad, got []string
	for _, r := range blocksOf(b.Body, "lifecycle_rule") {
		p, ok := "", false
		if fs := blocksOf(r.Body, "filter"); len(fs) == 1 {
			p, ok = literal(fs[0].Body, "prefix")
		} else {
			p, ok = literal(r.Body, "prefix")
		}
		if !ok {
			bad = append(bad, "yandex_storage_bucket."+bucket+": a lifecycle_rule without a literal prefix")
			continue
		}
		got = append(got, p)
		exp := blocksOf(r.Body, "expiration")
		if len(exp) != 1 {
			bad = append(bad, fmt.Sprintf("yandex_storage_bucket.%s: the rule for %s does not expire anything", bucket, p))
			continue
		}
		if days, ok := literal(exp[0].Body, "days"); !ok || days == "0" {
			bad = append(bad, fmt.Sprintf("yandex_storage_bucket.%s: the rule for %s has no expiration days", bucket, p))
		}
	}
	sort.Strings(got)
	want := append([]string{}, prefixes...)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		bad = append(bad, fmt.Sprintf("yandex_storage_bucket.%s: lifecycle rules cover %v, want the object key prefixes %v", bucket, got, want))
	}
	return bad
}

// checkTriggers: an Object Storage trigger on the data bucket calls ingest
// for objects created under sourcePrefix; a timer calls poll every minute;
// both retry and have a dead-letter queue.
func checkTriggers(c *config, sourcePrefix string) []string {
	var bad []string
	var storage, timer int
	trs := c.resources("yandex_function_trigger")
	for _, label := range sortedKeys(trs) {
		tr := trs[label]
		addr := "yandex_function_trigger." + label
		fns := blocksOf(tr.Body, "function")
		if len(fns) != 1 {
			bad = append(bad, addr+": want one function block")
			continue
		}
		fn := fns[0].Body
		if v, ok := literal(fn, "retry_attempts"); !ok || v == "0" {
			bad = append(bad, addr+": no retry_attempts")
		}
		if len(blocksOf(tr.Body, "dlq")) != 1 {
			bad = append(bad, addr+": no dead-letter queue (dlq)")
		}
		id := attr(fn, "id")
		switch {
		case len(blocksOf(tr.Body, "object_storage")) == 1:
			storage++
			st := blocksOf(tr.Body, "object_storage")[0].Body
			if p, _ := literal(st, "prefix"); p != sourcePrefix {
				bad = append(bad, fmt.Sprintf("%s: prefix %q, want %q (job.SourceKey)", addr, p, sourcePrefix))
			}
			if v, _ := literal(st, "create"); v != "true" {
				bad = append(bad, addr+": does not fire on create")
			}
			// One object per call; batch_cutoff, which the provider
			// requires, is 1-60 s (the CLI reference's range).
			if v, _ := literal(st, "batch_size"); v != "1" {
				bad = append(bad, fmt.Sprintf("%s: batch_size %q, want 1 (one upload per call)", addr, v))
			}
			if v, _ := literal(st, "batch_cutoff"); !inRange(v, 1, 60) {
				bad = append(bad, fmt.Sprintf("%s: batch_cutoff %q, want 1-60 seconds", addr, v))
			}
			if b := attr(st, "bucket_id"); b == nil || !refersTo(b.Expr, "yandex_storage_bucket.data") {
				bad = append(bad, addr+": not on the data bucket")
			}
			if id == nil || !refersTo(id.Expr, "yandex_function.ingest") {
				bad = append(bad, addr+": does not call the ingest function")
			}
		case len(blocksOf(tr.Body, "timer")) == 1:
			timer++
			if v, _ := literal(blocksOf(tr.Body, "timer")[0].Body, "cron_expression"); v != "* * * * ? *" {
				bad = append(bad, fmt.Sprintf("%s: cron %q, want every minute (* * * * ? *)", addr, v))
			}
			if id == nil || !refersTo(id.Expr, "yandex_function.poll") {
				bad = append(bad, addr+": does not call the poll function")
			}
		}
	}
	if storage != 1 || timer != 1 {
		bad = append(bad, fmt.Sprintf("want one Object Storage trigger and one timer, found %d and %d", storage, timer))
	}
	return bad
}

// --- API Gateway -------------------------------------------------------------

var templateMark = regexp.MustCompile(`\$\{([^}]*)\}`)

// checkGateway: the gateway's specification is docs/openapi.yaml rendered by
// templatefile with exactly the names the document uses, and it is the
// gateway's spec; doc is the document's text.
func checkGateway(c *config, doc string) []string {
	var bad []string
	a := c.locals["gateway_spec"]
	if a == nil {
		return []string{"local.gateway_spec (the rendered OpenAPI document) is not defined"}
	}
	call, ok := a.Expr.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "templatefile" || len(call.Args) != 2 {
		return []string{"local.gateway_spec should be templatefile(<docs/openapi.yaml>, {...})"}
	}
	if got := c.text(c.where[a], call.Args[0]); got != `"${path.module}/../docs/openapi.yaml"` {
		bad = append(bad, fmt.Sprintf("local.gateway_spec renders %s, want \"${path.module}/../docs/openapi.yaml\"", got))
	}
	if strings.Contains(doc, "%{") {
		bad = append(bad, "docs/openapi.yaml holds %{, which templatefile reads as a directive")
	}
	used := map[string]bool{}
	for _, m := range templateMark.FindAllStringSubmatch(doc, -1) {
		used[m[1]] = true
	}
	passed := map[string]bool{}
	if obj, ok := call.Args[1].(*hclsyntax.ObjectConsExpr); ok {
		for _, it := range obj.Items {
			if k, diags := it.KeyExpr.Value(nil); !diags.HasErrors() && k.Type() == cty.String {
				passed[k.AsString()] = true
			}
		}
	} else {
		bad = append(bad, "local.gateway_spec: the template variables should be an object literal")
	}
	if u, p := sortedKeys(used), sortedKeys(passed); strings.Join(u, " ") != strings.Join(p, " ") {
		bad = append(bad, fmt.Sprintf("templatefile passes %v; docs/openapi.yaml uses %v", p, u))
	}

	gws := c.resources("yandex_api_gateway")
	if len(gws) != 1 {
		return append(bad, fmt.Sprintf("want one yandex_api_gateway, found %d", len(gws)))
	}
	var gw string
	for k := range gws {
		gw = "yandex_api_gateway." + k
	}
	spec := attr(gws[strings.TrimPrefix(gw, "yandex_api_gateway.")].Body, "spec")
	if spec == nil || !refersTo(spec.Expr, "local.gateway_spec") {
		bad = append(bad, gw+": its spec is not local.gateway_spec")
	}
	return bad
}

// checkCommands: a local-exec command interpolates nothing; what it needs
// (tokens, secrets, ids) comes through its environment, so Terraform never
// prints a secret as part of a command.
func checkCommands(c *config) []string {
	var bad []string
	for _, b := range c.blocks {
		if b.Type != "resource" {
			continue
		}
		for _, p := range blocksOf(b.Body, "provisioner") {
			cmd := attr(p.Body, "command")
			if cmd == nil {
				continue
			}
			if vars := cmd.Expr.Variables(); len(vars) > 0 {
				bad = append(bad, fmt.Sprintf("%s.%s: the command interpolates %s; pass it through environment",
					b.Labels[0], b.Labels[1], traversalAddr(vars[0])))
			}
		}
	}
	return bad
}

// --- the dependency graph ----------------------------------------------------

// checkAcyclic: the references between resources, data sources and locals
// (depends_on included) form no cycle, which Terraform would refuse.
// `terraform validate` finds this too, but needs the providers; this runs
// anywhere.
func checkAcyclic(c *config) []string {
	edges := map[string]map[string]bool{}
	add := func(from string, e hclsyntax.Expression) {
		for _, tr := range e.Variables() {
			if to := traversalAddr(tr); to != "" && !strings.HasPrefix(to, "var.") {
				if edges[from] == nil {
					edges[from] = map[string]bool{}
				}
				edges[from][to] = true
			}
		}
	}
	var walk func(from string, body *hclsyntax.Body)
	walk = func(from string, body *hclsyntax.Body) {
		for _, a := range body.Attributes {
			add(from, a.Expr)
		}
		for _, b := range body.Blocks {
			walk(from, b.Body)
		}
	}
	for _, b := range c.blocks {
		switch b.Type {
		case "resource":
			walk(b.Labels[0]+"."+b.Labels[1], b.Body)
		case "data":
			walk("data."+b.Labels[0]+"."+b.Labels[1], b.Body)
		}
	}
	for name, a := range c.locals {
		add("local."+name, a.Expr)
	}
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var cycle []string
	var visit func(n string) bool
	visit = func(n string) bool {
		switch state[n] {
		case open:
			for i, s := range stack {
				if s == n {
					cycle = append(append([]string{}, stack[i:]...), n)
				}
			}
			return true
		case done:
			return false
		}
		state[n] = open
		stack = append(stack, n)
		for _, m := range sortedKeys(edges[n]) {
			if visit(m) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return false
	}
	for _, n := range sortedKeys(edges) {
		if visit(n) {
			return []string{"dependency cycle: " + strings.Join(cycle, " -> ")}
		}
	}
	return nil
}

// --- small helpers ----------------------------------------------------------

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// inRange reports whether s is a whole number in [lo, hi].
func inRange(s string, lo, hi int) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= lo && n <= hi
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// --- buckets, roles and who can read what -------------------------------------

// checkNoBucketACL: no bucket sets acl. The provider deprecates the
// argument (use yandex_storage_bucket_grant) and private, the only ACL the
// buckets need, is Object Storage's default.
func checkNoBucketACL(c *config) []string {
	var bad []string
	bs := c.resources("yandex_storage_bucket")
	for _, label := range sortedKeys(bs) {
		if attr(bs[label].Body, "acl") != nil {
			bad = append(bad, fmt.Sprintf("yandex_storage_bucket.%s sets acl: deprecated, and private is the default", label))
		}
	}
	return bad
}

// checkKeysExpire: every object key the code writes to the bucket falls
// under a lifecycle rule that expires it, so nothing the code leaves behind
// stays for ever.
func checkKeysExpire(c *config, bucket string, keys []string) []string {
	b, ok := c.resources("yandex_storage_bucket")[bucket]
	if !ok {
		return []string{"no yandex_storage_bucket." + bucket}
	}
	var prefixes []string
	for _, r := range blocksOf(b.Body, "lifecycle_rule") {
		var p string
		if fs := blocksOf(r.Body, "filter"); len(fs) == 1 {
			p, _ = literal(fs[0].Body, "prefix")
		} else {
			p, _ = literal(r.Body, "prefix")
		}
		exp := blocksOf(r.Body, "expiration")
		if len(exp) != 1 {
			continue
		}
		if days, ok := literal(exp[0].Body, "days"); ok && days != "0" {
			prefixes = append(prefixes, p)
		}
	}
	var bad []string
	for _, k := range keys {
		covered := false
		for _, p := range prefixes {
			covered = covered || strings.HasPrefix(k, p)
		}
		if !covered {
			bad = append(bad, fmt.Sprintf("yandex_storage_bucket.%s: no lifecycle rule expires %s (rules expire %v)", bucket, k, prefixes))
		}
	}
	return bad
}

// documentedRoles are the roles the configuration may grant: each is in
// Yandex Cloud's role reference (yandex.cloud/en/docs/iam/roles-reference);
// docs/deploy.md, "Roles and their sources", gives each one's source and
// why it is granted. A role not in this list is a typo or a role nobody
// checked.
var documentedRoles = map[string]bool{
	"ydb.editor":                true,
	"ai.speechkit-stt.user":     true,
	"ai.translate.user":         true,
	"storage.viewer":            true,
	"storage.editor":            true,
	"storage.configurer":        true,
	"functions.functionInvoker": true,
	"ymq.writer":                true,
	"ymq.admin":                 true,
	"lockbox.payloadViewer":     true,
}

// checkRoles: every role granted is a literal in documentedRoles.
func checkRoles(c *config, known map[string]bool) []string {
	var bad []string
	for _, b := range c.blocks {
		if b.Type != "resource" || attr(b.Body, "role") == nil {
			continue
		}
		addr := b.Labels[0] + "." + b.Labels[1]
		role, ok := literal(b.Body, "role")
		switch {
		case !ok:
			bad = append(bad, addr+": role is not a literal")
		case !known[role]:
			bad = append(bad, fmt.Sprintf("%s: role %q is not one of the documented roles (docs/deploy.md, \"Roles and their sources\")", addr, role))
		}
	}
	return bad
}

// resourceRef is the resource of a type that an expression refers to
// ("yandex_lockbox_secret.s3_key" -> "s3_key"), or "".
func resourceRef(e hclsyntax.Expression, typ string) string {
	for _, tr := range e.Variables() {
		if tr.RootName() == typ && len(tr) > 1 {
			if a, ok := tr[1].(hcl.TraverseAttr); ok {
				return a.Name
			}
		}
	}
	return ""
}

// accountOf resolves one IAM member expression to the service account it
// names: local.member.<k> (local.member maps each key of local.sa to
// "serviceAccount:<id>", and local.sa maps it to a service account's id), or
// an expression that refers to yandex_iam_service_account.<name> itself.
func (c *config) accountOf(e hclsyntax.Expression) string {
	if tr, diags := hcl.AbsTraversalForExpr(e); !diags.HasErrors() && tr.RootName() == "local" && len(tr) == 3 {
		m, ok1 := tr[1].(hcl.TraverseAttr)
		k, ok2 := tr[2].(hcl.TraverseAttr)
		if ok1 && ok2 && m.Name == "member" {
			if sa, ok := c.locals["sa"]; ok {
				if obj, ok := sa.Expr.(*hclsyntax.ObjectConsExpr); ok {
					for _, it := range obj.Items {
						if kv, diags := it.KeyExpr.Value(nil); !diags.HasErrors() && kv.Type() == cty.String && kv.AsString() == k.Name {
							return resourceRef(it.ValueExpr, "yandex_iam_service_account")
						}
					}
				}
			}
			return ""
		}
	}
	return resourceRef(e, "yandex_iam_service_account")
}

// grantees lists the service accounts a binding's members (a list) or a
// member's member names.
func (c *config) grantees(b *hclsyntax.Body) []string {
	var out []string
	if m := attr(b, "member"); m != nil {
		if a := c.accountOf(m.Expr); a != "" {
			out = append(out, a)
		}
	}
	if ms := attr(b, "members"); ms != nil {
		if tup, ok := ms.Expr.(*hclsyntax.TupleConsExpr); ok {
			for _, e := range tup.Exprs {
				if a := c.accountOf(e); a != "" {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// granted reports whether a resource of one of the types, on the target
// (its targetAttr refers to target), grants one of the roles to the
// account.
func (c *config) granted(types []string, targetAttr, target, account string, roles ...string) bool {
	for _, typ := range types {
		for _, b := range c.resources(typ) {
			t := attr(b.Body, targetAttr)
			if t == nil || !refersTo(t.Expr, target) {
				continue
			}
			role, _ := literal(b.Body, "role")
			if !contains(roles, role) {
				continue
			}
			if contains(c.grantees(b.Body), account) {
				return true
			}
		}
	}
	return false
}

// checkSecretAccess: each function's account may read every Lockbox secret
// the function is given (lockbox.payloadViewer on that secret); otherwise
// the function version would not get its environment.
func checkSecretAccess(c *config) []string {
	var bad []string
	lockboxBindings := []string{"yandex_lockbox_secret_iam_binding", "yandex_lockbox_secret_iam_member"}
	fns := c.resources("yandex_function")
	for _, label := range sortedKeys(fns) {
		fn := fns[label]
		addr := "yandex_function." + label
		sa := attr(fn.Body, "service_account_id")
		if sa == nil {
			bad = append(bad, addr+": no service_account_id")
			continue
		}
		account := resourceRef(sa.Expr, "yandex_iam_service_account")
		for _, s := range blocksOf(fn.Body, "secrets") {
			name, _ := literal(s.Body, "environment_variable")
			id := attr(s.Body, "id")
			secret := ""
			if id != nil {
				secret = resourceRef(id.Expr, "yandex_lockbox_secret")
			}
			if secret == "" {
				bad = append(bad, fmt.Sprintf("%s: the secret for %s is not a yandex_lockbox_secret of this configuration", addr, name))
				continue
			}
			if !c.granted(lockboxBindings, "secret_id", "yandex_lockbox_secret."+secret, account, "lockbox.payloadViewer") {
				bad = append(bad, fmt.Sprintf("%s: its account (yandex_iam_service_account.%s) has no lockbox.payloadViewer on yandex_lockbox_secret.%s, which gives it %s",
					addr, account, secret, name))
			}
		}
	}
	return bad
}

// checkS3KeyAccess: the static key every function signs its Object Storage
// requests with (S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY from Lockbox) is
// written to that secret by a yandex_iam_service_account_static_access_key
// whose account may read, write and delete in the data bucket: ingest reads
// sources/<id>, copies it to audio/<id>/source and deletes the original with
// it; the others write and delete results and audio.
func checkS3KeyAccess(c *config) []string {
	var bad []string
	// Which account's key each Lockbox secret receives.
	keyOwner := map[string]string{}
	keys := c.resources("yandex_iam_service_account_static_access_key")
	for _, label := range sortedKeys(keys) {
		k := keys[label]
		sa := attr(k.Body, "service_account_id")
		for _, o := range blocksOf(k.Body, "output_to_lockbox") {
			if s := attr(o.Body, "secret_id"); s != nil && sa != nil {
				keyOwner[resourceRef(s.Expr, "yandex_lockbox_secret")] = resourceRef(sa.Expr, "yandex_iam_service_account")
			}
		}
	}
	bucketBindings := []string{"yandex_storage_bucket_iam_binding", "yandex_storage_bucket_iam_member"}
	fns := c.resources("yandex_function")
	for _, label := range sortedKeys(fns) {
		addr := "yandex_function." + label
		for _, s := range blocksOf(fns[label].Body, "secrets") {
			name, _ := literal(s.Body, "environment_variable")
			if name != "S3_ACCESS_KEY_ID" && name != "S3_SECRET_ACCESS_KEY" {
				continue
			}
			secret := ""
			if id := attr(s.Body, "id"); id != nil {
				secret = resourceRef(id.Expr, "yandex_lockbox_secret")
			}
			owner, ok := keyOwner[secret]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s: %s comes from yandex_lockbox_secret.%s, which no static access key is written to", addr, name, secret))
				continue
			}
			if !c.granted(bucketBindings, "bucket", "yandex_storage_bucket.data", owner, "storage.editor", "storage.admin") {
				bad = append(bad, fmt.Sprintf("%s: %s is the key of yandex_iam_service_account.%s, which cannot write and delete in the data bucket (storage.editor on yandex_storage_bucket.data)",
					addr, name, owner))
			}
		}
	}
	return bad
}

// --- the OpenAPI document's API Gateway extensions ----------------------------

// checkSpecExtensions: the document's top-level API Gateway settings are
// under x-yc-apigateway, the one top-level extension API Gateway documents
// (its cors rule among them); x-yc-apigateway-cors belongs to a path, and at
// the top level the gateway would not read it as the gateway-wide rule.
func checkSpecExtensions(doc string) []string {
	var spec map[string]any
	if err := yaml.Unmarshal([]byte(doc), &spec); err != nil {
		return []string{"docs/openapi.yaml: " + err.Error()}
	}
	var bad []string
	for _, k := range sortedKeys(spec) {
		if strings.HasPrefix(k, "x-yc-") && k != "x-yc-apigateway" {
			bad = append(bad, fmt.Sprintf("docs/openapi.yaml: top-level %s is not an API Gateway setting; gateway-wide settings go under x-yc-apigateway", k))
		}
	}
	top, _ := spec["x-yc-apigateway"].(map[string]any)
	cors, _ := top["cors"].(map[string]any)
	if _, ok := cors["origin"]; !ok {
		bad = append(bad, "docs/openapi.yaml: no x-yc-apigateway.cors rule with an origin (the gateway answers no preflight)")
	}
	return bad
}

// checkSpecPortable: the document uses only what API Gateway documents.
// No YAML anchor, alias or merge key (<<): the gateway's documentation does
// not say its parser takes them, so each operation writes its integration
// out. No security scheme without a function authorizer
// (x-yc-apigateway-authorizer of type function): the documentation
// describes a scheme only with an authorizer and says nothing of one
// without it; the api function checks tokens itself, so the document
// declares none.
func checkSpecPortable(doc string) []string {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		return []string{"docs/openapi.yaml: " + err.Error()}
	}
	var bad []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch {
		case n.Kind == yaml.AliasNode:
			bad = append(bad, fmt.Sprintf("docs/openapi.yaml:%d: alias *%s; write the value out", n.Line, n.Value))
		case n.Anchor != "":
			bad = append(bad, fmt.Sprintf("docs/openapi.yaml:%d: anchor &%s; write the value out where it is used", n.Line, n.Anchor))
		case n.Kind == yaml.ScalarNode && n.Tag == "!!merge":
			bad = append(bad, fmt.Sprintf("docs/openapi.yaml:%d: merge key <<; write the keys out", n.Line))
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)

	var spec struct {
		Components struct {
			SecuritySchemes map[string]map[string]any `yaml:"securitySchemes"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal([]byte(doc), &spec); err != nil {
		return append(bad, "docs/openapi.yaml: "+err.Error())
	}
	for _, name := range sortedKeys(spec.Components.SecuritySchemes) {
		auth, _ := spec.Components.SecuritySchemes[name]["x-yc-apigateway-authorizer"].(map[string]any)
		if auth["type"] != "function" {
			bad = append(bad, fmt.Sprintf("docs/openapi.yaml: security scheme %s has no function authorizer (x-yc-apigateway-authorizer, type function)", name))
		}
	}
	return bad
}
