package pep

import (
	"context"
	"fmt"
	"slices"

	"github.com/open-policy-agent/opa/v1/rego"
)

// ResponseGateQuery is the policy's statement of which responses it can act
// on, asked once per server when the policy loads (rego/README.md).
const ResponseGateQuery = "data.airlock.response_gate"

// ResponseGate says which responses need a decision; the others are relayed
// without one (no rule could act on them). A nil *ResponseGate decides
// every response.
type ResponseGate struct {
	methods   []string // every response to these requests ("*": all)
	tools     []string // tools/call responses of these tools ("*": all)
	openWorld bool     // tools/call responses of tools declaring openWorldHint
	hits      []string // responses in which these detectors found something ("*": any)
}

// Needs reports whether the response to a request of method for tool needs
// a decision before its content is scanned; annotations are the tool's.
// When it does not, NeedsHits says whether the detectors' hits make it.
func (g *ResponseGate) Needs(method, tool string, annotations map[string]any) bool {
	if g == nil || listed(g.methods, method) {
		return true
	}
	if method != "tools/call" {
		return false
	}
	if listed(g.tools, tool) {
		return true
	}
	return g.openWorld && annotations["openWorldHint"] == true
}

// ScansFor reports whether any detector's hits can make a response need a
// decision, so whether the content must be scanned to know.
func (g *ResponseGate) ScansFor() bool { return g == nil || len(g.hits) > 0 }

// OnlyInjection reports whether injection markers are the only hits that
// can make a response need a decision.
func (g *ResponseGate) OnlyInjection() bool {
	return g != nil && len(g.hits) > 0 && !slices.ContainsFunc(g.hits, func(k string) bool { return k != "injection" })
}

// NeedsHits reports whether the detectors' hits make a response need a
// decision.
func (g *ResponseGate) NeedsHits(d Detections) bool {
	if g == nil {
		return true
	}
	counts := map[string]int{"hosts": len(d.Hosts), "emails": len(d.Emails), "secrets": len(d.Secrets),
		"paths": len(d.Paths), "injection": len(d.Injection)}
	for _, kind := range g.hits {
		for k, n := range counts {
			if n > 0 && (kind == "*" || kind == k) {
				return true
			}
		}
	}
	return false
}

func listed(list []string, name string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, name)
}

// ResponseGate evaluates the policy's response gate for server. A policy
// without one, or one that says decide_all, gets nil: every response is
// decided.
func (e *Engine) ResponseGate(ctx context.Context, server string) (*ResponseGate, error) {
	rs, err := e.gate.Eval(ctx, rego.EvalInput(map[string]any{"server": server}))
	if err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", ResponseGateQuery, err)
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return nil, nil // undefined: the policy does not say, so decide all
	}
	return parseResponseGate(rs[0].Expressions[0].Value)
}

// parseResponseGate reads the gate strictly: anything it does not
// understand decides every response.
func parseResponseGate(v any) (*ResponseGate, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %T, not an object", ResponseGateQuery, v)
	}
	if all, ok := m["decide_all"].(bool); !ok || all {
		return nil, nil
	}
	g := &ResponseGate{}
	for field, dst := range map[string]*[]string{"methods": &g.methods, "tools": &g.tools, "hits": &g.hits} {
		list, ok := m[field].([]any) // a Rego set arrives as a list
		if !ok {
			return nil, fmt.Errorf("%s.%s is %T, not a set of strings", ResponseGateQuery, field, m[field])
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s.%s holds %T, not a string", ResponseGateQuery, field, x)
			}
			*dst = append(*dst, s)
		}
	}
	if g.openWorld, ok = m["open_world"].(bool); !ok {
		return nil, fmt.Errorf("%s.open_world is %T, not a boolean", ResponseGateQuery, m["open_world"])
	}
	return g, nil
}
