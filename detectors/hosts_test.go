package detectors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

// hk is the part of a host hit most tables check.
type hk struct {
	Host, Kind string
	Dest       bool
}

func hostsOf(r Result) []hk {
	var out []hk
	for _, h := range r.Hosts {
		out = append(out, hk{h.Host, h.Kind, h.Destination})
	}
	return out
}

// scanOne scans {field: value} with the default options.
func scanOne(t testing.TB, field, value string) Result {
	t.Helper()
	return ScanArguments(map[string]any{field: value}, Options{})
}

func TestURLHosts(t *testing.T) {
	tests := []struct {
		name string
		args string
		want []HostHit
	}{
		{"plain url", `{"url":"https://example.org/page"}`,
			[]HostHit{{Host: "example.org", Raw: "https://example.org/page", Kind: "url", Path: "/url", Field: "url", Destination: true}}},
		{"upper case, trailing dot, port", `{"u":"HTTPS://EXAMPLE.org.:8443/x"}`,
			[]HostHit{{Host: "example.org", Raw: "HTTPS://EXAMPLE.org.:8443/x", Kind: "url", Path: "/u", Field: "u", Destination: true}}},
		{"userinfo is not the host", `{"u":"https://github.com@evil.example/x"}`,
			[]HostHit{{Host: "evil.example", Raw: "https://github.com@evil.example/x", Kind: "url", Path: "/u", Field: "u", Destination: true}}},
		{"inside prose and markdown", `{"body":"see [docs](https://paste.example/ingest) now"}`,
			[]HostHit{{Host: "paste.example", Raw: "https://paste.example/ingest", Kind: "url", Path: "/body", Field: "body", Destination: true}}},
		{"nested array", `{"links":["x",{"href":"ftp://files.example"}]}`,
			[]HostHit{{Host: "files.example", Raw: "ftp://files.example", Kind: "url", Path: "/links/1/href", Field: "href", Destination: true}}},
		{"object key", `{"headers":{"https://evil.example/":1}}`,
			[]HostHit{{Host: "evil.example", Raw: "https://evil.example/", Kind: "url", Path: "/headers/https:~1~1evil.example~1", Destination: true}}},
		{"ipv6 literal", `{"u":"http://[::1]:8080/"}`,
			[]HostHit{{Host: "::1", Raw: "http://[::1]:8080/", Kind: "url", Path: "/u", Field: "u", Destination: true}}},
		{"unparseable url still yields its host", `{"u":"http://evil.example:bad port/%zz"}`,
			[]HostHit{{Host: "evil.example", Raw: "http://evil.example:bad", Kind: "url", Path: "/u", Field: "u", Destination: true}}},
		{"file url has no host", `{"u":"file:///etc/passwd"}`, nil},
		{"scheme starts at a letter", `{"u":"x=1https://evil.example/a"}`,
			[]HostHit{{Host: "evil.example", Raw: "https://evil.example/a", Kind: "url", Path: "/u", Field: "u", Destination: true}}},
		{"two urls, sentence punctuation", `{"u":"go to http://a.example, then (see https://b.example/x)."}`,
			[]HostHit{{Host: "a.example", Raw: "http://a.example", Kind: "url", Path: "/u", Field: "u", Destination: true},
				{Host: "b.example", Raw: "https://b.example/x", Kind: "url", Path: "/u", Field: "u", Destination: true}}},
		{"unicode around", `{"u":"☃ https://xn--n3h.example/ü ☃"}`,
			[]HostHit{{Host: "xn--n3h.example", Unicode: "☃.example", Raw: "https://xn--n3h.example/ü", Kind: "url", Path: "/u", Field: "u", Destination: true}}},
		{"backslashes", `{"u":"https:\\\\evil.example\\x"}`,
			[]HostHit{{Host: "evil.example", Raw: `https:\\evil.example\x`, Kind: "url", Path: "/u", Field: "u", Destination: true}}},
		{"ssh is a git remote", `{"u":"ssh://git@evil.example/x"}`,
			[]HostHit{{Host: "evil.example", Raw: "ssh://git@evil.example/x", Kind: "git", Path: "/u", Field: "u", Destination: true}}},
		{"separator without scheme or host", `{"u":"://x a:// ://"}`, nil},
		{"no urls", `{"n":1,"b":true,"s":"report.md"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, URLHosts(decode(t, tc.args)))
		})
	}
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		raw, host, unicode string
		lookalike, ok      bool
	}{
		{"EXAMPLE.org.", "example.org", "", false, true},
		{"%65vil.example", "evil.example", "", false, true},
		{"evil%2Eexample", "evil.example", "", false, true},
		{"ｅｖｉｌ．ｅｘａｍｐｌｅ", "evil.example", "", false, true},
		{"evil。example", "evil.example", "", false, true},
		{"pаypal.com", "xn--pypal-4ve.com", "pаypal.com", true, true},        // Cyrillic а
		{"xn--pypal-4ve.com", "xn--pypal-4ve.com", "pаypal.com", true, true}, // the same, as punycode
		{"gοοgle.com", "xn--ggle-0nda.com", "gοοgle.com", true, true},        // Greek ο
		{"аррӏе.com", "xn--80ak6aa92e.com", "аррӏе.com", true, true},         // all Cyrillic look-alikes
		{"bücher.de", "xn--bcher-kva.de", "bücher.de", false, true},
		{"яндекс.рф", "xn--d1acpjx3f.xn--p1ai", "яндекс.рф", false, true},
		{"日本語.jp", "xn--wgv71a119e.jp", "日本語.jp", false, true},
		{"ドメイン名例.jp", "xn--eckwd4c7cu47r2wf.jp", "ドメイン名例.jp", false, true},
		{"my_host.example", "my_host.example", "", false, true},
		{"2130706433", "127.0.0.1", "", false, true},
		{"0177.0.0.1", "127.0.0.1", "", false, true},
		{"0x7f.0.0.1", "127.0.0.1", "", false, true},
		{"0X7F.1", "127.0.0.1", "", false, true},
		{"127.1", "127.0.0.1", "", false, true},
		{"127.0.1", "127.0.0.1", "", false, true},
		{"0x7f000001", "127.0.0.1", "", false, true},
		{"017700000001", "127.0.0.1", "", false, true},
		{"127.0.0.1.", "127.0.0.1", "", false, true},
		{"１２７.０.０.１", "127.0.0.1", "", false, true},
		{"[::ffff:127.0.0.1]", "127.0.0.1", "", false, true},
		{"[::ffff:7f00:1]", "127.0.0.1", "", false, true},
		{"[0:0:0:0:0:0:0:1]", "::1", "", false, true},
		{"[2001:DB8:0:0:0:0:0:1]", "2001:db8::1", "", false, true},
		{"[fe80::1%eth0]", "fe80::1", "", false, true},
		{"[fe80::1%25eth0]", "fe80::1", "", false, true},
		{"::1", "::1", "", false, true},
		{"256.0.0.1", "256.0.0.1", "", false, false},
		{"1.2.3.4.5", "1.2.3.4.5", "", false, false},
		{"0x1g.0.0.1", "0x1g.0.0.1", "", false, false},
		{"a..b", "a..b", "", false, false},
		{"[not:an:ip]", "[not:an:ip]", "", false, false},
		{"", "", "", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			h := normalizeHost(tc.raw)
			assert.Equal(t, tc.host, h.host)
			assert.Equal(t, tc.unicode, h.unicode)
			assert.Equal(t, tc.lookalike, h.lookalike)
			assert.Equal(t, tc.ok, h.ok)
			assert.Equal(t, tc.host, NormalizeHost(tc.raw))
		})
	}
}

func TestNormalizeHostLeadingZeros(t *testing.T) {
	h := normalizeHost("010.0.0.1") // inet_aton: octal; others: decimal
	assert.Equal(t, "8.0.0.1", h.host)
	assert.Equal(t, "10.0.0.1", h.alt)
	assert.Equal(t, []hk{{"8.0.0.1", "url", true}, {"10.0.0.1", "url", true}}, hostsOf(scanOne(t, "u", "http://010.0.0.1/")))
}

// TestURLSpellings: one row per way of writing a URL's host.
func TestURLSpellings(t *testing.T) {
	tests := []struct {
		in   string
		want []hk
	}{
		{"https://example.org/page", []hk{{"example.org", "url", true}}},
		{"HTTPS://EXAMPLE.org.:8443/x", []hk{{"example.org", "url", true}}},
		{"ftp://files.example/x", []hk{{"files.example", "url", true}}},
		{"ws://sock.example:9000/", []hk{{"sock.example", "url", true}}},
		{"wss://sock.example/", []hk{{"sock.example", "url", true}}},
		{"jdbc:mysql://db.example:3306/x", []hk{{"db.example", "url", true}}},
		{"git+ssh://git@repo.example/x.git", []hk{{"repo.example", "git", true}}},
		{"ssh://deploy@box.example:2222/srv", []hk{{"box.example", "git", true}}},
		{"//cdn.evil.com/x.js", []hk{{"cdn.evil.com", "url", true}}},
		{`<script src="//cdn.evil.com/x.js">`, []hk{{"cdn.evil.com", "url", true}}},
		{`\\evil.com\share\x`, []hk{{"evil.com", "url", true}}},
		{`<a href="/\evil.com/x">`, []hk{{"evil.com", "url", true}}},
		{`\/evil.com/x`, []hk{{"evil.com", "url", true}}},
		{`https:\\evil.example\x`, []hk{{"evil.example", "url", true}}},
		{`https:\/\/evil.example/x`, []hk{{"evil.example", "url", true}}},
		{`https:/\evil.example/x`, []hk{{"evil.example", "url", true}}},
		{"https:/evil.example/x", []hk{{"evil.example", "url", true}}},
		{"https:evil.example/x", []hk{{"evil.example", "url", true}}},
		{"https:///evil.example/x", []hk{{"evil.example", "url", true}}},
		{"https://allowed.example@evil.example/", []hk{{"evil.example", "url", true}}},
		{"https://allowed.example:443@evil.example/", []hk{{"evil.example", "url", true}}},
		{"https://user:pa:ss@evil.example/", []hk{{"evil.example", "url", true}}},
		{"https://a)@evil.example/", []hk{{"evil.example", "url", true}}},
		{`https://allowed.example\@evil.example/`, []hk{{"allowed.example", "url", true}, {"evil.example", "url", true}}},
		{"https://allowed.example\t@evil.example/", []hk{{"allowed.example", "url", true}, {"evil.example", "url", true}}},
		{"https://allowed.example\n@evil.example/", []hk{{"allowed.example", "url", true}, {"evil.example", "url", true}}},
		{"https://github.com\nNext line, no at sign", []hk{{"github.com", "url", true}}},
		{"see https://ourco.com\nbob@ourco.com", []hk{{"ourco.com", "url", true}, {"ourco.com", "email", false}}},
		{"https://evil.example#@allowed.example", []hk{{"evil.example", "url", true}}},
		{"https://evil.example?@allowed.example", []hk{{"evil.example", "url", true}}},
		{"https://%65vil.example/", []hk{{"evil.example", "url", true}}},
		{"https://evil%2Eexample/", []hk{{"evil.example", "url", true}}},
		{"https://ｅｖｉｌ．ｅｘａｍｐｌｅ/", []hk{{"evil.example", "url", true}}},
		{"https://pаypal.com/", []hk{{"xn--pypal-4ve.com", "url", true}}},
		{"http://2130706433/", []hk{{"127.0.0.1", "url", true}}},
		{"http://0177.0.0.1/", []hk{{"127.0.0.1", "url", true}}},
		{"http://0x7f.0.0.1/", []hk{{"127.0.0.1", "url", true}}},
		{"http://127.1/", []hk{{"127.0.0.1", "url", true}}},
		{"http://0x7f000001/", []hk{{"127.0.0.1", "url", true}}},
		{"http://017700000001/", []hk{{"127.0.0.1", "url", true}}},
		{"http://[::ffff:127.0.0.1]/", []hk{{"127.0.0.1", "url", true}}},
		{"http://[0:0:0:0:0:0:0:1]:8080/", []hk{{"::1", "url", true}}},
		{"http://user@[::1]:80/", []hk{{"::1", "url", true}}},
		{"http://[2001:DB8::1]/", []hk{{"2001:db8::1", "url", true}}},
		{"http://[fe80::1%25eth0]/", []hk{{"fe80::1", "url", true}}},
		{"http://256.1.1.1/", []hk{{"256.1.1.1", "url", true}}}, // not a host: reported as written, so refused
		{"see [docs](https://paste.example/ingest).", []hk{{"paste.example", "url", true}}},
		{"<https://angle.example/x>", []hk{{"angle.example", "url", true}}},
		{"(https://paren.example)", []hk{{"paren.example", "url", true}}},
		{"**https://bold.example**", []hk{{"bold.example", "url", true}}},
		{"https://a.example/login?next=https://b.example/", []hk{{"a.example", "url", true}, {"b.example", "url", true}}},
		{"file://fileserver.example/share", []hk{{"fileserver.example", "url", true}}},
		{"file:///etc/passwd", nil},
		{`C:\Users\me\report.md`, nil},
		{"a//b.com", nil},
		{"x = a // b.com", []hk{{"b.com", "hostname", false}}},
		{"// comment about evil.com", []hk{{"evil.com", "hostname", false}}},
		{"note: see http: the protocol", nil},
		{"http:8080", nil},
		{"mailto:someone", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, hostsOf(scanOne(t, "body", tc.in)))
		})
	}
}

// TestBareNames: a name without a scheme is a host in a destination field,
// a mention in prose (when its TLD is real), nothing when it is a file or
// code.
func TestBareNames(t *testing.T) {
	tests := []struct {
		field, in string
		want      []hk
	}{
		{"body", "visit github.com today", []hk{{"github.com", "hostname", false}}},
		{"body", "Go to GitHub.com.", nil}, // camelCase: code-like in prose
		{"body", "see bbc.co.uk and user.github.io or github.io", []hk{{"bbc.co.uk", "hostname", false}, {"user.github.io", "hostname", false}, {"github.io", "hostname", false}}},
		{"body", "co.uk", nil},
		{"body", "www.evil.com/x", []hk{{"www.evil.com", "url", true}}},
		{"body", "evil.example and db.internal", nil}, // not in the public suffix list
		{"body", "localhost", nil},
		{"body", "pаypal.com", []hk{{"xn--pypal-4ve.com", "hostname", false}}},
		{"body", "connect to 10.1.2.3 now", []hk{{"10.1.2.3", "ip", false}}},
		{"body", "ipv6 ::1 and 2001:db8::1, not std::vector or 12:30:00 or aa:bb:cc:dd:ee:ff", []hk{{"::1", "ip", false}, {"2001:db8::1", "ip", false}}},
		{"body", "version 1.2.3 and 2130706433 and 0x7f.1", nil},
		{"host", "evil.example", []hk{{"evil.example", "hostname", true}}},
		{"host", " EVIL.Example. ", []hk{{"evil.example", "hostname", true}}},
		{"host", "evil.example:8443", []hk{{"evil.example", "hostname", true}}},
		{"server", "db.internal", []hk{{"db.internal", "hostname", true}}},
		{"domain", "ｅｘａｍｐｌｅ．ｃｏｍ", []hk{{"example.com", "hostname", true}}},
		{"host", "intranet", nil},
		{"host", "localhost", []hk{{"localhost", "hostname", true}}},
		{"host", "localhost:8080", []hk{{"localhost", "hostname", true}}},
		{"host", "2130706433", []hk{{"127.0.0.1", "ip", true}}},
		{"host", "0x7f.1", []hk{{"127.0.0.1", "ip", true}}},
		{"host", "[::1]:22", []hk{{"::1", "ip", true}}},
		{"host", "::ffff:127.0.0.1", []hk{{"127.0.0.1", "ip", true}}},
		{"url", "evil.example/path?q=1", []hk{{"evil.example", "hostname", true}}},
		{"url", "report.md", []hk{{"report.md", "hostname", true}}}, // a fetch tool may add https://
		{"url", "./report.md", nil},
		{"url", "docs/report.md", nil},
		{"target", "deploy to evil.example and src/main.rs", []hk{{"evil.example", "hostname", true}}},
		{"target", "1.2.3", nil},
		{"target", "22.1", nil},
		{"host", "127.1", []hk{{"127.0.0.1", "ip", true}}},
		{"smtp_host", "127.0.1", []hk{{"127.0.0.1", "ip", true}}},
		{"target", "0x7f.1", []hk{{"127.0.0.1", "ip", true}}},
		{"target", "0x7f000001", []hk{{"127.0.0.1", "ip", true}}},
		{"to", "12345", nil},
		{"to", "acct-9", nil},
		{"smtp_server", "2130706433", []hk{{"127.0.0.1", "ip", true}}},
		{"zip", "94103", nil},
		{"target", "10.0.0.1", []hk{{"10.0.0.1", "ip", true}}},
		{"url", "evil%2Eexample", []hk{{"evil.example", "hostname", true}}},
	}
	for _, tc := range tests {
		t.Run(tc.field+" "+tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, hostsOf(scanOne(t, tc.field, tc.in)))
		})
	}
}

// TestNotHostsInProse: files, versions, code and abbreviations are no
// host at all.
func TestNotHostsInProse(t *testing.T) {
	for _, s := range []string{
		"report.md", "README.md", "main.go", "index.html", "setup.py", "demo.mov", "archive.zip", "lib.rs",
		"build.sh", "model.pt", "Makefile.in", "config.ru", "styles.css", "app.js", "go.mod", "go.sum",
		"v1.2.3", "1.2.3.4-rc1", "node@22.1.0", "react@18.2.0", "python3.12", "1.2.3-beta.1+build.5",
		"os.path.join", "a.b.c()", "fmt.Println", "self.name", "user.email", "app.run()", "req.host", "this.state",
		"console.log(x)", "np.array", "obj.id", "Object.keys", "e.g.", "i.e.", "etc.", "a.m.", "U.S.A.", "Ph.D.",
		"done.It was", "x.y", "src/main.rs", "/usr/lib/x86_64-linux-gnu/libc.so", "~/docs/report.md",
		"2026-11-29T12:00:00.123Z", "3.14159", "550e8400-e29b-41d4-a716-446655440000",
		"my_module.some_function", "foo.bar_baz", "$obj.link", "#section.md",
	} {
		t.Run(s, func(t *testing.T) {
			r := scanOne(t, "body", "see "+s+" now")
			assert.Empty(t, r.Hosts)
			assert.Empty(t, r.Emails)
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
