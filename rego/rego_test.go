package rego_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/airlock-dev/airlock/bundles"
	policy "github.com/airlock-dev/airlock/rego"
)

// modules parses the .rego files of fsys that keep accepts.
func modules(t *testing.T, fsys fs.FS, keep func(name string) bool) map[string]*ast.Module {
	t.Helper()
	mods := map[string]*ast.Module{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".rego") || !keep(name) {
			return err
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		mods[name], err = ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{
			RegoVersion:       ast.RegoV1,
			ProcessAnnotation: true,
		})
		return err
	})
	require.NoError(t, err)
	return mods
}

func all(string) bool { return true }

func notTest(name string) bool { return !policy.IsTest(name) }

// TestRego runs every Rego test of the embedded bundle, one Go subtest per
// Rego test (and per case of a parameterised test). Builtin errors fail the
// test, as they fail the decision in the proxy.
func TestRego(t *testing.T) {
	ctx := t.Context()
	store := inmem.New()
	txn, err := store.NewTransaction(ctx)
	require.NoError(t, err)
	defer store.Abort(ctx, txn)

	ch, err := tester.NewRunner().
		SetCompiler(ast.NewCompiler().WithEnablePrintStatements(true).WithStrict(true)).
		SetStore(store).
		SetModules(modules(t, policy.Bundle, all)).
		CapturePrintOutput(true).
		EnableTracing(true). // for the failing expression in reports
		RaiseBuiltinErrors(true).
		SetTimeout(time.Minute).
		RunTests(ctx, txn)
	require.NoError(t, err)

	n := 0
	for r := range ch {
		n++
		t.Run(strings.TrimPrefix(r.Package, "data.")+"."+r.Name, func(t *testing.T) {
			if r.Skip {
				t.Skip("todo_ test")
			}
			if r.Error != nil {
				t.Fatalf("%s: error: %v\n%s", r.Location, r.Error, r.Output)
			}
			reportCases(t, r.SubResults)
			if r.Fail {
				t.Errorf("%s failed:\n%s", r.Name, prettyFailure(r))
			}
		})
	}
	if n == 0 {
		t.Fatal("no Rego tests ran")
	}
	t.Logf("%d Rego tests", n)
}

// reportCases runs one subtest per case of a parameterised Rego test.
func reportCases(t *testing.T, cases tester.SubResultMap) {
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			reportCases(t, c.SubResults)
			if c.Fail && len(c.SubResults) == 0 {
				t.Error("case failed; the failing expression is in the parent test's report")
			}
		})
	}
}

// prettyFailure is what `opa test` prints for a failed test: the failing
// expression with its variables (of every failed case), and print output.
func prettyFailure(r *tester.Result) string {
	var buf bytes.Buffer
	ch := make(chan *tester.Result, 1)
	ch <- r
	close(ch)
	_ = tester.PrettyReporter{Output: &buf, FailureLine: true, LocalVars: true}.Report(ch)
	return buf.String()
}

// TestEmbedded checks that every .rego file and the manifest in this
// directory are embedded.
func TestEmbedded(t *testing.T) {
	var onDisk []string
	err := filepath.WalkDir(".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(name, ".rego") || name == ".manifest") {
			onDisk = append(onDisk, filepath.ToSlash(name))
		}
		return err
	})
	require.NoError(t, err)

	var embedded, prod []string
	require.NoError(t, fs.WalkDir(policy.Bundle, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, name)
			if !policy.IsTest(name) {
				prod = append(prod, name)
			}
		}
		return err
	}))
	assert.ElementsMatch(t, onDisk, embedded, "files on disk vs embedded (embed skips names starting with . or _)")
	assert.NotEqual(t, len(embedded), len(prod), "there are tests")
}

// gateData is a policy file as a user writes it.
const gateData = `{
  "allow_hosts": ["github.com", "*.githubusercontent.com"],
  "servers": {
    "web":   {"untrusted": ["*"]},
    "slack": {"untrusted": ["read_channel"], "outbound": ["post_message"]},
    "files": {"untrusted_resources": ["file:///srv/[z-a]", "file:///srv/inbox/**"]}
  },
  "waivers": [{"id": "W-2026-014", "rule": "egress.host_not_allowed", "server": "web", "tool": "fetch",
               "match": {"url": "https://docs.internal.example/*"}, "expires": "2027-01-31",
               "reason": "internal docs", "approved_by": "sec-team"},
              {"id": "W-broken", "rule": "egress.host_not_allowed", "match": {"url": "[a-"},
               "expires": "2026-02-30", "reason": "x", "approved_by": "y"}]
}`

// policyBundle loads the embedded bundle as the proxy does, with data as its
// data document. The data is set directly, past the loader's validation, so
// that the policy's own defences against malformed data are what is tested.
func policyBundle(tb testing.TB, data string) *bundle.Bundle {
	tb.Helper()
	b, err := bundles.Load(context.Background(), "", "")
	require.NoError(tb, err)
	require.NoError(tb, json.Unmarshal([]byte(data), &b.Data))
	return b
}

func prepare(tb testing.TB, b *bundle.Bundle) rego.PreparedEvalQuery {
	tb.Helper()
	pq, err := rego.New(
		rego.Query("data.airlock.decision"),
		rego.ParsedBundle("airlock", b),
		rego.StrictBuiltinErrors(true),
		rego.StoreReadAST(true),
	).PrepareForEval(context.Background())
	require.NoError(tb, err)
	return pq
}

func parseInput(tb testing.TB, input string) ast.Value {
	tb.Helper()
	var in any
	require.NoError(tb, json.Unmarshal([]byte(input), &in))
	v, err := ast.InterfaceToValue(in)
	require.NoError(tb, err)
	return v
}

// TestPolicyBundle loads Policy as the proxy does (user data as the bundle's
// data document, strict builtin errors) and checks the decision contract.
func TestPolicyBundle(t *testing.T) {
	ctx := t.Context()
	b := policyBundle(t, gateData)
	assert.Equal(t, policy.Revision, b.Manifest.Revision)
	require.NotEmpty(t, b.Modules)
	for _, m := range b.Modules {
		assert.False(t, policy.IsTest(m.Path), m.Path)
	}
	pq := prepare(t, b)

	decide := func(t *testing.T, input string) map[string]any {
		t.Helper()
		rs, err := pq.Eval(ctx, rego.EvalParsedInput(parseInput(t, input)))
		require.NoError(t, err)
		require.Len(t, rs, 1, "decision must be defined")
		d, ok := rs[0].Expressions[0].Value.(map[string]any)
		require.True(t, ok)
		assert.ElementsMatch(t,
			[]string{"allow", "violations", "waived", "expired_waivers", "taint", "taints", "mode"},
			slices.Collect(maps.Keys(d)))
		return d
	}

	t.Run("waived and refused", func(t *testing.T) {
		d := decide(t, fetchCall)
		assert.Equal(t, false, d["allow"])
		assert.Equal(t, "enforce", d["mode"])
		require.Len(t, d["violations"], 1)
		v := d["violations"].([]any)[0].(map[string]any)
		assert.Equal(t, "egress.host_not_allowed", v["rule"])
		assert.Contains(t, v["message"], "evil.example")
		require.Len(t, d["waived"], 1)
		w := d["waived"].([]any)[0].(map[string]any)
		assert.Equal(t, "W-2026-014", w["waiver"])
		assert.Equal(t, "2027-01-31", w["expires"])
	})
	t.Run("untrusted result", func(t *testing.T) {
		d := decide(t, `{"version": 1, "phase": "response", "method": "tools/call", "server": "web",
			"tool": {"name": "fetch"}, "result": {"isError": true, "content": []}, "now": "2026-11-29T12:00:00Z"}`)
		assert.Equal(t, true, d["allow"])
		assert.Equal(t, true, d["taint"])
	})
	t.Run("untrusted resource", func(t *testing.T) {
		d := decide(t, `{"version": 1, "phase": "response", "method": "resources/read", "server": "files",
			"resource": {"uri": "file:///srv/inbox/a/b.eml"}, "result": {"contents": []},
			"session": {"id": "s", "tainted": false, "taint": []}, "now": "2026-11-29T12:00:00Z"}`)
		assert.Equal(t, true, d["allow"])
		assert.Equal(t, true, d["taint"])
	})
	t.Run("resource matching no safe pattern", func(t *testing.T) {
		d := decide(t, `{"version": 1, "phase": "response", "method": "resources/read", "server": "files",
			"resource": {"uri": "file:///srv/[z-a]"}, "result": {"error": {"code": -32002, "message": "not found"}},
			"now": "2026-11-29T12:00:00Z"}`)
		assert.Equal(t, false, d["taint"])
	})
	t.Run("injection marker", func(t *testing.T) {
		d := decide(t, `{"version": 1, "phase": "response", "method": "prompts/get", "server": "files",
			"detectors": {"injection": [{"kind": "fake_system_message", "path": "/messages/0/content/text"}]},
			"result": {"messages": []}, "now": "2026-11-29T12:00:00Z"}`)
		assert.Equal(t, true, d["taint"])
		require.Len(t, d["taints"], 1)
		assert.Equal(t, "quarantine.injection_marker", d["taints"].([]any)[0].(map[string]any)["rule"])
	})
	t.Run("a host mentioned in prose is not egress", func(t *testing.T) {
		d := decide(t, `{"version": 1, "phase": "request", "method": "tools/call", "server": "web", "tool": {"name": "summarize"},
			"detectors": {"hosts": [{"host": "evil.example", "raw": "evil.example", "kind": "hostname", "path": "/text", "field": "text", "destination": false}],
				"emails": [], "secrets": [], "paths": [], "injection": []},
			"now": "2026-11-29T12:00:00Z"}`)
		assert.Equal(t, true, d["allow"])
	})
	t.Run("protected path", func(t *testing.T) {
		d := decide(t, `{"version": 1, "phase": "request", "method": "tools/call", "server": "web", "tool": {"name": "read_file"},
			"detectors": {"hosts": [], "emails": [], "secrets": [], "injection": [],
				"paths": [{"path": "/home/u/.aws/credentials", "raw": "~/.aws/credentials", "arg": "/path", "protected": ["~/.aws/**"]}]},
			"now": "2026-11-29T12:00:00Z"}`)
		assert.Equal(t, false, d["allow"])
		require.Len(t, d["violations"], 1)
		v := d["violations"].([]any)[0].(map[string]any)
		assert.Equal(t, "paths.protected", v["rule"])
		assert.Contains(t, v["message"], `"~/.aws/**"`)
	})
	t.Run("secret to an outbound tool", func(t *testing.T) {
		d := decide(t, `{"version": 1, "phase": "request", "method": "tools/call", "server": "slack", "tool": {"name": "post_message"},
			"session": {"id": "s", "tainted": false, "taint": []},
			"detectors": {"hosts": [], "emails": [], "paths": [], "injection": [],
				"secrets": [{"kind": "aws_access_key", "path": "/text", "redacted": "AKIA…MPLE", "decoded": "base64"}]},
			"now": "2026-11-29T12:00:00Z"}`)
		assert.Equal(t, false, d["allow"])
		require.Len(t, d["violations"], 1)
		v := d["violations"].([]any)[0].(map[string]any)
		assert.Equal(t, "secrets.outbound", v["rule"])
		assert.Contains(t, v["message"], "AKIA…MPLE")
		assert.Contains(t, v["message"], "decoded from base64")
	})
	t.Run("empty input", func(t *testing.T) {
		d := decide(t, `{}`)
		assert.Equal(t, true, d["allow"])
		assert.Equal(t, false, d["taint"])
		assert.Empty(t, d["violations"])
	})
}

// TestValidGlob checks the promise of valid_glob in waivers.rego: a pattern
// it accepts never makes glob.match fail (which, with strict builtin errors,
// would fail every decision). Random patterns over the glob metacharacters,
// plus FuzzValidGlob for longer runs.
func TestValidGlob(t *testing.T) {
	check := globChecker(t)
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 3000 {
		p := make([]byte, r.IntN(12))
		for i := range p {
			p[i] = globAlphabet[r.IntN(len(globAlphabet))]
		}
		if check(t, string(p)) {
			accepted++
		}
	}
	assert.Greater(t, accepted, 500)
}

const globAlphabet = `ab-![]{},\*?./`

func FuzzValidGlob(f *testing.F) {
	for _, seed := range []string{"https://docs.internal.example/*", "[a-c]", "[c-a]", "{a,b}", "{a,{b}}", `a\`, "[!]", "[]", "\xbc"} {
		f.Add(seed)
	}
	check := globChecker(f)
	f.Fuzz(func(t *testing.T, p string) { check(t, p) })
}

// globChecker returns a function that tells whether valid_glob accepts p,
// and fails the test if it does and glob.match errors on it, with no
// delimiters (waivers) or with "/" (untrusted_resources).
func globChecker(tb testing.TB) func(testing.TB, string) bool {
	tb.Helper()
	b := policyBundle(tb, "{}")
	valid, err := rego.New(
		rego.Query("data.airlock.waivers.valid_glob(input)"),
		rego.ParsedBundle("airlock", b),
		rego.StrictBuiltinErrors(true),
	).PrepareForEval(context.Background())
	require.NoError(tb, err)
	match, err := rego.New(
		rego.Query(`glob.match(input, null, "a.b/c")`),
		rego.StrictBuiltinErrors(true),
	).PrepareForEval(context.Background())
	require.NoError(tb, err)
	matchSlash, err := rego.New(
		rego.Query(`glob.match(input, ["/"], "a.b/c")`),
		rego.StrictBuiltinErrors(true),
	).PrepareForEval(context.Background())
	require.NoError(tb, err)
	return func(tb testing.TB, p string) bool {
		rs, err := valid.Eval(context.Background(), rego.EvalParsedInput(ast.String(p)))
		require.NoError(tb, err, "valid_glob(%q)", p)
		if len(rs) == 0 {
			return false
		}
		_, err = match.Eval(context.Background(), rego.EvalParsedInput(ast.String(p)))
		assert.NoError(tb, err, "valid_glob accepts %q, but glob.match fails on it", p)
		_, err = matchSlash.Eval(context.Background(), rego.EvalParsedInput(ast.String(p)))
		assert.NoError(tb, err, "valid_glob accepts %q, but glob.match with \"/\" fails on it", p)
		return true
	}
}

// fetchCall names two hosts: one a waiver in gateData covers, one refused.
const fetchCall = `{"version": 1, "phase": "request", "method": "tools/call", "server": "web",
	"session": {"id": "s", "tainted": false, "taint": []}, "tool": {"name": "fetch"},
	"arguments": {"url": "https://docs.internal.example/a/b", "proxy": "http://evil.example:8080"},
	"detectors": {"hosts": [
		{"host": "docs.internal.example", "raw": "https://docs.internal.example/a/b", "kind": "url", "path": "/url", "field": "url", "destination": true},
		{"host": "evil.example", "raw": "http://evil.example:8080", "kind": "url", "path": "/proxy", "field": "proxy", "destination": true}]},
	"now": "2026-11-29T12:00:00Z"}`

// BenchmarkDecision measures one decision on the embedded policy (input
// already converted to AST, as the proxy does).
func BenchmarkDecision(b *testing.B) {
	cases := []struct{ name, data, input string }{
		{"tools_list_response", gateData, `{"version": 1, "phase": "response", "method": "tools/list", "server": "web", "now": "2026-11-29T12:00:00Z"}`},
		{"tools_call_allowed", gateData, strings.NewReplacer("evil.example", "github.com", "docs.internal.example", "raw.githubusercontent.com").Replace(fetchCall)},
		{"tools_call_refused_no_waivers", `{"allow_hosts": ["github.com"]}`, fetchCall},
		{"tools_call_waived_and_refused", gateData, fetchCall},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			pq := prepare(b, policyBundle(b, c.data))
			v := parseInput(b, c.input)
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pq.Eval(ctx, rego.EvalParsedInput(v)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The rule IDs the Go proxy emits itself; README.md lists them too.
var goSideIDs = []string{
	"protocol.malformed", "protocol.batch", "protocol.invalid_request",
	"protocol.frame_too_large", "policy.unavailable", "policy.error", "detector.error",
}

const goSideMarker = "Go (cannot be waived)"

var ruleIDRe = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// TestRuleIDsDocumented keeps README.md's rule table and the modules in step:
// every ID a module emits (an object literal with "message" and a "rule":
// "<id>" string in a non-test module) is in the table under "## Rule IDs",
// and every Rego row of the table is emitted by a module.
func TestRuleIDsDocumented(t *testing.T) {
	emitted := map[string]string{} // id -> module
	for name, m := range modules(t, policy.Bundle, notTest) {
		ast.WalkTerms(m, func(term *ast.Term) bool {
			obj, ok := term.Value.(ast.Object)
			if !ok {
				return false
			}
			if obj.Get(ast.StringTerm("message")) == nil {
				return false
			}
			if v := obj.Get(ast.StringTerm("rule")); v != nil {
				if id, ok := v.Value.(ast.String); ok {
					emitted[string(id)] = name
				}
			}
			return false
		})
	}
	require.NotEmpty(t, emitted)

	documented := map[string]bool{} // id -> Go side
	f, err := os.ReadFile("README.md")
	require.NoError(t, err)
	cell := regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")
	sc := bufio.NewScanner(bytes.NewReader(f))
	inTable := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "## ") {
			inTable = sc.Text() == "## Rule IDs"
		}
		m := cell.FindStringSubmatch(sc.Text())
		if !inTable || m == nil {
			continue
		}
		id := m[1]
		assert.Regexp(t, ruleIDRe, id, "README row")
		_, dup := documented[id]
		assert.False(t, dup, "%s is in the table twice", id)
		documented[id] = strings.Contains(sc.Text(), goSideMarker)
	}
	require.NoError(t, sc.Err())

	for id, mod := range emitted {
		assert.Regexp(t, ruleIDRe, id, "rule ID in %s", mod)
		goSide, ok := documented[id]
		assert.True(t, ok, "rule %s (%s) is not in the table in README.md", id, mod)
		assert.False(t, goSide, "rule %s (%s) is marked %q in README.md", id, mod, goSideMarker)
	}
	for id, goSide := range documented {
		if !goSide {
			_, ok := emitted[id]
			assert.True(t, ok, "README.md documents %s but no module emits it", id)
		}
	}
	for _, id := range goSideIDs {
		assert.True(t, documented[id], "README.md must list the Go-side rule %s marked %q", id, goSideMarker)
	}
}
