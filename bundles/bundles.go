// Package bundles loads airlock's policy: the embedded default bundle, a
// bundle directory or a bundle tarball, with an optional data file (such as
// an mcp-gate policy file) laid over the bundle's data. Everything it loads
// is checked here, so a policy that cannot work is refused at load time
// rather than discovered frame by frame.
package bundles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"golang.org/x/net/idna"

	"github.com/airlock-dev/airlock/detectors"
	defaultpolicy "github.com/airlock-dev/airlock/rego"
)

// DefaultRevision names the embedded bundle when its manifest has none.
const DefaultRevision = "airlock-default"

// Load reads the policy bundle at source ("" for the embedded default, a
// directory, or a .tar.gz file) and lays the JSON object in dataFile (if
// not "") over the bundle's data at its root.
func Load(_ context.Context, source, dataFile string) (*bundle.Bundle, error) {
	b, err := read(source)
	if err != nil {
		return nil, err
	}
	dropTests(b)
	if b.Data == nil {
		b.Data = map[string]any{}
	}
	if dataFile != "" {
		data, err := ReadDataFile(dataFile)
		if err != nil {
			return nil, err
		}
		for k, v := range data {
			b.Data[k] = v
		}
		if b.Manifest.Revision != "" {
			// The data is part of what decided; say so in the revision.
			b.Manifest.Revision += "+data"
		}
	}
	if err := ValidateData(b.Data); err != nil {
		return nil, fmt.Errorf("policy data: %w", err)
	}
	if len(b.Modules) == 0 {
		return nil, fmt.Errorf("policy %s has no Rego modules", describe(source))
	}
	return b, nil
}

func read(source string) (*bundle.Bundle, error) {
	var r *bundle.Reader
	switch {
	case source == "":
		loader, err := bundle.NewFSLoader(defaultpolicy.Bundle)
		if err != nil {
			return nil, fmt.Errorf("embedded policy: %w", err)
		}
		r = bundle.NewCustomReader(loader)
	default:
		info, err := os.Stat(source)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		if info.IsDir() {
			r = bundle.NewCustomReader(bundle.NewDirectoryLoader(source))
		} else {
			f, err := os.Open(source)
			if err != nil {
				return nil, fmt.Errorf("policy: %w", err)
			}
			defer f.Close()
			r = bundle.NewReader(f)
		}
	}
	b, err := r.WithRegoVersion(ast.RegoV1).Read()
	if err != nil {
		return nil, fmt.Errorf("read policy %s: %w", describe(source), err)
	}
	if source == "" && b.Manifest.Revision == "" {
		b.Manifest.Revision = DefaultRevision
	}
	return &b, nil
}

func describe(source string) string {
	if source == "" {
		return "(embedded default)"
	}
	return source
}

// dropTests removes *_test.rego modules: they belong to `opa test`, and
// compiling them into the decision path costs time for nothing.
func dropTests(b *bundle.Bundle) {
	kept := b.Modules[:0]
	for _, m := range b.Modules {
		if !defaultpolicy.IsTest(m.Path) {
			kept = append(kept, m)
		}
	}
	b.Modules = kept
}

// ReadDataFile reads a policy data file: one JSON object.
func ReadDataFile(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy data: %w", err)
	}
	var data map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		return nil, fmt.Errorf("policy data %s: not a JSON object: %w", path, err)
	}
	if data == nil {
		return nil, fmt.Errorf("policy data %s: not a JSON object", path)
	}
	return data, nil
}

// ValidateData checks the keys the default policy reads. A mistake here
// (a misspelt list, a waiver without an expiry) would otherwise silently
// weaken or break every decision, so it is refused with the reason.
func ValidateData(data map[string]any) error {
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, reserved := range []string{"airlock", "system"} {
		if _, ok := data[reserved]; ok {
			check(fmt.Errorf("%q is reserved for the policy's own packages", reserved))
		}
	}
	if v, ok := data["allow_hosts"]; ok {
		check(stringList("allow_hosts", v))
		check(asciiHosts(v))
	}
	if v, ok := data["protected_paths"]; ok {
		check(stringList("protected_paths", v))
		check(globList("protected_paths", v))
	}
	if v, ok := data["servers"]; ok {
		servers, isObj := v.(map[string]any)
		if !isObj {
			check(errors.New("servers must be an object of server names"))
		}
		for name, s := range servers {
			entry, isObj := s.(map[string]any)
			if !isObj {
				check(fmt.Errorf("servers.%s must be an object", name))
				continue
			}
			for _, key := range []string{"untrusted", "outbound", "untrusted_resources", "protected_paths"} {
				if list, ok := entry[key]; ok {
					check(stringList("servers."+name+"."+key, list))
				}
			}
			if list, ok := entry["protected_paths"]; ok {
				check(globList("servers."+name+".protected_paths", list))
			}
		}
	}
	for _, key := range []string{"untrusted_open_world", "taint_on_injection"} {
		if v, ok := data[key]; ok {
			if _, isBool := v.(bool); !isBool {
				check(fmt.Errorf("%s must be true or false", key))
			}
		}
	}
	if v, ok := data["mode"]; ok {
		check(mode("mode", v))
	}
	if v, ok := data["rule_modes"]; ok {
		modes, isObj := v.(map[string]any)
		if !isObj {
			check(errors.New("rule_modes must be an object of rule IDs"))
		}
		for rule, m := range modes {
			check(mode("rule_modes."+rule, m))
		}
	}
	if v, ok := data["waivers"]; ok {
		check(validateWaivers(v))
	}
	return errors.Join(errs...)
}

func validateWaivers(v any) error {
	list, ok := v.([]any)
	if !ok {
		return errors.New("waivers must be a list")
	}
	var errs []error
	ids := map[string]bool{}
	for i, w := range list {
		obj, ok := w.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("waivers[%d] must be an object", i))
			continue
		}
		where := fmt.Sprintf("waivers[%d]", i)
		for _, key := range []string{"id", "rule", "expires", "reason"} {
			if s, _ := obj[key].(string); s == "" {
				errs = append(errs, fmt.Errorf("%s needs %q (a waiver says which rule it waives, why, and until when)", where, key))
			}
		}
		if id, _ := obj["id"].(string); id != "" {
			if ids[id] {
				errs = append(errs, fmt.Errorf("%s: duplicate waiver id %q", where, id))
			}
			ids[id] = true
		}
		if exp, _ := obj["expires"].(string); exp != "" && !validExpiry(exp) {
			errs = append(errs, fmt.Errorf("%s: expires %q is neither YYYY-MM-DD nor an RFC 3339 time", where, exp))
		}
		for _, key := range []string{"server", "tool", "approved_by"} {
			if s, ok := obj[key]; ok {
				if _, isStr := s.(string); !isStr {
					errs = append(errs, fmt.Errorf("%s.%s must be a string", where, key))
				}
			}
		}
		if m, ok := obj["match"]; ok {
			patterns, isObj := m.(map[string]any)
			if !isObj {
				errs = append(errs, fmt.Errorf("%s.match must be an object of argument paths to patterns", where))
			}
			for path, pat := range patterns {
				if _, isStr := pat.(string); !isStr {
					errs = append(errs, fmt.Errorf("%s.match.%s must be a string pattern", where, path))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func stringList(name string, v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s must be a list of strings", name)
	}
	for i, item := range list {
		if s, ok := item.(string); !ok || s == "" {
			return fmt.Errorf("%s[%d] must be a non-empty string", name, i)
		}
	}
	return nil
}

// globList refuses protected-path globs that could never match: a
// protection that silently protects nothing is worse than an error.
func globList(name string, v any) error {
	list, _ := v.([]any)
	var errs []error
	for i, item := range list {
		if g, ok := item.(string); ok {
			if err := detectors.ValidateProtectedPath(g); err != nil {
				errs = append(errs, fmt.Errorf("%s[%d] %q: %w", name, i, g, err))
			}
		}
	}
	return errors.Join(errs...)
}

func mode(name string, v any) error {
	if s, _ := v.(string); s != "enforce" && s != "audit" {
		return fmt.Errorf(`%s must be "enforce" or "audit"`, name)
	}
	return nil
}

func validExpiry(s string) bool {
	if _, err := time.Parse(time.DateOnly, s); err == nil {
		return true
	}
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// UnlistedServer reports a server that data.servers does not name, when it
// names others: every tool of that server is then neither untrusted nor
// outbound, which is rarely what the person who wrote the file meant.
func UnlistedServer(data map[string]any, server string) error {
	servers, ok := data["servers"].(map[string]any)
	if !ok || len(servers) == 0 {
		return nil
	}
	if _, ok := servers[server]; ok {
		return nil
	}
	return fmt.Errorf("server %q is not in the policy's servers; none of its tools is untrusted or outbound", server)
}

// asciiHosts refuses allow-list entries in Unicode: host hits reach the
// policy in their ASCII (punycode) form, so a Unicode entry would never
// match. The error gives the entry to write instead.
func asciiHosts(v any) error {
	list, _ := v.([]any)
	var errs []error
	for i, item := range list {
		entry, _ := item.(string)
		if isASCII(entry) {
			continue
		}
		hint := ""
		if ascii, err := idna.Lookup.ToASCII(strings.TrimPrefix(entry, "*.")); err == nil {
			if strings.HasPrefix(entry, "*.") {
				ascii = "*." + ascii
			}
			hint = fmt.Sprintf("; write %q", ascii)
		}
		errs = append(errs, fmt.Errorf("allow_hosts[%d] %q is not ASCII: entries are compared with the punycode form of hosts%s", i, entry, hint))
	}
	return errors.Join(errs...)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// ProtectedPaths returns the protected-path globs that apply to server: the
// top-level protected_paths and the server's own. The path detector matches
// them; the policy's paths.protected rule decides.
func ProtectedPaths(data map[string]any, server string) []string {
	var globs []string
	add := func(v any) {
		list, _ := v.([]any)
		for _, item := range list {
			if g, ok := item.(string); ok && g != "" {
				globs = append(globs, g)
			}
		}
	}
	add(data["protected_paths"])
	if servers, ok := data["servers"].(map[string]any); ok {
		if entry, ok := servers[server].(map[string]any); ok {
			add(entry["protected_paths"])
		}
	}
	return globs
}
