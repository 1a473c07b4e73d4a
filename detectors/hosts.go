// Package detectors holds pure functions that find security-relevant facts
// (hosts, emails, secrets, paths, injection markers) in decoded JSON values.
// They do no I/O; the enforcement point passes their hits to the policy.
//
// Values are what encoding/json produces when decoding into `any` with
// UseNumber: map[string]any, []any, string, json.Number, bool and nil.
package detectors

import (
	"net/url"
	"strconv"
	"strings"
)

// HostHit is one host named by a value.
type HostHit struct {
	Host        string `json:"host"`              // normalized: lower case, ASCII (punycode), no trailing dot, port or userinfo; IPs canonical
	Unicode     string `json:"unicode,omitempty"` // the Unicode form of an IDN host
	Lookalike   bool   `json:"lookalike,omitempty"`
	Raw         string `json:"raw"`             // the text it was found in, as written
	Kind        string `json:"kind"`            // how it was written: one of the HostKind constants
	Path        string `json:"path"`            // JSON pointer of the value, e.g. "/url" or "/links/0"
	Field       string `json:"field,omitempty"` // the property name the value stood in
	Destination bool   `json:"destination"`     // a place the call sends to or fetches from, not a mention in prose
	Decoded     string `json:"decoded,omitempty"`
}

// URLHosts returns the host of every scheme://host URL in the string values
// (and object keys) of v, including URLs inside prose and Markdown, because
// clients fetch and unfurl URLs wherever they appear. It is the simple
// extractor the egress rule starts with; other spellings of a host are the
// job of the full detector set.
func URLHosts(v any) []HostHit {
	var hits []HostHit
	Walk(v, func(path, s string) {
		for _, raw := range findURLs(s) {
			if h := urlHost(raw); h != "" {
				hits = append(hits, HostHit{Host: h, Raw: raw, Kind: "url", Path: path})
			}
		}
	})
	return hits
}

// findURLs returns the scheme://... substrings of s. It scans for "://" and
// widens around each hit, so a large argument costs one pass at memchr speed
// (a regular expression over megabytes of text costs seconds).
func findURLs(s string) []string {
	var urls []string
	for off := 0; ; {
		i := strings.Index(s[off:], "://")
		if i < 0 {
			return urls
		}
		sep := off + i
		start := sep
		for start > 0 && isSchemeByte(s[start-1]) {
			start--
		}
		for start < sep && !isLetter(s[start]) { // a scheme starts with a letter
			start++
		}
		end := sep + 3
		for end < len(s) && !isURLTerminator(s[end]) {
			end++
		}
		if start < sep && end > sep+3 {
			urls = append(urls, trimProse(s[start:end]))
		}
		off = end
	}
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isSchemeByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// isURLTerminator reports the bytes that end a URL written in text: space,
// quotes, angle brackets, backquote, and the parenthesis that closes a
// Markdown link.
func isURLTerminator(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', '"', '\'', '<', '>', '`', ')':
		return true
	}
	return false
}

// trimProse drops punctuation that ends a sentence or a Markdown link rather
// than the URL; a closing bracket stays when it closes an IPv6 literal.
func trimProse(raw string) string {
	raw = strings.TrimRight(raw, ".,;:!?")
	if !strings.Contains(raw, "[") {
		raw = strings.TrimRight(raw, "]")
	}
	return raw
}

func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// A URL that Go cannot parse may still be one a server can; fall
		// back to cutting the authority out by hand.
		rest := raw[strings.Index(raw, "://")+3:]
		if i := strings.IndexAny(rest, "/?#\\"); i >= 0 {
			rest = rest[:i]
		}
		if i := strings.LastIndex(rest, "@"); i >= 0 {
			rest = rest[i+1:]
		}
		if i := strings.LastIndex(rest, ":"); i >= 0 && !strings.Contains(rest[i:], "]") {
			rest = rest[:i]
		}
		return NormalizeHost(strings.Trim(rest, "[]"))
	}
	return NormalizeHost(u.Hostname())
}

// NormalizeHost lower-cases a host and strips a trailing dot.
func NormalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// Walk calls fn for every string in v, object keys included, with the JSON
// pointer (RFC 6901) of where it was found.
func Walk(v any, fn func(path, s string)) {
	walk(v, "", fn)
}

func walk(v any, path string, fn func(path, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case map[string]any:
		for k, child := range x {
			p := path + "/" + escapePointer(k)
			fn(p, k)
			walk(child, p, fn)
		}
	case []any:
		for i, child := range x {
			walk(child, path+"/"+strconv.Itoa(i), fn)
		}
	}
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func escapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return pointerEscaper.Replace(k)
}
