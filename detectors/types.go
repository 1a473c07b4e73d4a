package detectors

// This file is the contract between the detectors and the enforcement
// point: the hit types (they reach the policy as input.detectors) and the
// options a scan takes. Every hit carries the JSON pointer of the value it
// came from, never a secret.

// Kinds of host hit: how the host was written.
const (
	HostKindURL      = "url"      // scheme://host, scheme-relative //host, backslash-mangled URLs
	HostKindHostname = "hostname" // a bare hostname with a real public suffix
	HostKindEmail    = "email"    // the domain of an email address
	HostKindIP       = "ip"       // an IPv4 (any notation) or IPv6 literal
	HostKindSplit    = "split"    // assembled from sibling fields (scheme/host/domain/port)
	HostKindGit      = "git"      // git@host:path, ssh://
	HostKindCommand  = "command"  // the target of a network command in a shell string
)

// EmailHit is an email address; its domain is also reported as a host hit.
type EmailHit struct {
	Address     string `json:"address"` // lower-cased domain part
	Domain      string `json:"domain"`
	Path        string `json:"path"`
	Field       string `json:"field,omitempty"`
	Destination bool   `json:"destination"`
	Decoded     string `json:"decoded,omitempty"`
}

// SecretHit is a secret found in a value. It never holds the secret.
type SecretHit struct {
	Kind     string `json:"kind"`     // aws_access_key, github_token, private_key, jwt, high_entropy, ...
	Path     string `json:"path"`     // JSON pointer of the value
	Redacted string `json:"redacted"` // e.g. "AKIA…XYZ" — enough to recognise, never enough to use
	Decoded  string `json:"decoded,omitempty"`
}

// PathHit is a filesystem path named by an argument.
type PathHit struct {
	Path      string   `json:"path"`                // normalized: ~ expanded, cleaned, file:// removed
	Raw       string   `json:"raw"`                 // as written
	Arg       string   `json:"arg"`                 // JSON pointer of the argument
	Protected []string `json:"protected,omitempty"` // the protected-path globs it matches
	Decoded   string   `json:"decoded,omitempty"`
}

// InjectionHit is a prompt-injection marker in text the model will read.
type InjectionHit struct {
	Kind    string `json:"kind"` // fake_system_message, ignore_instructions, hidden_text, ansi_escape, ...
	Path    string `json:"path"`
	Decoded string `json:"decoded,omitempty"`
}

// Result is every hit of one scan.
type Result struct {
	Hosts     []HostHit      `json:"hosts"`
	Emails    []EmailHit     `json:"emails"`
	Secrets   []SecretHit    `json:"secrets"`
	Paths     []PathHit      `json:"paths"`
	Injection []InjectionHit `json:"injection"`
}

// Options tune a scan. The zero value is usable.
type Options struct {
	// Formats maps the JSON pointer of an argument (e.g. "/url",
	// "/options/endpoint") to the "format" its tool's input schema gives
	// it ("uri", "email", "hostname", ...): such a value is a destination.
	Formats map[string]string
	// ProtectedPaths are globs (doublestar syntax; "~/" allowed) that
	// PathHit.Protected is matched against.
	ProtectedPaths []string
	// Home expands "~" in paths and globs; no expansion when empty.
	Home string
	// MaxDecodeDepth bounds nested decoding (base64 inside percent inside
	// ...); 0 means DefaultMaxDecodeDepth.
	MaxDecodeDepth int
	// MaxDecodedBytes bounds the total bytes decoded per scan; 0 means
	// DefaultMaxDecodedBytes.
	MaxDecodedBytes int
}

// Defaults for Options.
const (
	DefaultMaxDecodeDepth  = 3
	DefaultMaxDecodedBytes = 1 << 20
)
