package pep

import (
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/airlock-dev/airlock/detectors"
)

// InputVersion is the version of the input document schema. Policies can
// check input.version; it changes only when a field changes meaning.
const InputVersion = 1

// Phases and directions of a decided frame.
const (
	PhaseRequest   = "request"
	PhaseResponse  = "response"
	ClientToServer = "client_to_server"
	ServerToClient = "server_to_client"
)

// Input is the document the policy decides on (input in Rego). It is built
// only for the frames airlock decides.
type Input struct {
	Version   int            `json:"version"`
	Phase     string         `json:"phase"`
	Direction string         `json:"direction"`
	Method    string         `json:"method"`
	Server    string         `json:"server"`
	Session   SessionState   `json:"session"`
	Tool      *ToolInfo      `json:"tool,omitempty"`
	Resource  *ResourceInfo  `json:"resource,omitempty"`
	Arguments map[string]any `json:"arguments"`
	Result    map[string]any `json:"result,omitzero"` // an empty result is still a result
	Detectors Detections     `json:"detectors"`
	Now       time.Time      `json:"now"`
}

// SessionState is what the policy knows about the client session.
type SessionState struct {
	ID      string       `json:"id"`
	Tainted bool         `json:"tainted"`
	Taint   []TaintEvent `json:"taint"`
}

// TaintEvent records what tainted a session.
type TaintEvent struct {
	Server     string    `json:"server"`
	Tool       string    `json:"tool"` // the tool, or the method (resources/read) for other frames
	At         time.Time `json:"at"`
	DecisionID string    `json:"decision_id"`
	Rules      []string  `json:"rules,omitempty"` // the taint rules that fired
}

// ToolInfo describes the tool a frame calls, as the server last listed it.
type ToolInfo struct {
	Name        string         `json:"name"`
	Pinned      bool           `json:"pinned"`
	Drift       bool           `json:"drift"`
	Annotations map[string]any `json:"annotations,omitempty"`
}

// ResourceInfo names the resource a resources/read frame reads.
type ResourceInfo struct {
	URI string `json:"uri"`
}

// Detections are the detector hits over the frame's arguments or result.
type Detections = detectors.Result

// Value converts the input to an OPA value directly, without a JSON round
// trip; the result is what the prepared query evaluates with. It must agree
// with the JSON encoding of Input (a test checks that it does).
func (in *Input) Value() (ast.Value, error) {
	args, err := ast.InterfaceToValue(nonNilMap(in.Arguments))
	if err != nil {
		return nil, err
	}
	obj := ast.NewObject(
		item("version", ast.InternedTerm(in.Version)),
		item("phase", ast.StringTerm(in.Phase)),
		item("direction", ast.StringTerm(in.Direction)),
		item("method", ast.StringTerm(in.Method)),
		item("server", ast.StringTerm(in.Server)),
		item("session", ast.NewTerm(in.Session.value())),
		item("arguments", ast.NewTerm(args)),
		item("detectors", ast.NewTerm(detectionsValue(in.Detectors))),
		item("now", ast.StringTerm(in.Now.UTC().Format(time.RFC3339Nano))),
	)
	if in.Tool != nil {
		tool, err := in.Tool.value()
		if err != nil {
			return nil, err
		}
		obj.Insert(ast.InternedTerm("tool"), ast.NewTerm(tool))
	}
	if in.Resource != nil {
		obj.Insert(ast.InternedTerm("resource"), ast.ObjectTerm(item("uri", ast.StringTerm(in.Resource.URI))))
	}
	if in.Result != nil {
		result, err := ast.InterfaceToValue(in.Result)
		if err != nil {
			return nil, err
		}
		obj.Insert(ast.InternedTerm("result"), ast.NewTerm(result))
	}
	return obj, nil
}

func (s SessionState) value() ast.Value {
	taint := make([]*ast.Term, len(s.Taint))
	for i, t := range s.Taint {
		ev := ast.NewObject(
			item("server", ast.StringTerm(t.Server)),
			item("tool", ast.StringTerm(t.Tool)),
			item("at", ast.StringTerm(t.At.UTC().Format(time.RFC3339Nano))),
			item("decision_id", ast.StringTerm(t.DecisionID)),
		)
		if len(t.Rules) > 0 {
			rules := make([]*ast.Term, len(t.Rules))
			for j, r := range t.Rules {
				rules[j] = ast.StringTerm(r)
			}
			ev.Insert(ast.InternedTerm("rules"), ast.ArrayTerm(rules...))
		}
		taint[i] = ast.NewTerm(ev)
	}
	return ast.NewObject(
		item("id", ast.StringTerm(s.ID)),
		item("tainted", ast.InternedTerm(s.Tainted)),
		item("taint", ast.ArrayTerm(taint...)),
	)
}

func (t *ToolInfo) value() (ast.Value, error) {
	obj := ast.NewObject(
		item("name", ast.StringTerm(t.Name)),
		item("pinned", ast.InternedTerm(t.Pinned)),
		item("drift", ast.InternedTerm(t.Drift)),
	)
	if t.Annotations != nil {
		ann, err := ast.InterfaceToValue(t.Annotations)
		if err != nil {
			return nil, err
		}
		obj.Insert(ast.InternedTerm("annotations"), ast.NewTerm(ann))
	}
	return obj, nil
}

// detectionsValue converts detector hits field by field; hits are many and
// small, and a JSON round trip per frame would cost more than the scan.
func detectionsValue(d Detections) ast.Value {
	hosts := make([]*ast.Term, len(d.Hosts))
	for i, h := range d.Hosts {
		o := ast.NewObject(
			item("host", ast.StringTerm(h.Host)),
			item("raw", ast.StringTerm(h.Raw)),
			item("kind", ast.StringTerm(h.Kind)),
			item("path", ast.StringTerm(h.Path)),
			item("destination", ast.InternedTerm(h.Destination)),
		)
		optional(o, "unicode", h.Unicode)
		optional(o, "field", h.Field)
		optional(o, "decoded", h.Decoded)
		if h.Lookalike {
			o.Insert(ast.InternedTerm("lookalike"), ast.InternedTerm(true))
		}
		hosts[i] = ast.NewTerm(o)
	}
	emails := make([]*ast.Term, len(d.Emails))
	for i, e := range d.Emails {
		o := ast.NewObject(
			item("address", ast.StringTerm(e.Address)),
			item("domain", ast.StringTerm(e.Domain)),
			item("path", ast.StringTerm(e.Path)),
			item("destination", ast.InternedTerm(e.Destination)),
		)
		optional(o, "field", e.Field)
		optional(o, "decoded", e.Decoded)
		emails[i] = ast.NewTerm(o)
	}
	secrets := make([]*ast.Term, len(d.Secrets))
	for i, sh := range d.Secrets {
		o := ast.NewObject(
			item("kind", ast.StringTerm(sh.Kind)),
			item("path", ast.StringTerm(sh.Path)),
			item("redacted", ast.StringTerm(sh.Redacted)),
		)
		optional(o, "decoded", sh.Decoded)
		secrets[i] = ast.NewTerm(o)
	}
	paths := make([]*ast.Term, len(d.Paths))
	for i, p := range d.Paths {
		o := ast.NewObject(
			item("path", ast.StringTerm(p.Path)),
			item("raw", ast.StringTerm(p.Raw)),
			item("arg", ast.StringTerm(p.Arg)),
		)
		if len(p.Protected) > 0 {
			globs := make([]*ast.Term, len(p.Protected))
			for j, g := range p.Protected {
				globs[j] = ast.StringTerm(g)
			}
			o.Insert(ast.InternedTerm("protected"), ast.ArrayTerm(globs...))
		}
		optional(o, "decoded", p.Decoded)
		paths[i] = ast.NewTerm(o)
	}
	injection := make([]*ast.Term, len(d.Injection))
	for i, in := range d.Injection {
		o := ast.NewObject(
			item("kind", ast.StringTerm(in.Kind)),
			item("path", ast.StringTerm(in.Path)),
		)
		optional(o, "decoded", in.Decoded)
		injection[i] = ast.NewTerm(o)
	}
	return ast.NewObject(
		item("hosts", ast.ArrayTerm(hosts...)),
		item("emails", ast.ArrayTerm(emails...)),
		item("secrets", ast.ArrayTerm(secrets...)),
		item("paths", ast.ArrayTerm(paths...)),
		item("injection", ast.ArrayTerm(injection...)),
	)
}

// optional adds a string member that the JSON form omits when empty.
func optional(o ast.Object, key, value string) {
	if value != "" {
		o.Insert(ast.InternedTerm(key), ast.StringTerm(value))
	}
}

func item(key string, value *ast.Term) [2]*ast.Term {
	return [2]*ast.Term{ast.InternedTerm(key), value}
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
