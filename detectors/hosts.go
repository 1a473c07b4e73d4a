// Package detectors holds pure functions that find security-relevant facts
// (hosts, emails, secrets, paths, injection markers) in decoded JSON values.
// They do no I/O; the enforcement point passes their hits to the policy.
//
// Values are what encoding/json produces when decoding into `any` with
// UseNumber: map[string]any, []any, string, json.Number, bool and nil.
package detectors

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
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

// URLHosts returns the host of every URL in the string values (and object
// keys) of v: scheme://host, the backslash-mangled and scheme-relative
// spellings, including URLs inside prose and Markdown, because clients fetch
// and unfurl URLs wherever they appear. Every hit is a destination. It is
// the URL part of ScanArguments, without the other detectors, decoding or
// de-duplication.
func URLHosts(v any) []HostHit {
	var hits []HostHit
	walkStrings(v, "", "", func(path, field, s string) {
		hostFindURLs(s, func(m urlMatch) {
			for _, raw := range m.hosts() {
				if h := normalizeHost(raw); h.host != "" {
					hits = append(hits, HostHit{Host: h.host, Unicode: h.unicode, Lookalike: h.lookalike, Raw: hostCutRaw(m.raw),
						Kind: m.kind(), Path: path, Field: field, Destination: true})
				}
			}
		})
	})
	return hits
}

// NormalizeHost returns the canonical form of a host as written in a URL
// authority: percent-decoded, lower case, IDNA to punycode, no trailing
// dot, an IPv4 address in any notation as a dotted quad, an IPv6 literal
// (brackets and zone dropped) in RFC 5952 form, an IPv4-mapped IPv6
// address as its IPv4 address. Userinfo and port must already be cut off.
// A host that is not valid comes back lower-cased as written.
func NormalizeHost(h string) string {
	return normalizeHost(h).host
}

// hostRawMax bounds HostHit.Raw: a URL with a megabyte of query string is
// reported by its first bytes.
const hostRawMax = 512

func hostCutRaw(raw string) string {
	if len(raw) <= hostRawMax {
		return raw
	}
	cut := hostRawMax
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	return raw[:cut] + "…"
}

// hostName is a normalized host.
type hostName struct {
	host      string // ASCII, lower case; "" for an empty host
	unicode   string // the Unicode form, when host has punycode labels
	alt       string // an IPv4 address another parser reads (leading zeros)
	lookalike bool   // a label mixes scripts, or is all look-alike letters
	ip        bool
	ok        bool // a syntactically valid host name or IP address
}

// hostIDNA maps and validates as the URL standard does (UTS 46,
// non-transitional, Bidi and joiner rules, hyphens and '_' allowed).
var hostIDNA = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.StrictDomainName(false),
	idna.CheckHyphens(false), idna.Transitional(false))

// hostMaxLen bounds what is normalized: no host name is longer than 253
// bytes (and IDNA is quadratic in a label's length); a longer "host" is
// reported as written, cut, and is not valid.
const hostMaxLen = 1024

func normalizeHost(raw string) hostName {
	s := raw
	if len(s) > hostMaxLen {
		return hostName{host: strings.ToValidUTF8(strings.ToLower(s[:256]), "") + "…"}
	}
	if strings.IndexByte(s, '%') >= 0 {
		s = hostPercentDecode(s)
	}
	if s == "" {
		return hostName{}
	}
	if s[0] == '[' || strings.IndexByte(s, ':') >= 0 {
		if a, ok := ipParse6(s); ok {
			return hostName{host: a.String(), ip: true, ok: true}
		}
		return hostName{host: strings.ToLower(s)}
	}
	if hostIsASCII(s) {
		s = hostLowerASCII(s)
	} else {
		a, err := hostIDNA.ToASCII(s)
		if err != nil {
			return hostName{host: strings.TrimRight(strings.ToLower(s), ".")}
		}
		s = a
	}
	s = strings.TrimRight(s, ".")
	if s == "" {
		return hostName{}
	}
	if ipEndsInNumber(s) {
		if a, alt, ok := ipParse4(s); ok {
			h := hostName{host: a.String(), ip: true, ok: true}
			if alt.IsValid() {
				h.alt = alt.String()
			}
			return h
		}
		return hostName{host: s}
	}
	h := hostName{host: s, ok: hostValidLabels(s)}
	if h.ok && strings.Contains(s, "xn--") {
		u, err := idna.Display.ToUnicode(s)
		if err != nil {
			h.ok = false // punycode that does not decode
		} else if u != s {
			h.unicode = u
			h.lookalike = hostLookalike(u)
		}
	}
	return h
}

// hostValidLabels reports an ASCII name of labels of 1 to 63 letters,
// digits, '-' or '_', 253 bytes at most.
func hostValidLabels(s string) bool {
	if len(s) > 253 {
		return false
	}
	n := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if n == 0 || n > 63 {
				return false
			}
			n = 0
			continue
		}
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
		n++
	}
	return true
}

// How sure the context is that a name is a host.
const (
	levelProse = iota // prose: a registrable name under a TLD of the public suffix list's ICANN section
	levelDest         // a destination field, a command target: two or more labels, an alphabetic TLD
	levelName         // a field that says it is a host (split fields, format hostname): any name
)

// hostAccept reports whether a normalized name counts as a host at a level.
// IP addresses are the caller's business (which spellings it accepts).
func hostAccept(h hostName, level int) bool {
	if !h.ok || h.ip {
		return h.ok
	}
	if h.host == "localhost" || strings.HasSuffix(h.host, ".localhost") {
		return level >= levelDest
	}
	dot := strings.LastIndexByte(h.host, '.')
	if dot < 0 {
		return level >= levelName
	}
	tld := h.host[dot+1:]
	if !hostAlphaTLD(tld) {
		return false
	}
	if level >= levelDest {
		return true
	}
	if ps, icann := publicsuffix.PublicSuffix(tld); !icann || ps != tld {
		return false // not a TLD of the list: "report.internal", "x.example"
	}
	ps, icann := publicsuffix.PublicSuffix(h.host)
	return !(icann && ps == h.host) // "co.uk" is a suffix, not a host
}

func hostAlphaTLD(t string) bool {
	if strings.HasPrefix(t, "xn--") {
		return len(t) > 4
	}
	for i := 0; i < len(t); i++ {
		if t[i] < 'a' || t[i] > 'z' {
			return false
		}
	}
	return len(t) >= 2
}

// Scripts for the look-alike check.
const (
	scLatin = 1 << iota
	scCyrillic
	scGreek
	scArmenian
	scCherokee
	scHan
	scHiragana
	scKatakana
	scHangul
	scBopomofo
	scOther
)

// Script mixes a label may have without being a look-alike: Japanese,
// Chinese and Korean writing, each with Latin (Chromium's "highly
// restrictive" profile of UTS 39).
var hostScriptMixes = []int{
	scLatin | scHan | scHiragana | scKatakana,
	scLatin | scHan | scBopomofo,
	scLatin | scHan | scHangul,
}

// Cyrillic and Greek letters that look like Latin ones: a label of only
// these under an ASCII TLD ("аррӏе.com") is a whole-script look-alike.
const hostConfusables = "асԁеһіјӏорԛѕԝхуъьҽпгѵѡкмтвнԍαοριυνκτχ"

// hostLookalike reports a Unicode host with a label that mixes scripts
// ("pаypal" with a Cyrillic а), or that is written entirely in Cyrillic
// or Greek letters that look Latin when the TLD is ASCII.
func hostLookalike(u string) bool {
	tldASCII := hostIsASCII(u[strings.LastIndexByte(u, '.')+1:])
	for label := range strings.SplitSeq(u, ".") {
		scripts, confusable, letters := 0, true, 0
		for _, r := range label {
			sc := hostScript(r)
			if sc == 0 {
				continue
			}
			letters++
			scripts |= sc
			if !strings.ContainsRune(hostConfusables, r) {
				confusable = false
			}
		}
		if scripts&(scripts-1) != 0 && !hostAllowedMix(scripts) {
			return true
		}
		if tldASCII && letters > 0 && confusable && scripts&(scCyrillic|scGreek) != 0 {
			return true
		}
	}
	return false
}

func hostAllowedMix(scripts int) bool {
	for _, m := range hostScriptMixes {
		if scripts&^m == 0 {
			return true
		}
	}
	return false
}

func hostScript(r rune) int {
	switch {
	case r < 0x80:
		if r|0x20 >= 'a' && r|0x20 <= 'z' {
			return scLatin
		}
		return 0
	case !unicode.IsLetter(r):
		return 0
	case unicode.Is(unicode.Latin, r):
		return scLatin
	case unicode.Is(unicode.Cyrillic, r):
		return scCyrillic
	case unicode.Is(unicode.Greek, r):
		return scGreek
	case unicode.Is(unicode.Armenian, r):
		return scArmenian
	case unicode.Is(unicode.Cherokee, r):
		return scCherokee
	case unicode.Is(unicode.Han, r):
		return scHan
	case unicode.Is(unicode.Hiragana, r):
		return scHiragana
	case unicode.Is(unicode.Katakana, r):
		return scKatakana
	case unicode.Is(unicode.Hangul, r):
		return scHangul
	case unicode.Is(unicode.Bopomofo, r):
		return scBopomofo
	}
	return scOther
}

// urlMatch is a URL found in text.
type urlMatch struct {
	raw        string // as written, prose punctuation trimmed
	start, end int    // the span of raw
	scheme     string // lower case; "" for //host and \\host
	host       string // the authority's host as written, userinfo and port cut
	alt        string // the host a lenient parser sees (see hostAuthority)
}

func (m urlMatch) hosts() []string {
	if m.alt != "" && m.alt != m.host {
		return []string{m.host, m.alt}
	}
	return []string{m.host}
}

func (m urlMatch) kind() string {
	switch m.scheme {
	case "ssh", "git", "git+ssh", "ssh+git", "sftp", "scp":
		return HostKindGit
	}
	return HostKindURL
}

// The schemes the URL standard calls special: their authority may be
// written with one slash, a backslash or none ("https:evil.example").
func hostSpecialScheme(s string) bool {
	switch strings.ToLower(s) {
	case "http", "https", "ws", "wss", "ftp":
		return true
	}
	return false
}

// hostFindURLs calls fn for every URL in s: scheme://host (any scheme, so
// ftp, ws, git+ssh...), the spellings a lenient parser accepts for the
// special schemes (https:\\h, https:/h, https:\/\/h, https:h), and
// scheme-relative //host (or /\host, \/host) and UNC \\host. It scans
// for ':' and widens around each, so a large argument costs a pass at
// memchr speed. URLs inside a URL (a redirect parameter) are found too.
func hostFindURLs(s string, fn func(urlMatch)) {
	var ends hostEnds
	valueStart := len(s) - len(strings.TrimLeft(s, " \t\r\n"))
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], ':')
		if i < 0 {
			break
		}
		i += off
		off = i + 1
		start := i
		for start > 0 && isSchemeByte(s[start-1]) {
			start--
		}
		for start < i && !isLetter(s[start]) { // a scheme starts with a letter
			start++
		}
		if start == i {
			continue
		}
		scheme := s[start:i]
		j := i + 1
		for j < len(s) && (s[j] == '/' || s[j] == '\\') {
			j++
		}
		special := hostSpecialScheme(scheme)
		switch n := j - i - 1; {
		case special:
		case n == 2 && (s[i+1] == '/' && s[i+2] == '/' || len(scheme) >= 2):
		default:
			continue // "c:\dir", "note: x", "file:///path" (no host)
		}
		if j-i-1 == 0 && (j >= len(s) || !hostStartByte(s, j) || hostAllDigits(s, j)) {
			continue // "http:" in prose, "http:8080"
		}
		m, ae, ok := hostAuthority(s, start, j, start == valueStart, &ends)
		if !ok {
			continue
		}
		m.scheme = strings.ToLower(scheme)
		fn(m)
		off = ae
	}
	for _, sep := range []string{"//", `\\`, `/\`, `\/`} { // a browser reads all four as //
		hostFindRelative(s, sep, fn)
	}
}

// hostFindRelative finds scheme-relative //host and UNC \\host URLs (sep
// is the pair of slashes). They must not follow a word, a path or a scheme
// ("a//b", "x://"), and the host must be one at the prose level, localhost
// or an IP address.
func hostFindRelative(s, sep string, fn func(urlMatch)) {
	var ends hostEnds
	for off := 0; off < len(s); {
		i := strings.Index(s[off:], sep)
		if i < 0 {
			return
		}
		i += off
		off = i + 2
		if i > 0 && hostRelativeBlocked(s[i-1]) {
			continue
		}
		j := i + 2
		if j >= len(s) || !hostStartByte(s, j) {
			continue
		}
		m, ae, ok := hostAuthority(s, i, j, false, &ends)
		if !ok {
			continue
		}
		h := normalizeHost(m.host)
		if !h.ip && !hostAccept(h, levelProse) && h.host != "localhost" {
			continue
		}
		if !h.ip && (ae >= len(s) || !strings.ContainsRune(`/\:?#`, rune(s[ae]))) && hostFileExt(h.host) {
			continue // "//report.md"
		}
		fn(m)
		off = ae
	}
}

func hostRelativeBlocked(c byte) bool {
	return isSchemeByte(c) || c == ':' || c == '/' || c == '\\' || c == '_' || c == '~' || c == '%' || c == '*' || c >= 0x80
}

// hostStartByte reports a byte that can start a host: a letter, digit,
// '[', '%' or a multibyte character.
func hostStartByte(s string, j int) bool {
	c := s[j]
	return isLetter(c) || c >= '0' && c <= '9' || c == '[' || c == '%' || c >= 0x80
}

func hostAllDigits(s string, j int) bool {
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	return k > j && (k == len(s) || !hostNameByte(s[k]) || s[k] == '-')
}

// hostAuthority reads the authority that starts at a (the URL starts at
// start): it ends at '/', '\', '?', '#', white space, a quote, '<', '>' or
// '`', or a non-ASCII character that is not a letter, digit or mark (or an
// ideographic full stop). The host follows the last '@' and ends at the
// port's ':'. It returns the index where the authority ends.
func hostAuthority(s string, start, a int, whole bool, ends *hostEnds) (urlMatch, int, bool) {
	ae := hostAuthorityEnd(s, a, true)
	auth := s[a:ae]
	host := auth
	if k := strings.LastIndexByte(host, '@'); k >= 0 {
		host = host[k+1:]
	}
	host = hostCutPort(hostTrimProse(host))
	if host == "" {
		return urlMatch{}, ae, false
	}
	m := urlMatch{start: start, host: host}
	// A parser that reads '\' as an ordinary byte, or that drops tabs and
	// newlines as the URL standard does, sees the host after an '@' further
	// on: "https://allowed\@evil" and "https://allowed<TAB>@evil" are evil
	// to some.
	// (Tabs and newlines only in a value that starts with the URL: in prose
	// a line that follows a URL may start with an email address.)
	if ae < len(s) && (s[ae] == '\\' || whole && (s[ae] == '\t' || s[ae] == '\n' || s[ae] == '\r')) {
		if ext, at := ends.ext(s, a); at >= ae {
			m.alt = hostCutPort(hostTrimProse(hostDropNewlines(s[at+1 : ext])))
		}
	}
	raw := strings.TrimRight(s[start:ends.raw(s, a)], ".,;:!?")
	if s[a] != '[' {
		raw = strings.TrimRight(raw, "]") // a Markdown bracket, not an IPv6 literal's
	}
	if authEnd := a + len(hostTrimProse(auth)); len(raw) < authEnd-start {
		raw = s[start:authEnd] // the authority held a ')' or a quote
	}
	m.raw, m.end = raw, start+len(raw)
	return m, ae, true
}

// hostEnds remembers the last ends found, so URLs nested in a URL (or
// many authorities before one '/') cost one scan, not one each: the end
// found from a' is the end from every a in [a', end].
type hostEnds struct{ rawFrom, rawEnd, extFrom, extEnd, extAt int }

func (e *hostEnds) raw(s string, a int) int {
	if e.rawEnd == 0 || a < e.rawFrom || a > e.rawEnd {
		e.rawFrom, e.rawEnd = a, a
		for e.rawEnd < len(s) && !isURLTerminator(s[e.rawEnd]) {
			e.rawEnd++
		}
	}
	return e.rawEnd
}

// ext returns the end of the authority at a for a lenient parser (one
// that reads '\' as part of it and drops tabs and newlines), and the last
// '@' in it (-1 if none).
func (e *hostEnds) ext(s string, a int) (end, at int) {
	if e.extEnd == 0 || a < e.extFrom || a > e.extEnd {
		e.extFrom, e.extEnd = a, hostAuthorityEnd(s, a, false)
		e.extAt = strings.LastIndexByte(s[a:e.extEnd], '@')
		if e.extAt >= 0 {
			e.extAt += a
		}
	}
	if e.extAt < a {
		return e.extEnd, -1
	}
	return e.extEnd, e.extAt
}

func hostAuthorityEnd(s string, a int, strict bool) int {
	e := a
	for e < len(s) {
		c := s[e]
		if c < 0x80 {
			switch c {
			case '/', '?', '#', ' ', '\f', '\v', '"', '<', '>', '`':
				return e
			case '\\', '\t', '\n', '\r':
				if strict {
					return e
				}
			}
			e++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[e:])
		if !hostRuneOK(r) {
			return e
		}
		e += n
	}
	return e
}

func hostDropNewlines(h string) string {
	if strings.ContainsAny(h, "\t\n\r") {
		return strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(h)
	}
	return h
}

// hostRuneOK reports a non-ASCII rune that can be part of a host: a letter,
// digit or mark, or a character IDNA maps to a dot.
func hostRuneOK(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '。' || r == '．' || r == '｡'
}

// hostTrimProse drops what ends a sentence or a Markdown link after a host;
// a closing bracket stays when it closes an IPv6 literal.
func hostTrimProse(h string) string {
	for h != "" {
		c := h[len(h)-1]
		if strings.IndexByte(".,;:!?)'\"*_", c) >= 0 || c == ']' && !strings.HasPrefix(h, "[") {
			h = h[:len(h)-1]
			continue
		}
		break
	}
	return h
}

// hostCutPort cuts ":port" (or anything after the host's ':').
func hostCutPort(h string) string {
	if strings.HasPrefix(h, "[") {
		if k := strings.IndexByte(h, ']'); k >= 0 {
			return h[:k+1]
		}
		return h
	}
	if k := strings.IndexByte(h, ':'); k >= 0 {
		return h[:k]
	}
	return h
}

// A bare name found in text.
type bareMatch struct {
	raw        string
	start, end int
	prev, next byte // the bytes around it (0 at the ends)
}

// hostFindBare calls fn for every dotted token of s outside the covered
// spans: a run of letters, digits, '-', '_' and '.' (and non-ASCII letters)
// around a '.', leading and trailing dots and hyphens trimmed. The caller
// decides whether it is a host.
func hostFindBare(s string, covered func(start, end int) bool, fn func(bareMatch)) {
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], '.')
		if i < 0 {
			return
		}
		i += off
		ts := i
		for ts > 0 {
			c := s[ts-1]
			if c < 0x80 {
				if !hostNameByte(c) {
					break
				}
				ts--
				continue
			}
			r, n := utf8.DecodeLastRuneInString(s[:ts])
			if !hostRuneOK(r) || r == '。' || r == '．' || r == '｡' {
				break
			}
			ts -= n
		}
		te := i + 1
		for te < len(s) {
			c := s[te]
			if c < 0x80 {
				if !hostNameByte(c) {
					break
				}
				te++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[te:])
			if !hostRuneOK(r) || r == '。' || r == '．' || r == '｡' {
				break
			}
			te += n
		}
		off = te
		for ts < te && (s[ts] == '.' || s[ts] == '-') {
			ts++
		}
		for te > ts && (s[te-1] == '.' || s[te-1] == '-') {
			te--
		}
		if te-ts < 3 || te-ts > hostMaxLen || strings.IndexByte(s[ts:te], '.') < 0 || covered(ts, te) {
			continue
		}
		m := bareMatch{raw: s[ts:te], start: ts, end: te}
		if ts > 0 {
			m.prev = s[ts-1]
		}
		if te < len(s) {
			m.next = s[te]
		}
		fn(m)
	}
}

func hostNameByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// Top-level domains that are also common file extensions: a name under one
// of them in prose is a file ("report.md", "setup.py", "demo.mov"), not a
// host mention. In a destination field it is still a host.
var hostFileExtTLDs = map[string]bool{
	"md": true, "py": true, "rs": true, "sh": true, "pl": true, "ps": true, "zip": true, "mov": true,
	"pm": true, "pt": true, "mk": true, "am": true, "ac": true, "cc": true, "ml": true, "tf": true,
	"so": true, "st": true, "do": true, "cl": true, "sc": true, "ms": true, "as": true, "al": true,
	"gd": true, "java": true, "sv": true, "bz": true, "properties": true, "mobi": true, "in": true,
	"rar": true, "ts": true, "js": true, "go": true, "cs": true,
}

func hostFileExt(h string) bool {
	return hostFileExtTLDs[h[strings.LastIndexByte(h, '.')+1:]]
}

// Receivers that start a member access in code ("self.name", "user.email",
// "app.run"): with a TLD-looking member, a two-label name starting with one
// of these is code.
var hostCodeReceivers = map[string]bool{
	"self": true, "this": true, "os": true, "sys": true, "fmt": true, "np": true, "pd": true, "req": true,
	"res": true, "obj": true, "ctx": true, "err": true, "args": true, "opts": true, "options": true,
	"config": true, "cfg": true, "user": true, "item": true, "data": true, "event": true, "evt": true,
	"window": true, "document": true, "console": true, "math": true, "json": true, "app": true,
	"props": true, "state": true, "el": true, "elem": true, "node": true, "result": true,
	"response": true, "request": true, "module": true, "exports": true, "process": true, "torch": true,
	"model": true, "df": true, "plt": true, "msg": true, "params": true, "client": true, "server": true,
	"router": true, "db": true, "session": true, "file": true, "path": true, "str": true, "list": true,
	"dict": true, "super": true, "cls": true, "it": true, "t": true, "s": true, "r": true, "e": true,
}

// hostCodeLike reports a dotted token that reads as code or a file in prose:
// a call ("a.b.c()"), an identifier with '_' or camelCase, a member of a
// common receiver, a path component, a package@version, a file extension.
func hostCodeLike(m bareMatch, host string) bool {
	switch m.next {
	case '(', '[', '{', '=', '@', '$':
		return true
	}
	switch m.prev {
	case '/', '\\', '@', '$', '#', '=', '%', '&', '~', '-', '_', '<', '{', '[':
		return true
	}
	raw := m.raw
	if strings.IndexByte(raw, '_') >= 0 {
		return true
	}
	tld := raw[strings.LastIndexByte(raw, '.')+1:]
	if tld != strings.ToLower(tld) && tld != strings.ToUpper(tld) {
		return true // "fmt.Println", "done.It was"
	}
	for k := 1; k < len(raw); k++ {
		if raw[k-1] >= 'a' && raw[k-1] <= 'z' && raw[k] >= 'A' && raw[k] <= 'Z' {
			return true // camelCase
		}
	}
	if hostFileExt(host) {
		return true
	}
	first, rest, _ := strings.Cut(host, ".")
	if strings.IndexByte(rest, '.') < 0 && hostCodeReceivers[first] {
		return true // "self.name", "app.run"
	}
	// A member named like a generic TLD ("u.email", "item.owner.id",
	// "response.data.map") after a receiver or a one- or two-letter alias.
	return hostCodeTLDs[host[strings.LastIndexByte(host, '.')+1:]] && (hostCodeReceivers[first] || len(first) <= 2 && strings.IndexByte(rest, '.') < 0)
}

// Generic TLDs that are also common member names ("o.total", "u.email",
// "item.owner.id").
var hostCodeTLDs = map[string]bool{
	"total": true, "name": true, "email": true, "id": true, "data": true, "date": true, "style": true,
	"link": true, "page": true, "group": true, "map": true, "post": true, "run": true, "call": true,
	"open": true, "read": true, "save": true, "show": true, "play": true, "next": true, "top": true,
	"center": true, "one": true, "new": true, "info": true, "host": true, "app": true, "site": true,
	"store": true, "events": true, "docs": true, "photo": true, "photos": true, "video": true, "audio": true,
	"search": true, "select": true, "report": true, "review": true, "reviews": true, "zip": true, "phone": true,
	"click": true, "download": true, "watch": true, "fail": true, "design": true, "media": true, "news": true,
	"network": true, "support": true, "help": true, "team": true, "work": true, "tools": true, "services": true,
	"game": true, "games": true, "music": true, "life": true, "plus": true, "tax": true, "cash": true,
	"money": true, "pay": true, "free": true, "sale": true, "compare": true, "country": true, "city": true,
	"mobile": true, "social": true, "vote": true, "art": true, "auto": true, "car": true, "cars": true,
	"global": true, "world": true, "chat": true, "live": true, "love": true, "fit": true, "bar": true,
	"best": true, "zone": true, "cloud": true, "tech": true, "online": true, "shop": true, "law": true,
	"legal": true, "bank": true, "fund": true, "care": true, "health": true, "school": true, "solutions": true,
	"systems": true, "delivery": true, "deals": true, "digital": true, "ink": true, "fun": true, "pro": true,
}

func walkStrings(v any, path, field string, fn func(path, field, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, field, x)
	case map[string]any:
		for k, child := range x {
			p := path + "/" + EscapePointer(k)
			fn(p, "", k)
			walkStrings(child, p, k, fn)
		}
	case []any:
		for i, child := range x {
			walkStrings(child, path+"/"+strconv.Itoa(i), field, fn)
		}
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

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// EscapePointer escapes an object key for a JSON pointer (RFC 6901), as
// hit paths and Options.Formats keys are written.
func EscapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return pointerEscaper.Replace(k)
}

func hostIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func hostLowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// hostPercentDecode decodes %XX escapes; a '%' that starts none stays.
func hostPercentDecode(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && ipHexVal(s[i+1]) >= 0 && ipHexVal(s[i+2]) >= 0 {
			if b == nil {
				b = append(make([]byte, 0, len(s)), s[:i]...)
			}
			b = append(b, byte(ipHexVal(s[i+1])<<4|ipHexVal(s[i+2])))
			i += 2
			continue
		}
		if b != nil {
			b = append(b, s[i])
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}
