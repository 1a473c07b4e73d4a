package detectors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

func TestURLHosts(t *testing.T) {
	tests := []struct {
		name string
		args string
		want []HostHit
	}{
		{"plain url", `{"url":"https://example.org/page"}`,
			[]HostHit{{Host: "example.org", Raw: "https://example.org/page", Kind: "url", Path: "/url"}}},
		{"upper case, trailing dot, port", `{"u":"HTTPS://EXAMPLE.org.:8443/x"}`,
			[]HostHit{{Host: "example.org", Raw: "HTTPS://EXAMPLE.org.:8443/x", Kind: "url", Path: "/u"}}},
		{"userinfo is not the host", `{"u":"https://github.com@evil.example/x"}`,
			[]HostHit{{Host: "evil.example", Raw: "https://github.com@evil.example/x", Kind: "url", Path: "/u"}}},
		{"inside prose and markdown", `{"body":"see [docs](https://paste.example/ingest) now"}`,
			[]HostHit{{Host: "paste.example", Raw: "https://paste.example/ingest", Kind: "url", Path: "/body"}}},
		{"nested array", `{"links":["x",{"href":"ftp://files.example"}]}`,
			[]HostHit{{Host: "files.example", Raw: "ftp://files.example", Kind: "url", Path: "/links/1/href"}}},
		{"object key", `{"headers":{"https://evil.example/":1}}`,
			[]HostHit{{Host: "evil.example", Raw: "https://evil.example/", Kind: "url", Path: "/headers/https:~1~1evil.example~1"}}},
		{"ipv6 literal", `{"u":"http://[::1]:8080/"}`,
			[]HostHit{{Host: "::1", Raw: "http://[::1]:8080/", Kind: "url", Path: "/u"}}},
		{"unparseable url still yields its host", `{"u":"http://evil.example:bad port/%zz"}`,
			[]HostHit{{Host: "evil.example", Raw: "http://evil.example:bad", Kind: "url", Path: "/u"}}},
		{"file url has no host", `{"u":"file:///etc/passwd"}`, nil},
		{"scheme starts at a letter", `{"u":"x=1https://evil.example/a"}`,
			[]HostHit{{Host: "evil.example", Raw: "https://evil.example/a", Kind: "url", Path: "/u"}}},
		{"two urls, sentence punctuation", `{"u":"go to http://a.example, then (see https://b.example/x)."}`,
			[]HostHit{{Host: "a.example", Raw: "http://a.example", Kind: "url", Path: "/u"},
				{Host: "b.example", Raw: "https://b.example/x", Kind: "url", Path: "/u"}}},
		{"unicode around", `{"u":"☃ https://xn--n3h.example/ü ☃"}`,
			[]HostHit{{Host: "xn--n3h.example", Raw: "https://xn--n3h.example/ü", Kind: "url", Path: "/u"}}},
		{"separator without scheme or host", `{"u":"://x a:// ://"}`, nil},
		{"no urls", `{"n":1,"b":true,"s":"report.md"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, URLHosts(decode(t, tc.args)))
		})
	}
}

func BenchmarkURLHosts(b *testing.B) {
	small := map[string]any{"url": "https://github.com/acme/cli/releases", "headers": map[string]any{"accept": "text/html"}}
	big := map[string]any{"body": strings.Repeat("lorem ipsum dolor sit amet, ", 1<<20/28) + " https://evil.example/x"}
	for name, v := range map[string]any{"typical": small, "1MiB": big} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(URLHosts(v)) != 1 {
					b.Fatal("want one hit")
				}
			}
		})
	}
}
