package pep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/detectors"
)

// auditRecord is one line of the audit trail.
type auditRecord struct {
	Time       string `json:"time"`
	DecisionID string `json:"decision_id"`
	Session    string `json:"session,omitempty"`
	Server     string `json:"server"`
	Direction  string `json:"direction"`
	Phase      string `json:"phase,omitempty"`
	Method     string `json:"method,omitempty"`
	Tool       string `json:"tool,omitempty"`
	RequestID  string `json:"request_id,omitempty"`
	Action     string `json:"action"` // forward, refuse or drop
	Allow      bool   `json:"allow"`
	// Undecided marks a response relayed without asking the policy: its
	// response gate says no rule acts on it (rego/README.md).
	Undecided      bool            `json:"undecided,omitempty"`
	Mode           string          `json:"mode,omitempty"`
	Rules          []string        `json:"rules,omitempty"` // every rule that fired, enforced or not
	Violations     []Violation     `json:"violations,omitempty"`
	Waived         []Waived        `json:"waived,omitempty"`
	ExpiredWaivers []ExpiredWaiver `json:"expired_waivers,omitempty"`
	Taint          bool            `json:"taint,omitempty"`
	Taints         []Violation     `json:"taints,omitempty"`
	Policy         string          `json:"policy_revision,omitempty"`
	Detectors      map[string]any  `json:"detectors,omitempty"`
	Arguments      map[string]any  `json:"arguments,omitempty"`
	Error          string          `json:"error,omitempty"`
	LatencyUS      int64           `json:"latency_us"`
}

func (p *Proxy) newRecord(dir, method, tool, id string) *auditRecord {
	return &auditRecord{
		Time: p.opts.Now().UTC().Format(time.RFC3339Nano), Server: p.opts.Server, Direction: dir,
		Method: method, Tool: tool, RequestID: id, Policy: p.revision(),
	}
}

func (r *auditRecord) fill(d *Decision) {
	r.Allow, r.Mode = d.Allow, d.Mode
	r.Violations, r.Waived, r.ExpiredWaivers = d.Violations, d.Waived, d.ExpiredWaivers
	r.Taint, r.Taints = d.Taint, d.Taints
	r.Rules = ruleIDs(d.Violations)
	for _, t := range d.Taints {
		r.Rules = append(r.Rules, t.Rule)
	}
}

// auditArguments records the frame's arguments as the configuration says:
// by default a digest, so the trail proves what was sent without keeping it.
// Arguments in which a detector found a secret are never recorded in full.
func (p *Proxy) auditArguments(f *frame, phase string, d Detections) map[string]any {
	if phase != PhaseRequest || !f.params.Exists() || p.opts.AuditArguments == "omit" {
		return nil
	}
	raw := f.params.Raw
	if args := f.params.Get("arguments"); f.method == "tools/call" && args.Exists() {
		raw = args.Raw
	}
	if p.opts.AuditArguments == "full" && len(d.Secrets) == 0 {
		return map[string]any{"value": json.RawMessage(strings.Clone(raw))}
	}
	sum := sha256.Sum256([]byte(raw))
	digest := map[string]any{"sha256": hex.EncodeToString(sum[:]), "bytes": len(raw)}
	if p.opts.AuditArguments == "full" {
		digest["withheld"] = "the arguments carry secrets (see detectors.secrets)"
	}
	return digest
}

// summarize is what the audit trail keeps of the detector hits: enough to
// explain a decision, never a secret (secret hits carry a redacted form).
func summarize(d Detections) map[string]any {
	out := map[string]any{}
	var hosts []string
	mentions := 0
	for _, h := range d.Hosts {
		switch {
		case !h.Destination:
			mentions++
		case !slices.Contains(hosts, h.Host):
			hosts = append(hosts, h.Host)
		}
	}
	if len(hosts) > 0 {
		out["hosts"] = hosts
	}
	if mentions > 0 {
		out["host_mentions"] = mentions
	}
	if len(d.Emails) > 0 {
		out["emails"] = len(d.Emails)
	}
	if len(d.Secrets) > 0 {
		out["secrets"] = d.Secrets
	}
	var protected []detectors.PathHit
	for _, ph := range d.Paths {
		if len(ph.Protected) > 0 {
			protected = append(protected, ph)
		}
	}
	if len(protected) > 0 {
		out["protected_paths"] = protected
	}
	if len(d.Injection) > 0 {
		out["injection"] = d.Injection
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
