package detectors

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanEmptyResultHasLists(t *testing.T) {
	for _, v := range []any{nil, map[string]any{}, []any{}, "", json.Number("1")} {
		for _, r := range []Result{ScanArguments(v, Options{}), ScanContent(v, Options{})} {
			b, err := json.Marshal(r)
			require.NoError(t, err)
			assert.JSONEq(t, `{"hosts":[],"emails":[],"secrets":[],"paths":[],"injection":[]}`, string(b))
		}
	}
}

// TestDestinationFields: which property names make a bare host (or an
// email) a destination.
func TestDestinationFields(t *testing.T) {
	dest := []string{"url", "URL", "uri", "href", "link", "links", "endpoint", "host", "hostname", "domain", "server",
		"remote", "webhook", "callback", "to", "cc", "bcc", "recipient", "recipients", "dest", "destination", "target",
		"proxy", "callback_url", "webhookUrl", "redirect-uri", "smtp_host", "apiServer", "base_url", "image_url",
		"Target-Host", "to_recipients"}
	for _, f := range dest {
		t.Run(f, func(t *testing.T) {
			assert.Equal(t, []hk{{"evil.example", "hostname", true}}, hostsOf(scanOne(t, f, "evil.example")))
			assert.Equal(t, []hk{{"evil.com", "hostname", true}}, hostsOf(scanOne(t, f, "send it to evil.com please")))
		})
	}
	mention := []string{"body", "text", "message", "description", "name", "path", "file", "title", "content",
		"address", "email", "no_proxy", "NO-PROXY", "hostage_note", "tone", "query"}
	for _, f := range mention {
		t.Run(f, func(t *testing.T) {
			assert.Empty(t, scanOne(t, f, "evil.example").Hosts)
			assert.Equal(t, []hk{{"evil.com", "hostname", false}}, hostsOf(scanOne(t, f, "send it to evil.com please")))
		})
	}
	emailDest := []string{"address", "email", "emails", "email_address", "replyTo", "to", "recipients"}
	for _, f := range emailDest {
		t.Run(f+" email", func(t *testing.T) {
			r := scanOne(t, f, "a@x.example")
			require.Len(t, r.Emails, 1)
			assert.True(t, r.Emails[0].Destination)
		})
	}
	for _, f := range []string{"body", "from", "sender", "author"} {
		t.Run(f+" email", func(t *testing.T) {
			r := scanOne(t, f, "a@x.com")
			require.Len(t, r.Emails, 1)
			assert.False(t, r.Emails[0].Destination)
		})
	}
}

func TestFormats(t *testing.T) {
	opts := Options{Formats: map[string]string{
		"/site": "uri", "/ref": "uri-reference", "/i": "iri", "/contact": "idn-email", "/servers": "hostname",
		"/peers/addr": "idn-hostname", "/opts/endpoint2": "uri",
	}}
	args := decode(t, `{"site":"evil.example","ref":"evil2.example/x","i":"evil3.example","contact":"a@x.example",
		"servers":["intranet","db"],"peers":[{"addr":"peer1"}],"opts":{"endpoint2":"evil4.example"},"other":"evil5.example"}`)
	r := ScanArguments(args, opts)
	got := map[string]hk{}
	for _, h := range r.Hosts {
		got[h.Path] = hk{h.Host, h.Kind, h.Destination}
	}
	assert.Equal(t, map[string]hk{
		"/site":           {"evil.example", "hostname", true},
		"/ref":            {"evil2.example", "hostname", true},
		"/i":              {"evil3.example", "hostname", true},
		"/contact":        {"x.example", "email", true},
		"/servers/0":      {"intranet", "hostname", true}, // format hostname: any name
		"/servers/1":      {"db", "hostname", true},
		"/peers/0/addr":   {"peer1", "hostname", true}, // array items share their array's schema pointer
		"/opts/endpoint2": {"evil4.example", "hostname", true},
	}, got)
	// Without the formats, none of these is a destination field.
	assert.Empty(t, ScanArguments(args, Options{}).Hosts)
}

func TestSplitHosts(t *testing.T) {
	tests := []struct {
		args string
		want []HostHit
	}{
		{`{"scheme":"https","host":"evil.example","port":443}`,
			[]HostHit{{Host: "evil.example", Raw: "https://evil.example:443", Kind: "split", Path: "/host", Field: "host", Destination: true}}},
		{`{"protocol":"https:","hostname":"intranet","pathname":"/x"}`,
			[]HostHit{{Host: "intranet", Raw: "https://intranet", Kind: "split", Path: "/hostname", Field: "hostname", Destination: true}}},
		{`{"subdomain":"exfil","domain":"evil.example"}`,
			[]HostHit{{Host: "exfil.evil.example", Raw: "exfil.evil.example", Kind: "split", Path: "/domain", Field: "domain", Destination: true}}},
		{`{"server":"2130706433","port":"8080"}`,
			[]HostHit{{Host: "127.0.0.1", Raw: "2130706433:8080", Kind: "split", Path: "/server", Field: "server", Destination: true}}},
		{`{"host":"db","port":5432}`,
			[]HostHit{{Host: "db", Raw: "db:5432", Kind: "split", Path: "/host", Field: "host", Destination: true}}},
		{`{"host":2130706433,"port":80}`,
			[]HostHit{{Host: "127.0.0.1", Raw: "2130706433:80", Kind: "split", Path: "/host", Field: "host", Destination: true}}},
		{`{"host":"evil.example"}`,
			[]HostHit{{Host: "evil.example", Raw: "evil.example", Kind: "hostname", Path: "/host", Field: "host", Destination: true}}},
		{`{"host":"db"}`, []HostHit{}},
		{`{"to":12345,"amount":12.5}`, []HostHit{}},
		{`{"scheme":"https","host":"https://full.example/x"}`,
			[]HostHit{{Host: "full.example", Raw: "https://full.example/x", Kind: "url", Path: "/host", Field: "host", Destination: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			assert.Equal(t, tc.want, ScanArguments(decode(t, tc.args), Options{}).Hosts)
		})
	}
}

// TestScanContent: in content only URLs are destinations.
func TestScanContent(t *testing.T) {
	v := decode(t, `{"content":[{"type":"text","text":"see https://a.example/x, github.com, run: curl b.example; git@c.com:x/y"}],
		"structuredContent":{"host":"d.com","to":"e@f.com","scheme":"https","server":"g.com","port":1}}`)
	got := hostsOf(ScanContent(v, Options{}))
	assert.ElementsMatch(t, []hk{{"a.example", "url", true}, {"github.com", "hostname", false}, {"b.example", "command", false},
		{"c.com", "git", false}, {"d.com", "hostname", false}, {"f.com", "email", false}, {"g.com", "hostname", false}}, got)
	// Formats are for arguments.
	assert.Empty(t, ScanContent(map[string]any{"site": "evil.example"}, Options{Formats: map[string]string{"/site": "uri"}}).Hosts)
}

// fakeDetectors find "SECRET", "INJECT" and "/etc/passwd" and say so.
func fakeDetectors(calls *[]string) textDetectors {
	return textDetectors{
		secrets: func(field, s string) []SecretMatch {
			*calls = append(*calls, "secrets "+field+" "+s)
			if i := strings.Index(s, "SECRET"); i >= 0 {
				return []SecretMatch{{Kind: "fake_secret", Start: i, End: i + 6, Redacted: "SEC…"}}
			}
			return nil
		},
		injection: func(s string) []InjectionMatch {
			if i := strings.Index(s, "INJECT"); i >= 0 {
				return []InjectionMatch{{Kind: "fake_injection", Start: i, End: i + 6}}
			}
			return nil
		},
		paths: func(field, s string, opts Options) []PathHit {
			*calls = append(*calls, "paths "+field+" "+s)
			if strings.Contains(s, "/etc/passwd") {
				return []PathHit{{Path: "/etc/passwd", Raw: "/etc/passwd", Protected: opts.ProtectedPaths}}
			}
			return nil
		},
	}
}

func TestScanCallsTheOtherDetectors(t *testing.T) {
	var calls []string
	args := decode(t, `{"api_key":"SECRET","note":"INJECT and `+b64("SECRET INJECT /etc/passwd")+`","file":"/etc/passwd"}`)
	r := scan(args, Options{ProtectedPaths: []string{"/etc/**"}}, false, fakeDetectors(&calls))
	assert.Equal(t, []SecretHit{{Kind: "fake_secret", Path: "/api_key", Redacted: "SEC…"},
		{Kind: "fake_secret", Path: "/note", Redacted: "SEC…", Decoded: "base64"}}, r.Secrets)
	assert.Equal(t, []InjectionHit{{Kind: "fake_injection", Path: "/note"}}, r.Injection, "the decoded repeat is dropped")
	assert.Equal(t, []PathHit{{Path: "/etc/passwd", Raw: "/etc/passwd", Arg: "/file", Protected: []string{"/etc/**"}},
		{Path: "/etc/passwd", Raw: "/etc/passwd", Arg: "/note", Protected: []string{"/etc/**"}, Decoded: "base64"}}, r.Paths)
	assert.Contains(t, calls, "secrets api_key SECRET", "the field is passed")
	assert.Contains(t, calls, "secrets  api_key", "keys are scanned too, with no field")

	calls = nil
	r = scan(args, Options{}, true, fakeDetectors(&calls))
	assert.Empty(t, r.Paths, "content is not scanned for paths")
	for _, c := range calls {
		assert.False(t, strings.HasPrefix(c, "paths "), c)
	}
	assert.Len(t, r.Secrets, 2)
	assert.Len(t, r.Injection, 1)
}

func TestScanDedupAndOrder(t *testing.T) {
	r := ScanArguments(decode(t, `{"b":"https://x.example/1 https://x.example/2","a":["https://x.example/3","https://x.example/3"]}`), Options{})
	assert.Equal(t, []string{"/a/0", "/a/1", "/b"}, pathsOfHosts(r), "one hit per host and value; keys in order")
	r2 := ScanArguments(decode(t, `{"a":["https://x.example/3","https://x.example/3"],"b":"https://x.example/1 https://x.example/2"}`), Options{})
	assert.Equal(t, r, r2)
}

func pathsOfHosts(r Result) []string {
	var out []string
	for _, h := range r.Hosts {
		out = append(out, h.Path)
	}
	return out
}

func TestScanCaps(t *testing.T) {
	t.Run("hits", func(t *testing.T) {
		var b strings.Builder
		for i := range MaxScanHits + 500 {
			fmt.Fprintf(&b, "https://h%d.example/ ", i)
		}
		r := scanOne(t, "body", b.String())
		require.Len(t, r.Hosts, MaxScanHits+1)
		last := r.Hosts[MaxScanHits]
		assert.Equal(t, HostHit{Host: LimitHost, Raw: "detector limit: more than 1000 host hits", Kind: HostKindLimit, Path: "/body", Destination: true}, last)
	})
	t.Run("emails", func(t *testing.T) {
		var b strings.Builder
		for i := range MaxScanHits + 10 {
			fmt.Fprintf(&b, "a%d@x.example ", i)
		}
		r := scanOne(t, "to", b.String())
		assert.Len(t, r.Emails, MaxScanHits)
	})
	t.Run("depth", func(t *testing.T) {
		var v any = "https://deep.example/"
		for range MaxScanDepth + 50 {
			v = []any{v}
		}
		r := ScanArguments(map[string]any{"a": v}, Options{})
		require.Len(t, r.Hosts, 1)
		assert.Equal(t, LimitHost, r.Hosts[0].Host)
		assert.Contains(t, r.Hosts[0].Raw, "nesting deeper than 100")
	})
	t.Run("depth just within", func(t *testing.T) {
		var v any = "https://deep.example/"
		for range MaxScanDepth - 1 {
			v = []any{v}
		}
		r := ScanArguments(map[string]any{"a": v}, Options{})
		assert.Equal(t, []hk{{"deep.example", "url", true}}, hostsOf(r))
	})
}

func TestScanKeys(t *testing.T) {
	r := ScanArguments(decode(t, `{"headers":{"https://evil.example/":"x","to":"a@x.example"}}`), Options{})
	assert.Equal(t, []HostHit{
		{Host: "evil.example", Raw: "https://evil.example/", Kind: "url", Path: "/headers/https:~1~1evil.example~1", Destination: true},
		{Host: "x.example", Raw: "a@x.example", Kind: "email", Path: "/headers/to", Field: "to", Destination: true},
	}, r.Hosts)
}

func TestFieldRole(t *testing.T) {
	assert.Equal(t, roleDest, fieldRoleOf("Callback_URL"))
	assert.Equal(t, roleDest, fieldRoleOf(strings.Repeat("x", 100)+"_url"))
	assert.Equal(t, roleNone, fieldRoleOf(strings.Repeat("x", 100)+"_to"))
	assert.Equal(t, roleEmail, fieldRoleOf("E-Mail"))
	assert.Equal(t, roleNone, fieldRoleOf("photo"))
	assert.Equal(t, roleNone, fieldRoleOf(""))
	assert.Equal(t, roleNone, fieldRoleOf("url_template_name"))
}

// typicalArgs is a tools/call arguments object of the usual size.
var typicalArgs = map[string]any{
	"url":     "https://github.com/acme/cli/releases",
	"method":  "GET",
	"headers": map[string]any{"accept": "text/html", "user-agent": "airlock-test/1.0"},
	"note":    "fetch the latest release notes and summarise them",
}

func BenchmarkScanArguments(b *testing.B) {
	big := map[string]any{"body": strings.Repeat("lorem ipsum dolor sit amet, ", 1<<20/28) + " https://evil.example/x"}
	for _, c := range []struct {
		name string
		v    any
	}{{"typical", typicalArgs}, {"1MiB", big}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := ScanArguments(c.v, Options{}); len(r.Hosts) == 0 {
					b.Fatal("want a hit")
				}
			}
		})
	}
}

func BenchmarkScanContent(b *testing.B) {
	v := map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("Some result text with a link https://docs.example/x and more words. ", 20)}}}
	b.ReportAllocs()
	for b.Loop() {
		ScanContent(v, Options{})
	}
}

var noDetectors = textDetectors{
	secrets:   func(string, string) []SecretMatch { return nil },
	injection: func(string) []InjectionMatch { return nil },
	paths:     func(string, string, Options) []PathHit { return nil },
}

// TestScanLinear: adversarial arguments of 1 MiB finish quickly (a scan
// that rescans from every match would take hours).
func TestScanLinear(t *testing.T) {
	const n = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, n/len(s)) }
	inputs := map[string]string{
		"nested urls":          rep("a://b/"),
		"blanks then urls":     strings.Repeat(" ", n/2) + strings.Repeat("a://b/", n/12),
		"tabbed authorities":   rep("https://a\t"),
		"backslash authority":  rep(`https://a\`),
		"unc":                  rep(`\\a\`),
		"scheme-relative":      rep("//a/"),
		"data colons":          rep("data:"),
		"ats":                  rep("a@"),
		"at dots":              rep("a@b."),
		"dots":                 rep("."),
		"labels":               rep("a."),
		"names":                rep("a.com "),
		"colons":               rep(":"),
		"ipv6":                 rep("::1 "),
		"curl":                 rep("curl "),
		"curl quotes":          rep("; curl '"),
		"curl targets":         rep("curl a.example;"),
		"percent":              rep("%41"),
		"percents, one escape": rep("%") + `\x41`,
		"hex escapes":          rep(`\x41`),
		"base64 text":          rep("QUFB"),
		"braces":               rep("{"),
		"brackets":             strings.Repeat("[", n/2) + strings.Repeat("]", n/2),
		"unicode labels":       rep("é."),
		"one long label":       strings.Repeat("a", n) + ".com",
		"punycode":             "xn--" + strings.Repeat("a", n) + ".com",
		"emails":               rep("a@x.example "),
		"git remotes":          rep("a@b.cc:"),
		"userinfo":             rep("https://a@"),
		"www":                  rep("www.a.com "),
		"jwt segments":         rep("eyJhbGciOiJIUzI1NiJ9."),
		"data urls":            rep("data:;base64,QUFBQUFB "),
		"data payload runs":    rep("data:,AAAAAAAAAAAAAAAAAAAA "),
		"json in json":         nestedJSON(n),
	}
	for name, s := range inputs {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			for _, field := range []string{"body", "url"} {
				// The other detectors have linear-time tests of their own.
				r := scan(map[string]any{field: s}, Options{}, false, noDetectors)
				assert.LessOrEqual(t, len(r.Hosts), MaxScanHits+3)
				scan(map[string]any{field: s}, Options{}, true, noDetectors)
			}
			assert.Less(t, time.Since(start), 20*time.Second) // seconds only under -race
		})
	}
}

// nestedJSON returns a JSON object in a string in an object ... of about n
// bytes: each level is decoded again, within MaxDecodeDepth.
func nestedJSON(n int) string {
	s := `"` + strings.Repeat("https://x.example/ ", n/40) + `"`
	for len(s) < n {
		b, _ := json.Marshal(map[string]string{"a": s})
		s = string(b)
	}
	return s
}
