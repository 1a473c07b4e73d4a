package pep

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// DecisionQuery is the query every policy bundle must answer.
const DecisionQuery = "data.airlock.decision"

// Engine evaluates a policy bundle with a query prepared once; Decide is safe
// for concurrent use.
type Engine struct {
	query    rego.PreparedEvalQuery
	gate     rego.PreparedEvalQuery
	revision string
}

// NewEngine compiles b and prepares the decision query. A bundle that does
// not compile is an error here, at load time, never a silent allow later.
func NewEngine(ctx context.Context, b *bundle.Bundle) (*Engine, error) {
	// One compiler and store for both queries: the bundle is compiled and
	// its data stored once.
	compiler := ast.NewCompiler().WithCapabilities(SandboxCapabilities())
	store := inmem.NewWithOpts(inmem.OptReturnASTValuesOnRead(true))
	txn, err := store.NewTransaction(ctx, storage.WriteParams) // the bundle's data goes in
	if err != nil {
		return nil, fmt.Errorf("policy store: %w", err)
	}
	pq, err := rego.New(
		rego.Query(DecisionQuery),
		rego.Compiler(compiler),
		rego.Store(store),
		rego.Transaction(txn),
		rego.ParsedBundle("airlock", b),
		rego.Capabilities(SandboxCapabilities()),
		// By default a builtin error makes its expression undefined, so a
		// deny rule silently does not fire: fail-open. Strict errors fail
		// the evaluation instead, and airlock refuses the frame.
		rego.StrictBuiltinErrors(true),
		rego.StoreReadAST(true),
	).PrepareForEval(ctx)
	if err != nil {
		store.Abort(ctx, txn)
		return nil, fmt.Errorf("compile policy: %w", err)
	}
	if err := store.Commit(ctx, txn); err != nil {
		return nil, fmt.Errorf("policy store: %w", err)
	}
	gate, err := rego.New(
		rego.Query(ResponseGateQuery),
		rego.Compiler(compiler),
		rego.Store(store),
		rego.Capabilities(SandboxCapabilities()),
		rego.StrictBuiltinErrors(true),
		rego.StoreReadAST(true),
	).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", ResponseGateQuery, err)
	}
	return &Engine{query: pq, gate: gate, revision: b.Manifest.Revision}, nil
}

// Revision is the bundle's manifest revision.
func (e *Engine) Revision() string { return e.revision }

// Decide evaluates the decision for one input.
func (e *Engine) Decide(ctx context.Context, in *Input) (*Decision, error) {
	v, err := in.Value()
	if err != nil {
		return nil, &PolicyError{Rule: "policy.error", Err: fmt.Errorf("build input: %w", err)}
	}
	return e.DecideValue(ctx, v)
}

// DecideValue evaluates the decision for an input already converted to an
// OPA value (airlock eval reads saved input documents this way).
func (e *Engine) DecideValue(ctx context.Context, input ast.Value) (*Decision, error) {
	rs, err := e.query.Eval(ctx, rego.EvalParsedInput(input))
	if err != nil {
		return nil, &PolicyError{Rule: "policy.error", Err: fmt.Errorf("evaluate %s: %w", DecisionQuery, err)}
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return nil, &PolicyError{Rule: "policy.error", Err: errors.New(DecisionQuery + " is undefined")}
	}
	d, err := parseDecision(rs[0].Expressions[0].Value)
	if err != nil {
		return nil, &PolicyError{Rule: "policy.error", Err: err}
	}
	return d, nil
}

// SandboxCapabilities are the builtins a policy may call: everything but
// network access and runtime introspection. A decision depends on its input
// and its bundle only, so it can be reproduced from the audit trail.
func SandboxCapabilities() *ast.Capabilities {
	denied := map[string]bool{"http.send": true, "net.lookup_ip_addr": true, "opa.runtime": true}
	caps := ast.CapabilitiesForThisVersion()
	kept := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if !denied[b.Name] {
			kept = append(kept, b)
		}
	}
	caps.Builtins = kept
	return caps
}

// parseDecision reads the decision object strictly: a policy that returns a
// different shape is a broken policy, refused rather than guessed at.
func parseDecision(v any) (*Decision, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %T, not an object", DecisionQuery, v)
	}
	allow, ok := m["allow"].(bool)
	if !ok {
		return nil, fmt.Errorf("%s.allow is missing or not a boolean", DecisionQuery)
	}
	d := &Decision{Allow: allow, Mode: "enforce"}
	if mode, ok := m["mode"].(string); ok {
		d.Mode = mode
	}
	if taint, ok := m["taint"].(bool); ok {
		d.Taint = taint
	}
	for _, o := range objects(m["violations"]) {
		d.Violations = append(d.Violations, Violation{Rule: str(o, "rule"), Message: str(o, "message"), Mode: str(o, "mode")})
	}
	for _, o := range objects(m["taints"]) {
		d.Taints = append(d.Taints, Violation{Rule: str(o, "rule"), Message: str(o, "message")})
	}
	for _, o := range objects(m["waived"]) {
		d.Waived = append(d.Waived, Waived{Rule: str(o, "rule"), Message: str(o, "message"),
			Waiver: str(o, "waiver"), Expires: str(o, "expires"), Reason: str(o, "reason")})
	}
	for _, o := range objects(m["expired_waivers"]) {
		d.ExpiredWaivers = append(d.ExpiredWaivers, ExpiredWaiver{Waiver: str(o, "waiver"), Rule: str(o, "rule"), Expires: str(o, "expires")})
	}
	for _, v := range d.Violations {
		if v.Rule == "" {
			return nil, fmt.Errorf("%s has a violation without a rule ID", DecisionQuery)
		}
	}
	// allow must agree with the violations: a policy cannot allow a frame
	// while reporting an enforced violation.
	if d.Allow && len(d.Enforced()) > 0 {
		return nil, fmt.Errorf("%s allows the frame but reports enforced violations", DecisionQuery)
	}
	if !d.Allow && len(d.Enforced()) == 0 {
		d.Violations = append(d.Violations, Violation{Rule: "policy.denied", Message: "the policy refused this frame without naming a rule", Mode: "enforce"})
	}
	return d, nil
}

func objects(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		if o, ok := item.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

func str(o map[string]any, key string) string {
	s, _ := o[key].(string)
	return s
}
