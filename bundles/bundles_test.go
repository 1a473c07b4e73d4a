package bundles

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	defaultpolicy "github.com/airlock-dev/airlock/rego"
)

const minimalPolicy = `package airlock

decision := {"allow": true, "violations": [], "waived": [], "expired_waivers": [], "taint": false, "taints": [], "mode": "enforce"}
`

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	bundleDir := filepath.Join(dir, "policy")
	writeFile(t, filepath.Join(bundleDir, ".manifest"), `{"revision": "mine-7"}`)
	writeFile(t, filepath.Join(bundleDir, "airlock", "decision.rego"), minimalPolicy)
	writeFile(t, filepath.Join(bundleDir, "airlock", "decision_test.rego"), "package airlock_test\n\ntest_x if true\n")
	writeFile(t, filepath.Join(bundleDir, "data.json"), `{"allow_hosts": ["a.example"]}`)

	tarball := filepath.Join(dir, "policy.tar.gz")
	b, err := bundle.NewCustomReader(bundle.NewDirectoryLoader(bundleDir)).Read()
	require.NoError(t, err)
	f, err := os.Create(tarball)
	require.NoError(t, err)
	require.NoError(t, bundle.NewWriter(f).Write(b))
	require.NoError(t, f.Close())

	data := writeFile(t, filepath.Join(dir, "gate.json"), `{"allow_hosts": ["github.com"], "servers": {"web": {"untrusted": ["*"]}}}`)

	tests := []struct {
		name, source, data, revision string
		hosts                        any
	}{
		{"embedded default", "", "", defaultpolicy.Revision, nil},
		{"embedded default with data", "", data, defaultpolicy.Revision + "+data", []any{"github.com"}},
		{"directory", bundleDir, "", "mine-7", []any{"a.example"}},
		{"directory, data file wins", bundleDir, data, "mine-7+data", []any{"github.com"}},
		{"tarball", tarball, "", "mine-7", []any{"a.example"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(context.Background(), tc.source, tc.data)
			require.NoError(t, err)
			assert.Equal(t, tc.revision, b.Manifest.Revision)
			assert.Equal(t, tc.hosts, b.Data["allow_hosts"])
			require.NotEmpty(t, b.Modules)
			for _, m := range b.Modules {
				assert.False(t, defaultpolicy.IsTest(m.Path), "test module %s must not be activated", m.Path)
			}
		})
	}
}

func TestLoadFailures(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.MkdirAll(empty, 0o700))
	broken := filepath.Join(dir, "broken")
	writeFile(t, filepath.Join(broken, "x.rego"), "package airlock\n\ndecision := {")
	notTar := writeFile(t, filepath.Join(dir, "x.tar.gz"), "not gzip")

	tests := []struct {
		name, source, data, want string
	}{
		{"missing directory", filepath.Join(dir, "nope"), "", "no such file"},
		{"no modules", empty, "", "no Rego modules"},
		{"rego syntax error", broken, "", "x.rego"},
		{"not a tarball", notTar, "", "read policy"},
		{"missing data file", "", filepath.Join(dir, "nope.json"), "no such file"},
		{"data not JSON", "", writeFile(t, filepath.Join(dir, "bad.json"), `{"allow_hosts": [`), "not a JSON object"},
		{"data is a list", "", writeFile(t, filepath.Join(dir, "list.json"), `[]`), "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(context.Background(), tc.source, tc.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestValidateData(t *testing.T) {
	waiver := func(extra string) string {
		return `{"waivers": [{"id": "W-1", "rule": "egress.host_not_allowed", "expires": "2027-01-31", "reason": "r", "approved_by": "a"` + extra + `}]}`
	}
	tests := []struct {
		name, data, want string // want "" means valid
	}{
		{"mcp-gate file", `{"allow_hosts": ["github.com"], "servers": {"web": {"untrusted": ["*"]}, "slack": {"untrusted": ["read_channel"], "outbound": ["post_message"]}}}`, ""},
		{"empty", `{}`, ""},
		{"empty allow-list", `{"allow_hosts": []}`, ""},
		{"waiver", waiver(`, "server": "web", "tool": "fetch", "match": {"url": "https://x/*"}`), ""},
		{"waiver with timestamp", `{"waivers": [{"id": "W", "rule": "r", "expires": "2027-01-31T10:00:00Z", "reason": "r"}]}`, ""},
		{"modes", `{"mode": "audit", "rule_modes": {"egress.host_not_allowed": "enforce"}}`, ""},
		{"quarantine switches", `{"untrusted_open_world": true, "taint_on_injection": false, "servers": {"mail": {"untrusted_resources": ["file:///srv/inbox/**"]}}}`, ""},
		{"switch not a bool", `{"untrusted_open_world": "yes"}`, "untrusted_open_world must be true or false"},
		{"untrusted_resources not a list", `{"servers": {"mail": {"untrusted_resources": "file:///x"}}}`, "untrusted_resources must be a list"},
		{"allow_hosts a string", `{"allow_hosts": "github.com"}`, "allow_hosts must be a list"},
		{"allow_hosts with a number", `{"allow_hosts": ["a", 1]}`, "allow_hosts[1]"},
		{"allow_hosts in unicode", `{"allow_hosts": ["bücher.example"]}`, `write "xn--bcher-kva.example"`},
		{"wildcard in unicode", `{"allow_hosts": ["*.bücher.example"]}`, `write "*.xn--bcher-kva.example"`},
		{"allow_hosts in punycode", `{"allow_hosts": ["xn--bcher-kva.example", "*.example.org"]}`, ""},
		{"protected paths", `{"protected_paths": ["~/.aws/**"], "servers": {"fs": {"protected_paths": ["/srv/secrets/**"]}}}`, ""},
		{"protected paths not strings", `{"protected_paths": [1]}`, "protected_paths[0]"},
		{"relative protected glob", `{"protected_paths": [".env*"]}`, `protected_paths[0] ".env*"`},
		{"bad server glob", `{"servers": {"fs": {"protected_paths": ["/srv/[a-"]}}}`, "servers.fs.protected_paths[0]"},
		{"servers a list", `{"servers": []}`, "servers must be an object"},
		{"misspelt list type", `{"servers": {"web": {"untrusted": "fetch"}}}`, "servers.web.untrusted must be a list"},
		{"server not an object", `{"servers": {"web": true}}`, "servers.web must be an object"},
		{"bad mode", `{"mode": "off"}`, `mode must be "enforce" or "audit"`},
		{"bad rule mode", `{"rule_modes": {"x": "warn"}}`, "rule_modes.x"},
		{"waiver without expiry", `{"waivers": [{"id": "W", "rule": "r", "reason": "r"}]}`, `needs "expires"`},
		{"waiver without reason", `{"waivers": [{"id": "W", "rule": "r", "expires": "2027-01-01"}]}`, `needs "reason"`},
		{"waiver with a bad date", `{"waivers": [{"id": "W", "rule": "r", "expires": "2027-02-30", "reason": "r"}]}`, "neither YYYY-MM-DD"},
		{"duplicate waiver ids", `{"waivers": [{"id": "W", "rule": "r", "expires": "2027-01-01", "reason": "r"}, {"id": "W", "rule": "r", "expires": "2027-01-01", "reason": "r"}]}`, "duplicate waiver id"},
		{"waiver match not strings", waiver(`, "match": {"url": 1}`), "match.url must be a string"},
		{"waivers not a list", `{"waivers": {}}`, "waivers must be a list"},
		{"reserved key", `{"airlock": {}}`, "reserved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "d.json"), tc.data)
			data, err := ReadDataFile(path)
			require.NoError(t, err)
			err = ValidateData(data)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestUnlistedServer(t *testing.T) {
	tests := []struct {
		name   string
		data   map[string]any
		server string
		warn   bool
	}{
		{"no servers at all", map[string]any{}, "web", false},
		{"listed", map[string]any{"servers": map[string]any{"web": map[string]any{}}}, "web", false},
		{"not listed", map[string]any{"servers": map[string]any{"slack": map[string]any{}}}, "web", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := UnlistedServer(tc.data, tc.server)
			assert.Equal(t, tc.warn, err != nil, "%v", err)
		})
	}
}

func TestProtectedPaths(t *testing.T) {
	data := map[string]any{
		"protected_paths": []any{"~/.aws/**", "**/.env*"},
		"servers": map[string]any{
			"fs":  map[string]any{"protected_paths": []any{"/srv/secrets/**"}},
			"web": map[string]any{},
		},
	}
	assert.Equal(t, []string{"~/.aws/**", "**/.env*", "/srv/secrets/**"}, ProtectedPaths(data, "fs"))
	assert.Equal(t, []string{"~/.aws/**", "**/.env*"}, ProtectedPaths(data, "web"))
	assert.Equal(t, []string{"~/.aws/**", "**/.env*"}, ProtectedPaths(data, "unknown"))
	assert.Nil(t, ProtectedPaths(map[string]any{}, "fs"))
}
