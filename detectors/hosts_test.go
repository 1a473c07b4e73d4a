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
		{"no urls", `{"n":1,"b":true,"s":"report.md"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, URLHosts(decode(t, tc.args)))
		})
	}
}
