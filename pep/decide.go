package pep

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/airlock-dev/airlock/detectors"
)

// maxDecodedResult bounds the result that reaches the policy in the input
// document. Larger results reach it as a summary; Go detectors, not Rego,
// are the ones that read whole results.
const maxDecodedResult = 1 << 20

// outcome is what the proxy does with a decided frame.
type outcome struct {
	allow   bool
	tool    string // the tool a tools/call names
	uri     string // the resource a resources/read names
	code    int
	message string
	data    map[string]any
}

// decide builds the input for a frame, asks the policy, applies taint, and
// records the decision. Anything that goes wrong on the way refuses the
// frame: a frame airlock cannot decide is a frame it does not pass.
func (p *Proxy) decide(ctx context.Context, f *frame, phase, dir string, req pendingRequest) outcome {
	start := time.Now()
	// A frame that needs a decision waits for the policy to load; the
	// wait counts in its latency.
	_, policyErr := p.waitPolicy(ctx)
	rec := p.newRecord(dir, f.method, req.tool, f.id)
	rec.Phase = phase
	if phase == PhaseResponse {
		rec.Method, rec.RequestID = req.method, req.id
	}

	if policyErr != nil {
		return p.refusal(ctx, rec, "policy.unavailable", policyErr.Error(), CodePolicyUnavailable)
	}
	if phase == PhaseResponse {
		if needed, d := p.responseNeedsDecision(f, req); !needed {
			return p.relayUndecided(rec, d, start)
		}
	}
	in, rule, err := p.buildInput(ctx, f, phase, dir, req)
	if err != nil {
		code := CodeInvalidRequest // the frame's fault
		if rule == "session.error" || rule == "detector.error" {
			code = CodePolicyUnavailable // airlock's: it cannot decide
		}
		return p.refusal(ctx, rec, rule, err.Error(), code)
	}
	if in.Tool != nil {
		rec.Tool = in.Tool.Name
	}
	rec.Session = in.Session.ID
	rec.Detectors = summarize(in.Detectors)
	rec.Arguments = p.auditArguments(f, phase, in.Detectors)

	dec, err := p.policy.Decider.Decide(ctx, in)
	if err != nil {
		rule := "policy.error"
		var pe *PolicyError
		if errors.As(err, &pe) {
			rule = pe.Rule
		}
		p.opts.Logger.Error("cannot decide; refusing", "rule", rule, "err", err)
		return p.refusal(ctx, rec, rule, err.Error(), CodePolicyUnavailable)
	}
	rec.fill(dec)
	rec.DecisionID = NewDecisionID()
	if dec.Taint {
		// The taint is recorded before the content that caused it is
		// delivered, so the client can never act on it from a clean session.
		ev := TaintEvent{Server: p.opts.Server, Tool: rec.Tool, At: p.opts.Now().UTC(), DecisionID: rec.DecisionID,
			Rules: ruleIDs(dec.Taints)}
		if ev.Tool == "" {
			ev.Tool = rec.Method
		}
		if err := p.opts.Session.Taint(ctx, ev); err != nil {
			// Fail closed twice: the content is withheld, and this process
			// keeps the taint it could not record, so its outbound tools
			// are refused from now on (until airlock restarts on a store
			// that works).
			ev.Rules = append(ev.Rules, "session.error")
			p.unrecordedTaint.Store(&ev)
			p.opts.Logger.Error("cannot record taint; refusing the content, and outbound calls from now on", "err", err)
			return p.refusal(ctx, rec, "session.error", "cannot record the session's taint: "+err.Error(), CodePolicyUnavailable)
		}
	}
	for _, ew := range dec.ExpiredWaivers {
		p.opts.Logger.Warn("an expired waiver was ignored", "waiver", ew.Waiver, "rule", ew.Rule, "expired", ew.Expires)
	}
	enforced := dec.Enforced()
	rec.Action = "forward"
	if len(enforced) > 0 {
		rec.Action = "refuse"
	}
	rec.LatencyUS = time.Since(start).Microseconds()
	if _, err := p.opts.Audit.Append(rec); err != nil {
		// A decision that cannot be recorded is not applied.
		return p.auditFailure(rec, err)
	}
	if len(enforced) == 0 {
		out := outcome{allow: true, tool: rec.Tool}
		if in.Resource != nil {
			out.uri = in.Resource.URI
		}
		return out
	}
	if err := p.opts.Session.Refused(ctx); err != nil {
		p.opts.Logger.Warn("cannot count the refusal", "err", err)
	}
	return outcome{code: CodeRefused, tool: rec.Tool, message: refusalMessage(rec, enforced),
		data: refusalData(rec.DecisionID, ruleIDs(enforced), enforced)}
}

// auditFailure refuses a frame whose audit record could not be written.
func (p *Proxy) auditFailure(rec *auditRecord, err error) outcome {
	p.opts.Logger.Error("cannot write the audit record; refusing", "err", err)
	return outcome{code: CodePolicyUnavailable, tool: rec.Tool,
		message: "airlock refused the frame: the audit trail cannot be written (audit.error)",
		data:    refusalData(rec.DecisionID, []string{"audit.error"}, nil)}
}

// refusal records a refusal that airlock itself made (no policy decision)
// and returns the outcome to apply.
func (p *Proxy) refusal(ctx context.Context, rec *auditRecord, rule, msg string, code int) outcome {
	id := p.recordRefusal(ctx, rec, rule, msg)
	what := rec.Method
	if rec.Tool != "" {
		what += " " + rec.Tool
	}
	return outcome{code: code, tool: rec.Tool,
		message: fmt.Sprintf("airlock refused %s: %s (%s)", what, msg, rule),
		data:    refusalData(id, []string{rule}, nil)}
}

// recordRefusal writes the audit record of a refusal by airlock and returns its
// decision ID.
func (p *Proxy) recordRefusal(ctx context.Context, rec *auditRecord, rule, msg string) string {
	rec.DecisionID = NewDecisionID()
	rec.Action, rec.Allow = "refuse", false
	rec.Rules = []string{rule}
	rec.Error = msg
	if _, err := p.opts.Audit.Append(rec); err != nil {
		p.opts.Logger.Error("cannot write the audit record", "err", err, "rule", rule)
	}
	if err := p.opts.Session.Refused(ctx); err != nil {
		p.opts.Logger.Warn("cannot count the refusal", "err", err)
	}
	return rec.DecisionID
}

// recordDrop records a server frame that was not relayed.
func (p *Proxy) recordDrop(dir, rule, id, msg string) {
	rec := p.newRecord(dir, "", "", id)
	rec.DecisionID = NewDecisionID()
	rec.Action, rec.Rules, rec.Error = "drop", []string{rule}, msg
	if _, err := p.opts.Audit.Append(rec); err != nil {
		p.opts.Logger.Error("cannot write the audit record", "err", err, "rule", rule)
	}
}

// buildInput turns a frame into the policy's input document. It returns the
// rule ID to refuse with when the frame cannot be decided.
func (p *Proxy) buildInput(ctx context.Context, f *frame, phase, dir string, req pendingRequest) (in *Input, rule string, err error) {
	state, err := p.opts.Session.State(ctx)
	if err != nil {
		return nil, "session.error", fmt.Errorf("cannot read the session's state: %w", err)
	}
	if ev := p.unrecordedTaint.Load(); ev != nil && !state.Tainted {
		// A taint this process could not record still holds here.
		state.Tainted = true
		state.Taint = append(slices.Clone(state.Taint), *ev)
	}
	if state.Taint == nil {
		state.Taint = []TaintEvent{} // [] in both the policy's value and the JSON form
	}
	in = &Input{
		Version: InputVersion, Phase: phase, Direction: dir, Method: f.method,
		Server: p.opts.Server, Session: state, Now: p.opts.Now().UTC(),
		Detectors: noDetections(),
	}
	if phase == PhaseResponse {
		in.Method = req.method
		in.Arguments = map[string]any{}
		if req.tool != "" {
			in.Tool = p.toolInfo(req.tool)
		}
		if req.method == "resources/read" {
			in.Resource = &ResourceInfo{URI: req.uri}
		}
		if len(f.result.Raw) > maxDecodedResult {
			// The policy gets a summary of a large result; the detectors
			// read all of it below.
			in.Result = map[string]any{"isError": f.result.Get("isError").Bool(), "truncated": true, "bytes": len(f.result.Raw)}
		} else if in.Result, err = decodeResult(f); err != nil {
			return nil, "protocol.invalid_request", err
		}
		if in.Detectors, err = p.scanResult(f, in.Result, req.tool); err != nil {
			return nil, "detector.error", err
		}
		return in, "", nil
	}

	if !utf8.ValidString(f.params.Raw) || !utf8.ValidString(f.method) {
		// gjson reads the raw bytes, encoding/json (and most servers) read
		// U+FFFD: the policy must not judge a name the server reads
		// differently.
		return nil, "protocol.invalid_request", errors.New(`"params" or "method" is not valid UTF-8`)
	}
	if !f.params.Exists() {
		in.Arguments = map[string]any{}
	} else if !f.params.IsObject() {
		return nil, "protocol.invalid_request", errors.New(`"params" must be an object`)
	} else if bad := hasAmbiguousKeys(f.params); bad != "" {
		return nil, "protocol.invalid_request", errors.New("ambiguous params: " + bad)
	}
	argsRaw := f.params.Raw
	if f.method == "tools/call" {
		name := f.params.Get("name")
		if name.Type != gjson.String || name.Str == "" {
			return nil, "protocol.invalid_request", errors.New("tools/call without a tool name")
		}
		in.Tool = p.toolInfo(strings.Clone(name.Str))
		args := f.params.Get("arguments")
		switch {
		case !args.Exists() || args.Type == gjson.Null:
			argsRaw = ""
		case !args.IsObject():
			return nil, "protocol.invalid_request", errors.New(`tools/call "arguments" must be an object`)
		default:
			argsRaw = args.Raw
		}
	}
	if in.Arguments == nil {
		if in.Arguments, err = decodeObject(argsRaw); err != nil {
			return nil, "protocol.invalid_request", err
		}
	}
	if f.method == "resources/read" {
		uri, ok := in.Arguments["uri"].(string)
		if !ok {
			return nil, "protocol.invalid_request", errors.New(`resources/read without a "uri" string`)
		}
		in.Resource = &ResourceInfo{URI: uri}
	}
	scan := detectors.ScanArguments
	if dir == ServerToClient {
		scan = detectors.ScanContent // a server's request carries content for the model
	}
	tool := ""
	if in.Tool != nil {
		tool = in.Tool.Name
	}
	if in.Detectors, err = p.detect(scan, in.Arguments, tool); err != nil {
		return nil, "detector.error", err
	}
	return in, "", nil
}

// scanResult runs the content detectors over a response's result (or its
// error). decoded is the result as decodeResult gives it, or nil.
func (p *Proxy) scanResult(f *frame, decoded map[string]any, tool string) (Detections, error) {
	if f.result.IsObject() {
		// An object result (every MCP result) is scanned in place: a
		// 16 MiB result is not decoded into a second copy.
		return p.detectRaw(detectors.ScanContentJSON, f.result.Raw, tool)
	}
	if decoded == nil || len(f.result.Raw) > maxDecodedResult {
		var err error
		if decoded, err = decodeResult(f); err != nil {
			return Detections{}, err
		}
	}
	return p.detect(detectors.ScanContent, decoded, tool)
}

// responseNeedsDecision asks the policy's response gate whether any rule
// can act on this response: one to a request it names, or one in whose
// content the detectors found what it asks for. A response that needs none
// is relayed without a decision, with an audit record marked undecided.
func (p *Proxy) responseNeedsDecision(f *frame, req pendingRequest) (bool, Detections) {
	g := p.policy.Gate
	var annotations map[string]any
	if req.tool != "" {
		annotations = p.tools.lookup(req.tool).annotations
	}
	if g.Needs(req.method, req.tool, annotations) {
		return true, Detections{}
	}
	if !g.ScansFor() {
		return false, Detections{}
	}
	if g.OnlyInjection() && f.result.IsObject() {
		// Markers are all that would make it decided: look for them alone
		// (about a third of the cost of every detector, BenchmarkScanContentJSON).
		d, err := p.detectRaw(func(raw string, o detectors.Options) detectors.Result {
			return detectors.Result{Injection: detectors.InjectionJSON(raw, o)}
		}, f.result.Raw, req.tool)
		return err != nil || g.NeedsHits(d), d
	}
	d, err := p.scanResult(f, nil, req.tool)
	// A scan that fails is decided, and refused there with its reason.
	return err != nil || g.NeedsHits(d), d
}

// relayUndecided records a response relayed without a decision (the
// policy's gate says no rule acts on it): the audit trail still has a line
// for every response, marked undecided, with what the detectors found.
func (p *Proxy) relayUndecided(rec *auditRecord, d Detections, start time.Time) outcome {
	rec.Session = p.opts.Session.ID()
	rec.Detectors = summarize(d)
	rec.Action, rec.Allow, rec.Undecided = "forward", true, true
	rec.DecisionID = NewDecisionID()
	rec.LatencyUS = time.Since(start).Microseconds()
	if _, err := p.opts.Audit.Append(rec); err != nil {
		return p.auditFailure(rec, err)
	}
	return outcome{allow: true, tool: rec.Tool}
}

func (p *Proxy) toolInfo(name string) *ToolInfo {
	return &ToolInfo{Name: name, Annotations: p.tools.lookup(name).annotations}
}

// detect runs a scan with the options of this server and tool. A detector
// that panics fails the frame closed instead of taking the proxy down.
func (p *Proxy) detect(scan func(any, detectors.Options) detectors.Result, v any, tool string) (d Detections, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a detector failed: %v", r)
		}
	}()
	opts := detectors.Options{ProtectedPaths: p.policy.ProtectedPaths, Home: p.opts.Home}
	if tool != "" {
		opts.Formats = p.tools.lookup(tool).formats
	}
	return scan(v, opts), nil
}

// detectRaw is detect for a scan of raw JSON (a result, in place).
func (p *Proxy) detectRaw(scan func(string, detectors.Options) detectors.Result, raw, tool string) (Detections, error) {
	return p.detect(func(_ any, o detectors.Options) detectors.Result { return scan(raw, o) }, nil, tool)
}

// noDetections is an empty detector result whose lists encode as [], as
// they reach the policy, so a saved input document replays the same way.
func noDetections() Detections {
	return Detections{Hosts: []detectors.HostHit{}, Emails: []detectors.EmailHit{}, Secrets: []detectors.SecretHit{},
		Paths: []detectors.PathHit{}, Injection: []detectors.InjectionHit{}}
}

func decodeObject(raw string) (map[string]any, error) {
	if raw == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber() // integers above 2^53 stay exact
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("cannot decode arguments: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// decodeResult decodes the result of a response (or its JSON-RPC error,
// under "error").
func decodeResult(f *frame) (map[string]any, error) {
	if !f.result.Exists() {
		v, err := decodeValue(f.errObj.Raw)
		return map[string]any{"error": v}, err
	}
	if !f.result.IsObject() {
		v, err := decodeValue(f.result.Raw)
		return map[string]any{"value": v}, err
	}
	return decodeObject(f.result.Raw)
}

// decodeValue decodes any JSON value, numbers as json.Number: exact, and
// never an infinity that has no JSON form.
func decodeValue(raw string) (any, error) {
	if raw == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("cannot decode the response: %w", err)
	}
	return v, nil
}

func ruleIDs(vs []Violation) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

// refusalMessage tells the person reading the client's error what happened
// and what they can do about it.
func refusalMessage(rec *auditRecord, enforced []Violation) string {
	what := rec.Method
	if rec.Tool != "" {
		what += " " + rec.Tool
	}
	parts := make([]string, len(enforced))
	for i, v := range enforced {
		parts[i] = v.Message + " (" + v.Rule + ")"
	}
	return fmt.Sprintf("airlock refused %s on server %q: %s [decision %s]", what, rec.Server, strings.Join(parts, "; "), rec.DecisionID)
}

// refusalData is the error's data member: machine-readable rule IDs and the
// decision ID that finds the audit record.
func refusalData(decisionID string, rules []string, violations []Violation) map[string]any {
	d := map[string]any{"rules": rules, "decision_id": decisionID}
	if len(violations) > 0 {
		d["violations"] = violations
	}
	return d
}

// NewDecisionID returns a random ID that joins a refusal the client saw
// with its audit record.
func NewDecisionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
