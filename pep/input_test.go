package pep

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/airlock-dev/airlock/bench/policydata"
	"github.com/airlock-dev/airlock/detectors"
)

// TestInputValueMatchesJSON: the direct conversion to an OPA value must give
// the policy exactly what the documented JSON form of the input says, so a
// saved input document replayed with `airlock eval` decides the same way.
func TestInputValueMatchesJSON(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 123, time.UTC)
	inputs := map[string]*Input{
		"request": {
			Version: InputVersion, Phase: PhaseRequest, Direction: ClientToServer, Method: "tools/call", Server: "web",
			Session: SessionState{ID: "s", Tainted: true, Taint: []TaintEvent{{Server: "web", Tool: "fetch", At: at, DecisionID: "d1", Rules: []string{"quarantine.untrusted_result"}}}},
			Tool:    &ToolInfo{Name: "fetch", Annotations: map[string]any{"openWorldHint": true}},
			Arguments: map[string]any{"url": "https://example.org", "n": json.Number("9007199254740993"),
				"nested": []any{map[string]any{"k": nil}, true, 1.5}},
			Detectors: Detections{
				Hosts: []detectors.HostHit{
					{Host: "example.org", Raw: "https://example.org", Kind: "url", Path: "/url", Field: "url", Destination: true},
					{Host: "xn--bcher-kva.example", Unicode: "bücher.example", Lookalike: true, Raw: "aGk=", Kind: "hostname", Path: "/b", Decoded: "base64"},
				},
				Emails:    []detectors.EmailHit{{Address: "a@b.example", Domain: "b.example", Path: "/to/0", Field: "to", Destination: true}},
				Secrets:   []detectors.SecretHit{{Kind: "aws_access_key", Path: "/body", Redacted: "AKIA…XYZ", Decoded: "hex"}},
				Paths:     []detectors.PathHit{{Path: "/home/u/.aws/credentials", Raw: "~/.aws/credentials", Arg: "/path", Protected: []string{"~/.aws/**"}}, {Path: "/tmp/x", Raw: "/tmp/x", Arg: "/p"}},
				Injection: []detectors.InjectionHit{{Kind: "fake_system_message", Path: "/content/0/text"}},
			},
			Now: at,
		},
		"response": {
			Version: InputVersion, Phase: PhaseResponse, Direction: ServerToClient, Method: "tools/call", Server: "web",
			Session:   SessionState{ID: "s", Taint: []TaintEvent{}},
			Tool:      &ToolInfo{Name: "fetch", Pinned: true},
			Resource:  &ResourceInfo{URI: "file:///srv/inbox/1.eml"},
			Arguments: map[string]any{},
			Result:    map[string]any{"isError": false, "content": []any{map[string]any{"type": "text", "text": "ü"}}},
			Detectors: noDetections(),
			Now:       at,
		},
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			direct, err := in.Value()
			require.NoError(t, err)
			raw, err := json.Marshal(in)
			require.NoError(t, err)
			viaJSON, err := ast.ValueFromReader(strings.NewReader(string(raw)))
			require.NoError(t, err)
			assert.Equal(t, 0, direct.Compare(viaJSON), "direct:\n%v\nvia JSON:\n%v", direct, viaJSON)
		})
	}
}

func TestParseDecision(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		wantErr string
		check   func(*testing.T, *Decision)
	}{
		{"allow", map[string]any{"allow": true, "violations": []any{}, "mode": "enforce"}, "", func(t *testing.T, d *Decision) {
			assert.True(t, d.Allow)
			assert.Empty(t, d.Enforced())
		}},
		{"refuse", map[string]any{"allow": false, "violations": []any{map[string]any{"rule": "a.b", "message": "m", "mode": "enforce"}}}, "", func(t *testing.T, d *Decision) {
			assert.Equal(t, []string{"a.b"}, ruleIDs(d.Enforced()))
		}},
		{"audit-only violation allows", map[string]any{"allow": true, "violations": []any{map[string]any{"rule": "a.b", "mode": "audit"}}}, "", func(t *testing.T, d *Decision) {
			assert.Empty(t, d.Enforced())
			assert.Len(t, d.Violations, 1)
		}},
		{"refusal without a rule gets one", map[string]any{"allow": false}, "", func(t *testing.T, d *Decision) {
			assert.Equal(t, []string{"policy.denied"}, ruleIDs(d.Enforced()))
		}},
		{"not an object", "yes", "not an object", nil},
		{"no allow", map[string]any{"violations": []any{}}, "allow is missing", nil},
		{"allow not a bool", map[string]any{"allow": "true"}, "allow is missing", nil},
		{"allow contradicts violations", map[string]any{"allow": true, "violations": []any{map[string]any{"rule": "a.b", "mode": "enforce"}}}, "allows the frame", nil},
		{"violation without rule", map[string]any{"allow": false, "violations": []any{map[string]any{"message": "x"}}}, "without a rule", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseDecision(tc.v)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, d)
		})
	}
}

// BenchmarkDecide measures the decision path of a typical tools/call: input
// building from the frame (peek, decode, detectors), conversion, Rego
// evaluation with the default policy, with a small data document and with
// the realistic one bench/ uses (50 servers, 200 allow-list entries, 20
// waivers), which is what users run.
func BenchmarkDecide(b *testing.B) {
	for _, data := range []struct{ name, doc string }{{"small", testData}, {"realistic", string(policydata.Realistic("demo"))}} {
		b.Run(data.name, func(b *testing.B) { benchmarkDecide(b, data.doc) })
	}
}

func benchmarkDecide(b *testing.B, data string) {
	engine := defaultEngine(b, data)
	p, err := New(Options{Server: "demo", Decider: engine, Audit: &discardAudit{}})
	require.NoError(b, err)
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"fetch","arguments":{"url":"https://github.com/acme/cli/releases","headers":{"accept":"text/html"},"timeout":30}}}`)
	b.Run("peek", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := peekFrame(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	f, _ := peekFrame(line)
	b.Run("build-input", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := p.buildInput(b.Context(), f, PhaseRequest, ClientToServer, pendingRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	in, _, _ := p.buildInput(b.Context(), f, PhaseRequest, ClientToServer, pendingRequest{})
	b.Run("to-value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := in.Value(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("eval", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := engine.Decide(b.Context(), in)
			if err != nil || !d.Allow {
				b.Fatal(err, d)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fr, _ := peekFrame(line)
			if out := p.decide(b.Context(), fr, PhaseRequest, ClientToServer, pendingRequest{method: "tools/call"}); !out.allow {
				b.Fatal(out.message)
			}
		}
	})
}
