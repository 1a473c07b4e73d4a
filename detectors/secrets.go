package detectors

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
)

// Kinds of secret (SecretMatch.Kind, SecretHit.Kind).
const (
	SecretKindAWSAccessKey = "aws_access_key" // AKIA/ASIA + 16
	SecretKindAWSSecretKey = "aws_secret_key" // 40 base64 chars, only beside an AWS name or an access key id
	SecretKindGitHubToken  = "github_token"   // ghp_ gho_ ghu_ ghs_ ghr_ github_pat_
	SecretKindGitLabToken  = "gitlab_token"   // glpat-
	SecretKindSlackToken   = "slack_token"    // xoxb- xoxp- xoxa- xoxr- xoxs- xoxe- xapp-
	SecretKindSlackWebhook = "slack_webhook"  // hooks.slack.com/services/T…/B…/…
	SecretKindStripeKey    = "stripe_key"     // sk_live_ rk_live_
	SecretKindGoogleAPIKey = "google_api_key" // AIza + 35
	SecretKindOpenAIKey    = "openai_key"     // sk-proj- sk-svcacct- sk-admin- sk-…
	SecretKindAnthropicKey = "anthropic_key"  // sk-ant-
	SecretKindNPMToken     = "npm_token"      // npm_ + 36
	SecretKindPrivateKey   = "private_key"    // -----BEGIN … PRIVATE KEY----- with a body
	SecretKindJWT          = "jwt"            // eyJ….….… whose header is JSON with "alg"
	SecretKindPassword     = "password"       // the value of a password-named field or key
	SecretKindHighEntropy  = "high_entropy"   // a random-looking value of a secret-named field or key
)

// SecretMatch is a secret found in a string: its kind, its byte range, and
// a redacted form that is safe to log.
type SecretMatch struct {
	Kind       string
	Start, End int
	Redacted   string
}

// SecretMask is the whole Redacted of a secret too short to show any of.
const SecretMask = "********"

// secMaxMatches caps the matches FindSecrets returns for one string.
const secMaxMatches = 100

// secMaxCandidates caps the candidates one pass collects before overlaps
// are resolved, so a string made of thousands of tokens stays linear.
const secMaxCandidates = 4 * secMaxMatches

// secPublicPrefixes are the kind prefixes Redacted may show in full: they
// name the kind of a token, none of its secret part. Everything else a
// Redacted shows of the secret is at most its last 4 bytes.
var secPublicPrefixes = []string{
	"AKIA", "ASIA",
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"glpat-",
	"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xapp-",
	"https://hooks.slack.com/services/", "http://hooks.slack.com/services/", "hooks.slack.com/services/",
	"sk_live_", "rk_live_",
	"AIza",
	"sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-",
	"npm_",
	"eyJ",
	"-----BEGIN PRIVATE KEY-----",
	"-----BEGIN RSA PRIVATE KEY-----",
	"-----BEGIN EC PRIVATE KEY-----",
	"-----BEGIN DSA PRIVATE KEY-----",
	"-----BEGIN OPENSSH PRIVATE KEY-----",
	"-----BEGIN ENCRYPTED PRIVATE KEY-----",
	"-----BEGIN PGP PRIVATE KEY BLOCK-----",
}

// FindSecrets returns the secrets in s. field is the property name s stood
// in (a secret-ish name such as "api_key" makes a high-entropy value a hit).
// Matches are ordered by Start, never overlap (a token recognised by its
// shape wins over the same text recognised by its name), at most 100.
//
// Shaped tokens (provider prefixes such as AKIA…, ghp_…, sk-ant-…; JWTs
// whose header decodes to JSON with "alg"; PEM private key blocks with a
// body; Slack webhook URLs) are found anywhere in s, unless their random
// part is a placeholder (xxxx, EXAMPLE, your-…, runs). A value without a
// shape is reported only next to a name that says it is secret: field
// itself, or an inline NAME=value, NAME: value, "name": "value" or
// Authorization: Bearer … inside s (a .env file, JSON text, a header, a
// command line). Names are judged by their last word (secClassifyName). A
// password-named value is a password unless it is a word, a placeholder, a
// reference or code; any other secret-named value must look random
// (secLooksRandom: a token alphabet; not a placeholder, reference, URL,
// path, e-mail address, UUID, number or identifier; the entropy of
// secEntropyThreshold). An AWS secret access key (40 base64 characters) is
// reported under an AWS secret name or within 512 bytes of an access key
// id.
//
// Redacted is the kind's public prefix (secPublicPrefixes) or nothing, "…",
// and the last 4 bytes of the secret (3 when it is under 24 bytes, none
// under 12); a secret without a prefix and under 12 bytes is SecretMask.
//
// Each trigger is found with strings.IndexByte on a byte that is rare in
// prose (_ - A J : =), so a megabyte of text without secrets costs a few
// SIMD passes; every candidate is checked in time bounded by its own
// length, and each pass resumes after what it consumed.
func FindSecrets(field, s string) []SecretMatch {
	var c secCollector
	c.s = s
	c.scanUnderscore()
	c.scanDash()
	c.scanUpperA()
	c.scanJWT()
	c.scanAssign('=')
	c.scanAssign(':')
	c.scanField(field)
	c.scanAWSSecretNearKeyID()
	return c.result()
}

// secCandidate is a match with the priority that settles overlaps: a
// token recognised by its own shape beats a value recognised by its name.
type secCandidate struct {
	m        SecretMatch
	priority int // 0 shaped token, 1 aws secret key, 2 named value
}

type secCollector struct {
	s     string
	cands []secCandidate
	n     int // candidates of the current pass
}

func (c *secCollector) full() bool { return c.n >= secMaxCandidates }

func (c *secCollector) add(kind string, start, end int, prefix string, priority int) {
	if start < 0 || end > len(c.s) || start >= end {
		return
	}
	c.addRedacted(kind, start, end, secRedact(c.s[start:end], prefix), priority)
}

func (c *secCollector) addRedacted(kind string, start, end int, redacted string, priority int) {
	if c.cands == nil {
		c.cands = make([]secCandidate, 0, 4)
	}
	c.cands = append(c.cands, secCandidate{
		m:        SecretMatch{Kind: kind, Start: start, End: end, Redacted: redacted},
		priority: priority,
	})
	c.n++
}

// result drops candidates that overlap a better one, sorts by offset and
// caps the count.
func (c *secCollector) result() []SecretMatch {
	if len(c.cands) == 0 {
		return nil
	}
	slices.SortStableFunc(c.cands, func(a, b secCandidate) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.m.Start, b.m.Start),
			cmp.Compare(b.m.End-b.m.Start, a.m.End-a.m.Start))
	})
	// Kept matches never overlap, so they stay sorted by Start in a
	// separate slice and each new candidate is checked by binary search.
	var kept []SecretMatch
	for _, cd := range c.cands {
		i := sort.Search(len(kept), func(i int) bool { return kept[i].End > cd.m.Start })
		if i < len(kept) && kept[i].Start < cd.m.End {
			continue // overlaps a kept match of higher or equal priority
		}
		kept = append(kept, SecretMatch{})
		copy(kept[i+1:], kept[i:])
		kept[i] = cd.m
	}
	if len(kept) > secMaxMatches {
		kept = kept[:secMaxMatches]
	}
	return kept
}

// secRedact returns prefix + "…" + the last bytes of span: 4 of a long
// secret, 3 of a medium one, none of a short one (a short secret without a
// public prefix is SecretMask). prefix must be one of secPublicPrefixes
// and a prefix of span, or "".
func secRedact(span, prefix string) string {
	body := len(span) - len(prefix)
	tail := 0
	switch {
	case body >= 24:
		tail = 4
	case body >= 12:
		tail = 3
	}
	if strings.HasPrefix(prefix, "-----BEGIN") {
		tail = 0 // the end of a PEM block is its footer: nothing to recognise
	}
	if tail == 0 && prefix == "" {
		return SecretMask
	}
	t := span[len(span)-tail:]
	for i := 0; i < len(t); i++ {
		if t[i] >= 0x80 || t[i] < 0x21 {
			t = "" // never cut a multi-byte character or show blanks
			break
		}
	}
	return prefix + "…" + t
}

// ---- byte classes ----

func secIsAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
func secIsUpperDigit(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
func secIsB64URL(c byte) bool     { return secIsAlnum(c) || c == '-' || c == '_' }
func secIsB64Std(c byte) bool     { return secIsAlnum(c) || c == '+' || c == '/' }
func secIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// secRun returns the end of the run of bytes in class starting at i, looking
// at no more than limit bytes.
func secRun(s string, i, limit int, class func(byte) bool) int {
	end := len(s)
	if limit > 0 && i+limit < end {
		end = i + limit
	}
	j := i
	for j < end && class(s[j]) {
		j++
	}
	return j
}

// secLeftBoundary reports whether a token may start at i: it is not the
// continuation of a longer alphanumeric word.
func secLeftBoundary(s string, i int) bool { return i == 0 || !secIsAlnum(s[i-1]) }

// ---- shaped tokens ----

// scanUnderscore finds the prefixes whose separator is '_': ghp_ gho_ ghu_
// ghs_ ghr_ npm_ github_pat_ sk_live_ rk_live_.
func (c *secCollector) scanUnderscore() {
	s := c.s
	c.n = 0
	for off := 0; off < len(s) && !c.full(); {
		k := strings.IndexByte(s[off:], '_')
		if k < 0 {
			return
		}
		i := off + k
		off = i + 1
		switch {
		case i >= 3 && secLeftBoundary(s, i-3) && isGitHubOrNPM(s[i-3:i]):
			start := i - 3
			body := i + 1
			end := secRun(s, body, 300, secIsAlnum)
			kind, minLen, maxLen := SecretKindGitHubToken, 36, 251
			if s[start:i] == "npm" {
				kind, minLen, maxLen = SecretKindNPMToken, 36, 40
			}
			if n := end - body; n >= minLen && n <= maxLen && secTokenBody(s[body:end]) {
				c.add(kind, start, end, s[start:body], 0)
			}
			off = max(off, end)
		case i >= 6 && s[i-6:i] == "github" && strings.HasPrefix(s[i:], "_pat_") && secLeftBoundary(s, i-6):
			start, body := i-6, i+5
			end := secRun(s, body, 300, func(b byte) bool { return secIsAlnum(b) || b == '_' })
			if end-body >= 30 && secTokenBody(s[body:end]) {
				c.add(SecretKindGitHubToken, start, end, "github_pat_", 0)
			}
			off = max(off, end)
		case i >= 2 && (s[i-2:i] == "sk" || s[i-2:i] == "rk") && strings.HasPrefix(s[i:], "_live_") && secLeftBoundary(s, i-2):
			start, body := i-2, i+6
			end := secRun(s, body, 300, secIsAlnum)
			if end-body >= 16 && secTokenBody(s[body:end]) {
				c.add(SecretKindStripeKey, start, end, s[start:body], 0)
			}
			off = max(off, end)
		}
	}
}

func isGitHubOrNPM(p string) bool {
	switch p {
	case "ghp", "gho", "ghu", "ghs", "ghr", "npm":
		return true
	}
	return false
}

// scanDash finds the prefixes whose separator is '-' (sk-, sk-ant-,
// sk-proj-, glpat-, xoxb-, xapp-, ...) and PEM private key blocks.
func (c *secCollector) scanDash() {
	s := c.s
	c.n = 0
	for off := 0; off < len(s) && !c.full(); {
		k := strings.IndexByte(s[off:], '-')
		if k < 0 {
			return
		}
		i := off + k
		off = i + 1
		switch {
		case strings.HasPrefix(s[i:], "-----BEGIN "):
			off = max(off, c.privateKey(i))
		case i >= 2 && s[i-2:i] == "sk" && secLeftBoundary(s, i-2):
			off = max(off, c.skKey(i-2))
		case i >= 5 && s[i-5:i] == "glpat" && secLeftBoundary(s, i-5):
			start, body := i-5, i+1
			end := secRun(s, body, 300, func(b byte) bool { return secIsB64URL(b) || b == '.' })
			for end > body && s[end-1] == '.' {
				end--
			}
			if end-body >= 20 && secTokenBody(s[body:end]) {
				c.add(SecretKindGitLabToken, start, end, "glpat-", 0)
			}
			off = max(off, end)
		case i >= 4 && secLeftBoundary(s, i-4) && isSlackPrefix(s[i-4:i]):
			start, body := i-4, i+1
			end := secRun(s, body, 300, func(b byte) bool { return secIsAlnum(b) || b == '-' })
			if b := s[body:end]; len(b) >= 20 && strings.ContainsAny(b, "0123456789") && secTokenBody(b) {
				c.add(SecretKindSlackToken, start, end, s[start:body], 0)
			}
			off = max(off, end)
		}
	}
}

func isSlackPrefix(p string) bool {
	switch p {
	case "xoxb", "xoxp", "xoxa", "xoxr", "xoxs", "xoxe", "xapp":
		return true
	}
	return false
}

// skKey handles "sk-" at start: Anthropic (sk-ant-), OpenAI project,
// service-account and admin keys, and OpenAI's older sk-<48>. It returns
// where the scan resumes.
func (c *secCollector) skKey(start int) int {
	s := c.s
	body := start + 3
	end := secRun(s, body, 400, secIsB64URL)
	kind, prefix, minBody := SecretKindOpenAIKey, "sk-", 32
	switch {
	case strings.HasPrefix(s[body:end], "ant-"):
		kind, prefix, minBody = SecretKindAnthropicKey, "sk-ant-", 32
	case strings.HasPrefix(s[body:end], "proj-"):
		prefix, minBody = "sk-proj-", 20
	case strings.HasPrefix(s[body:end], "svcacct-"):
		prefix, minBody = "sk-svcacct-", 20
	case strings.HasPrefix(s[body:end], "admin-"):
		prefix, minBody = "sk-admin-", 20
	}
	b := s[start+len(prefix) : end]
	if len(b) < minBody || !secTokenBody(b) {
		return end
	}
	// An unmarked sk-… must look like a random key, not a kebab-case slug:
	// upper, lower and digits, and the entropy of a random string.
	if prefix == "sk-" && (!secMixedCase(b) || secEntropy(b) < 3.5) {
		return end
	}
	c.add(kind, start, end, prefix, 0)
	return end
}

// privateKey handles "-----BEGIN " at i: a PEM private key header followed
// by a base64 body (a header alone, or a body of "...", is documentation).
func (c *secCollector) privateKey(i int) int {
	s := c.s
	rest := s[i:]
	var header string
	for _, p := range secPublicPrefixes {
		if strings.HasPrefix(p, "-----BEGIN") && strings.HasPrefix(rest, p) {
			header = p
			break
		}
	}
	if header == "" {
		return i + len("-----BEGIN ")
	}
	j := i + len(header)
	// Skip blanks (real or JSON-escaped newlines) and RFC 1421 header lines
	// (Proc-Type:, DEK-Info:, Version:, Comment:).
	for lines := 0; j < len(s) && lines < 6; {
		j = secSkipPEMBlank(s, j)
		e := secRun(s, j, 200, func(b byte) bool { return b != '\n' && b != '\r' && b != '\\' })
		if strings.IndexByte(s[j:e], ':') < 0 {
			break
		}
		j = e
		lines++
	}
	bodyEnd := secRun(s, j, 4096, func(b byte) bool { return secIsB64Std(b) || b == '=' })
	if bodyEnd-j < 40 || !secTokenBody(s[j:min(bodyEnd, j+64)]) {
		return j
	}
	end := bodyEnd
	const maxBlock = 64 << 10
	if k := strings.Index(s[j:min(len(s), j+maxBlock)], "-----END "); k >= 0 {
		e := j + k + len("-----END ")
		if f := strings.Index(s[e:min(len(s), e+64)], "-----"); f >= 0 {
			end = e + f + 5
		}
	} else {
		// No footer: the body is every base64 line that follows.
		for end < len(s) && end < j+maxBlock {
			k := secSkipPEMBlank(s, end)
			e := secRun(s, k, 4096, func(b byte) bool { return secIsB64Std(b) || b == '=' })
			if e == k {
				break
			}
			end = e
		}
	}
	c.add(SecretKindPrivateKey, i, end, header, 0)
	return end
}

func secSkipPEMBlank(s string, j int) int {
	for j < len(s) {
		switch {
		case secIsSpace(s[j]):
			j++
		case s[j] == '\\' && j+1 < len(s) && (s[j+1] == 'n' || s[j+1] == 'r'):
			j += 2
		default:
			return j
		}
	}
	return j
}

// scanUpperA finds AWS access key ids (AKIA/ASIA + 16 upper-case letters
// and digits) and Google API keys (AIza + 35).
func (c *secCollector) scanUpperA() {
	s := c.s
	c.n = 0
	for off := 0; off < len(s) && !c.full(); {
		k := strings.IndexByte(s[off:], 'A')
		if k < 0 {
			return
		}
		i := off + k
		off = i + 1
		if i+4 > len(s) || !secLeftBoundary(s, i) {
			continue
		}
		switch p := s[i : i+4]; p {
		case "AKIA", "ASIA":
			end := secRun(s, i+4, 17, secIsUpperDigit)
			if end-i != 20 || end < len(s) && secIsAlnum(s[end]) {
				continue
			}
			b := s[i+4 : end]
			if strings.HasSuffix(b, "EXAMPLE") || !secTokenBody(b) || secEntropy(b) < 2.5 {
				continue
			}
			c.add(SecretKindAWSAccessKey, i, end, p, 0)
			off = end
		case "AIza":
			end := secRun(s, i+4, 36, secIsB64URL)
			if end-i != 39 || end < len(s) && secIsB64URL(s[end]) {
				continue
			}
			if b := s[i+4 : end]; !secTokenBody(b) || secEntropy(b) < 3.0 {
				continue
			}
			c.add(SecretKindGoogleAPIKey, i, end, p, 0)
			off = end
		}
	}
}

// scanJWT finds JWTs: "eyJ" at a token start, two or more base64url
// segments separated by dots, the first decoding to a JSON object with an
// "alg" member (JWS, and JWE with its five segments).
func (c *secCollector) scanJWT() {
	s := c.s
	c.n = 0
	isSeg := secIsB64URL
	for off := 0; off < len(s) && !c.full(); {
		k := strings.IndexByte(s[off:], 'J')
		if k < 0 {
			return
		}
		j := off + k
		off = j + 1
		start := j - 2
		if start < 0 || s[start] != 'e' || s[start+1] != 'y' || start > 0 && (isSeg(s[start-1]) || s[start-1] == '.') {
			continue
		}
		h := secRun(s, start, 2048, isSeg)
		off = max(off, h)
		if h-start < 10 || h >= len(s) || s[h] != '.' {
			continue
		}
		p := secRun(s, h+1, 16<<10, isSeg)
		if p-(h+1) < 2 {
			continue
		}
		off = max(off, p)
		if !secJWTHeader(s[start:h]) {
			continue
		}
		end, sig := p, 0
		if p < len(s) && s[p] == '.' {
			end = secRun(s, p+1, 4096, isSeg)
			sig = end - (p + 1)
			if end == p+1 {
				end = p + 1 // unsecured JWT: "header.payload."
			}
			// JWE: two more segments.
			for seg := 0; seg < 2 && end < len(s) && s[end] == '.' && end+1 < len(s) && isSeg(s[end+1]); seg++ {
				end = secRun(s, end+1, 16<<10, isSeg)
			}
		}
		off = max(off, end)
		// The tail shown is the signature's; an unsecured or JWE token
		// shows none (its last segment is the payload or a tag).
		redacted := "eyJ…"
		if sig >= 16 && s[p] == '.' && end == p+1+sig {
			redacted += s[end-4 : end]
		}
		c.addRedacted(SecretKindJWT, start, end, redacted, 0)
	}
}

func secJWTHeader(seg string) bool {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return false
	}
	var hdr map[string]json.RawMessage
	if json.Unmarshal(b, &hdr) != nil {
		return false
	}
	alg, ok := hdr["alg"]
	return ok && len(alg) > 0 && alg[0] == '"'
}

// ---- named values ----

// secNameClass is what a property or variable name says about its value.
type secNameClass int

const (
	secNameNone     secNameClass = iota
	secNameGeneric               // secret, token, api_key, authorization, cookie, ...
	secNamePassword              // password, passwd, pwd, pass, passphrase
	secNameAWS                   // aws_secret_access_key and the like
)

// secClassifyName decides from the last word(s) of a name: "db_password"
// and "GITHUB_TOKEN" are secret-ish, "password_length", "token_url",
// "secret_name", "next_page_token" and "author" are not. The name is split
// into words at separators and camelCase humps.
func secClassifyName(name string) (secNameClass, bool) {
	if len(name) < 3 || len(name) > 64 || !secNameEnds[secEnding(name)] {
		return secNameNone, false
	}
	var buf [64]byte
	var starts [16]int // word w is buf[starts[w]:starts[w+1]] (the last ends at n)
	nw, n := 0, 0
	inWord := false
	for i := 0; i < len(name); i++ {
		b := name[i]
		lower := b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
		upper := b >= 'A' && b <= 'Z'
		if !lower && !upper {
			inWord = false
			continue
		}
		boundary := !inWord
		if upper && inWord {
			p := name[i-1]
			switch {
			case p >= 'a' && p <= 'z' || p >= '0' && p <= '9':
				boundary = true // camelCase hump
			case i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z':
				boundary = true // "APIKey": the K starts a word
			}
		}
		if boundary {
			if nw == len(starts) {
				return secNameNone, false
			}
			starts[nw] = n
			nw++
		}
		if upper {
			b += 'a' - 'A'
		}
		buf[n] = b
		n++
		inWord = true
	}
	if nw == 0 {
		return secNameNone, false
	}
	word := func(w int) string {
		e := n
		if w+1 < nw {
			e = starts[w+1]
		}
		return string(buf[starts[w]:e])
	}
	joined := string(buf[:n])
	last, prev := word(nw-1), ""
	if nw >= 2 {
		prev = word(nw - 2)
	}
	// Opaque values that are not secrets: pagination cursors, CSRF tokens.
	for _, x := range []string{"pagetoken", "nexttoken", "continuationtoken", "synctoken", "resumetoken", "paginationtoken", "cursor", "csrf", "xsrf"} {
		if strings.Contains(joined, x) {
			return secNameNone, false
		}
	}
	auth := false
	switch last {
	case "password", "passwd", "pwd", "pass", "passphrase", "passcode":
		return secNamePassword, false
	case "authorization", "auth", "bearer":
		auth = true
	}
	if strings.HasSuffix(joined, "password") || strings.HasSuffix(joined, "passwd") || strings.HasSuffix(joined, "passphrase") {
		return secNamePassword, false
	}
	generic := auth
	switch last {
	case "secret", "secrets", "token", "tokens", "credential", "credentials", "creds",
		"cookie", "cookies", "session", "sessionid", "sid", "jwt", "apikey", "accesskey",
		"privatekey", "secretkey", "signingkey", "encryptionkey", "masterkey", "authkey":
		generic = true
	case "key":
		switch prev {
		case "api", "access", "private", "secret", "signing", "encryption", "master", "client", "app",
			"auth", "service", "webhook", "hmac", "license", "subscription", "admin", "root", "x":
			generic = true
		}
	case "id":
		generic = prev == "session"
	}
	if !generic {
		for _, suf := range []string{"secret", "token", "apikey", "accesskey", "privatekey", "secretkey", "credentials", "authorization"} {
			if strings.HasSuffix(joined, suf) {
				generic = true
				break
			}
		}
	}
	if !generic {
		return secNameNone, false
	}
	if strings.Contains(joined, "secretaccesskey") || strings.Contains(joined, "aws") && strings.Contains(joined, "secret") {
		return secNameAWS, auth
	}
	return secNameGeneric, auth
}

// secNameEnds holds the last two letters (lower case, packed by
// secEnding) of every secret-ish name: a cheap test that rejects most
// names ("first:", "href=") before they are split into words.
var secNameEnds = func() (set [1 << 10]bool) {
	for _, w := range []string{"password", "passwd", "pwd", "pass", "passphrase", "passcode", "secret",
		"secrets", "token", "tokens", "credential", "credentials", "creds", "cookie", "cookies", "session",
		"sessionid", "sid", "jwt", "key", "authorization", "auth", "bearer"} {
		set[secEnding(w)] = true
	}
	return set
}()

// secEnding packs the last two bytes of name, ASCII letters folded to
// lower case, into 10 bits.
func secEnding(name string) int {
	a, b := name[len(name)-2]|0x20, name[len(name)-1]|0x20
	return int(a&0x1f)<<5 | int(b&0x1f)
}

// scanAssign finds NAME=value (sep '=') or NAME: value / "name": "value"
// (sep ':') where NAME is secret-ish, and Slack webhook URLs (at the ':' of
// their scheme).
func (c *secCollector) scanAssign(sep byte) {
	s := c.s
	c.n = 0
	for off := 0; off < len(s) && !c.full(); {
		k := strings.IndexByte(s[off:], sep)
		if k < 0 {
			return
		}
		i := off + k
		off = i + 1
		if sep == ':' {
			if strings.HasPrefix(s[i:], "://") {
				off = max(off, c.slackWebhook(i))
				continue
			}
			if i+1 < len(s) && (s[i+1] == ':' || s[i+1] == '=') || i > 0 && s[i-1] == ':' {
				continue // "::", ":=" (the '=' pass takes it)
			}
		} else {
			if i+1 < len(s) && s[i+1] == '=' {
				off = i + 2 // "=="
				continue
			}
			if i > 0 && strings.IndexByte("=!<>+-*/%&|^~", s[i-1]) >= 0 {
				continue // comparison or compound assignment
			}
		}
		nameStart, nameEnd := secNameBefore(s, i, sep)
		if nameStart == nameEnd {
			continue
		}
		class, auth := secClassifyName(s[nameStart:nameEnd])
		if class == secNameNone {
			continue
		}
		query := nameStart > 0 && (s[nameStart-1] == '?' || s[nameStart-1] == '&')
		vs, ve, next := secValueAfter(s, i+1, sep == ':', query)
		off = max(off, next)
		if vs == ve {
			continue
		}
		vs, ve = secStripAuthScheme(s, vs, ve, auth)
		c.namedValue(class, vs, ve)
	}
}

// secNameBefore returns the name that ends before the separator at i:
// spaces, a closing quote (or \" in JSON inside a string) and ':' of ":="
// are skipped; the name is [A-Za-z0-9_.-]+, leading dashes (--password)
// and dots dropped.
func secNameBefore(s string, i int, sep byte) (int, int) {
	j := i
	if sep == '=' && j > 0 && s[j-1] == ':' {
		j--
	}
	for n := 0; j > 0 && n < 8 && (s[j-1] == ' ' || s[j-1] == '\t'); n++ {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'' || s[j-1] == '`') {
		j--
		if j > 0 && s[j-1] == '\\' {
			j--
		}
	}
	end := j
	for n := 0; j > 0 && n < 64; n++ {
		b := s[j-1]
		if !(secIsAlnum(b) || b == '_' || b == '-' || b == '.') {
			break
		}
		j--
	}
	if end-j >= 64 {
		return 0, 0
	}
	for j < end && (s[j] == '-' || s[j] == '.') {
		j++
	}
	return j, end
}

// secValueAfter returns the value that starts after a separator at i
// (spaces skipped; quoted up to its closing quote on the same line, else up
// to a blank or one of , ; ) } ] < > quotes, and & in a URL query) and
// where the scan resumes.
func secValueAfter(s string, i int, colon, query bool) (int, int, int) {
	j := i
	for n := 0; j < len(s) && n < 8 && (s[j] == ' ' || s[j] == '\t'); n++ {
		j++
	}
	if j >= len(s) {
		return j, j, j
	}
	const maxValue = 4096
	q := s[j]
	esc := false
	if q == '\\' && j+1 < len(s) && s[j+1] == '"' {
		esc, q = true, '"'
		j++
	}
	if q == '"' || q == '\'' || q == '`' {
		vs := j + 1
		limit := min(len(s), vs+maxValue)
		for e := vs; e < limit; e++ {
			switch b := s[e]; {
			case b == '\n' || b == '\r':
				return vs, vs, e
			case b == '\\' && !esc && e+1 < limit:
				e++ // an escaped character inside the quotes
			case b == '\\' && esc && e+1 < limit && s[e+1] == '"':
				return vs, e, e + 2
			case b == q && !esc:
				return vs, e, e + 1
			}
		}
		return vs, vs, limit
	}
	if colon && (q == '{' || q == '[') {
		return j, j, j + 1
	}
	vs := j
	e := vs
	for e < len(s) && e < vs+maxValue && !secIsSpace(s[e]) && strings.IndexByte(",;)}]<>\"'`", s[e]) < 0 && !(query && s[e] == '&') {
		e++
	}
	return vs, e, e
}

// secStripAuthScheme drops an HTTP authentication scheme ("Bearer ",
// "Basic ", "token ") from a value: the credential is what follows.
func secStripAuthScheme(s string, vs, ve int, auth bool) (int, int) {
	v := s[vs:ve]
	for _, scheme := range []string{"Bearer", "Basic", "Token", "Bot", "Digest"} {
		if len(v) > len(scheme) && strings.EqualFold(v[:len(scheme)], scheme) && secIsSpace(v[len(scheme)]) {
			j := vs + len(scheme)
			for j < ve && secIsSpace(s[j]) {
				j++
			}
			return j, ve
		}
		if auth && strings.EqualFold(v, scheme) {
			// "Authorization: Bearer xyz" unquoted: the value stopped at the
			// blank after the scheme; the token is the next word.
			j := ve
			for j < len(s) && j < ve+8 && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			e := j
			for e < len(s) && e < j+4096 && !secIsSpace(s[e]) && strings.IndexByte(",;)}]<>\"'`", s[e]) < 0 {
				e++
			}
			return j, e
		}
	}
	return vs, ve
}

// namedValue reports s[vs:ve] if it looks like a secret for a name of class.
func (c *secCollector) namedValue(class secNameClass, vs, ve int) {
	v := c.s[vs:ve]
	switch class {
	case secNamePassword:
		if secLooksPassword(v) {
			c.add(SecretKindPassword, vs, ve, "", 2)
		}
	case secNameAWS:
		if secLooksAWSSecret(v) {
			c.add(SecretKindAWSSecretKey, vs, ve, "", 1)
		} else if secLooksRandom(v) {
			c.add(SecretKindHighEntropy, vs, ve, "", 2)
		}
	case secNameGeneric:
		if secLooksRandom(v) {
			c.add(SecretKindHighEntropy, vs, ve, "", 2)
		}
	}
}

// scanField judges s as the value of field: the whole (trimmed, unquoted)
// string, after an auth scheme; a cookie field is judged pair by pair.
func (c *secCollector) scanField(field string) {
	c.n = 0
	class, _ := secClassifyName(field)
	if class == secNameNone {
		return
	}
	s := c.s
	vs, ve := 0, len(s)
	for vs < ve && secIsSpace(s[vs]) {
		vs++
	}
	for ve > vs && secIsSpace(s[ve-1]) {
		ve--
	}
	if ve-vs >= 2 && (s[vs] == '"' || s[vs] == '\'') && s[ve-1] == s[vs] {
		vs, ve = vs+1, ve-1
	}
	if lf := strings.ToLower(field); strings.HasSuffix(lf, "cookie") || strings.HasSuffix(lf, "cookies") {
		c.cookiePairs(vs, ve)
		return
	}
	vs, ve = secStripAuthScheme(s, vs, ve, false)
	if vs < ve {
		c.namedValue(class, vs, ve)
	}
}

// cookiePairs judges each value of "a=b; c=d" (a Cookie header).
func (c *secCollector) cookiePairs(vs, ve int) {
	s := c.s
	for i := vs; i < ve && !c.full(); {
		e := ve
		if k := strings.IndexByte(s[i:ve], ';'); k >= 0 {
			e = i + k
		}
		if eq := strings.IndexByte(s[i:e], '='); eq >= 0 {
			a := i + eq + 1
			b := e
			for a < b && s[a] == ' ' {
				a++
			}
			if b-a >= 2 && s[a] == '"' && s[b-1] == '"' {
				a, b = a+1, b-1
			}
			if secLooksRandom(s[a:b]) {
				c.add(SecretKindHighEntropy, a, b, "", 2)
			}
		}
		i = e + 1
		for i < ve && s[i] == ' ' {
			i++
		}
	}
}

// slackWebhook handles the "://" at i of https://hooks.slack.com/services/
// T…/B…/secret (and /workflows/). It returns where the scan resumes.
func (c *secCollector) slackWebhook(i int) int {
	s := c.s
	const host = "://hooks.slack.com/"
	if !strings.HasPrefix(s[i:], host) {
		return i + 3
	}
	start := i
	for start > 0 && start > i-5 && s[start-1] >= 'a' && s[start-1] <= 'z' {
		start--
	}
	scheme := s[start:i]
	if scheme != "https" && scheme != "http" {
		start = i + 3
	}
	p := i + len(host)
	path := s[p:]
	var kindPath string
	switch {
	case strings.HasPrefix(path, "services/"):
		kindPath = "services/"
	case strings.HasPrefix(path, "workflows/"), strings.HasPrefix(path, "triggers/"):
		kindPath = path[:strings.IndexByte(path, '/')+1]
	default:
		return p
	}
	end := secRun(s, p+len(kindPath), 256, func(b byte) bool { return secIsAlnum(b) || b == '/' })
	parts := strings.Split(strings.TrimRight(s[p+len(kindPath):end], "/"), "/")
	last := parts[len(parts)-1]
	if len(parts) < 3 || len(last) < 16 || !secTokenBody(last) {
		return end
	}
	prefix := s[start : p+len(kindPath)]
	if kindPath != "services/" {
		prefix = "" // only the services/ forms are listed as public prefixes
	}
	c.add(SecretKindSlackWebhook, start, end, prefix, 0)
	return end
}

// scanAWSSecretNearKeyID reports 40-character base64 strings within 512
// bytes of an AWS access key id (an AWS credentials CSV or a config line
// pairs them without names).
func (c *secCollector) scanAWSSecretNearKeyID() {
	s := c.s
	c.n = 0
	var ids [][2]int
	for _, cd := range c.cands {
		if cd.m.Kind == SecretKindAWSAccessKey {
			ids = append(ids, [2]int{cd.m.Start, cd.m.End})
		}
	}
	from := 0
	for _, id := range ids {
		lo, hi := max(from, id[0]-512), min(len(s), id[1]+512)
		for j := lo; j < hi && !c.full(); {
			if !secIsB64Std(s[j]) {
				j++
				continue
			}
			e := secRun(s, j, 41, secIsB64Std)
			if e-j == 40 && (j == 0 || !secIsB64Std(s[j-1]) && s[j-1] != '=') &&
				(e == len(s) || !secIsB64Std(s[e]) && s[e] != '=') && secLooksAWSSecret(s[j:e]) {
				c.add(SecretKindAWSSecretKey, j, e, "", 1)
			}
			j = secRun(s, e, hi-e, secIsB64Std)
		}
		from = hi
	}
}

// ---- value tests ----

// secTokenBody rejects the random part of a shaped token that is a
// placeholder: ghp_xxxxxxxx…, sk-your-key-here, AKIA…EXAMPLE. It uses only
// the strong signs (secStrongPlaceholders, runs), so that a real random
// body is rejected with a probability below 1e-4.
func secTokenBody(b string) bool {
	return !secPlaceholder(b, secStrongPlaceholdersB, false)
}

// secStrongPlaceholders are substrings (compared in lower case) of
// placeholders that a random token contains with negligible probability.
var secStrongPlaceholders = []string{
	"xxxx", "****", "....", "example", "changeme", "change_me", "change-me", "placeholder",
	"your", "replace", "redacted", "<", ">", "${", "{{", "}}", "•",
}

// secWeakPlaceholders are further words of placeholders and test values;
// a value named secret-ish is judged with both lists.
var secWeakPlaceholders = []string{
	"insert", "dummy", "sample", "fake", "test", "mock", "demo", "foobar", "here", "notreal",
	"not_real", "not-real", "todo", "fixme", "%(",
}

// secReferencePrefixes start values that name a secret kept elsewhere.
var secReferencePrefixes = []string{
	"$", "%", "@", "!", "&", "*", "env:", "env.", "process.env", "os.environ", "os.getenv", "getenv", "secrets.",
	"vars.", "ssm:", "vault:", "arn:", "op://", "sm://", "ref+", "!ref", "!sub", "data:", "file:",
}

// secIsPlaceholder is the full test for a named value: both word lists,
// references, literals (null, none, true, ...) and runs.
func secIsPlaceholder(v string) bool {
	return secPlaceholder(v, secStrongPlaceholdersB, true)
}

var (
	secStrongPlaceholdersB = secBytesList(secStrongPlaceholders)
	secWeakPlaceholdersB   = secBytesList(secWeakPlaceholders)
	secReferencePrefixesB  = secBytesList(secReferencePrefixes)
)

func secBytesList(ws []string) [][]byte {
	out := make([][]byte, len(ws))
	for i, w := range ws {
		out[i] = []byte(w)
	}
	return out
}

func secPlaceholder(v string, words [][]byte, named bool) bool {
	if v == "" {
		return true
	}
	var buf [256]byte
	var lv []byte
	if len(v) <= len(buf) {
		lv = buf[:copy(buf[:], v)]
	} else {
		lv = []byte(v)
	}
	for i, b := range lv {
		if b >= 'A' && b <= 'Z' {
			lv[i] = b + 'a' - 'A'
		}
	}
	for _, w := range words {
		if bytes.Contains(lv, w) {
			return true
		}
	}
	if named {
		for _, w := range secWeakPlaceholdersB {
			if bytes.Contains(lv, w) {
				return true
			}
		}
		for _, p := range secReferencePrefixesB {
			if bytes.HasPrefix(lv, p) {
				return true
			}
		}
		switch string(lv) {
		case "none", "null", "nil", "undefined", "true", "false", "required", "optional", "string":
			return true
		}
	}
	// Runs: 5 of one character, or 6 consecutive letters or digits going
	// up or down (abcdef, 123456, 987654).
	same, up, down := 1, 1, 1
	for i := 1; i < len(lv); i++ {
		a, b := lv[i-1], lv[i]
		if b == a {
			same++
		} else {
			same = 1
		}
		if b == a+1 && secIsAlnum(a) && secIsAlnum(b) {
			up++
		} else {
			up = 1
		}
		if b+1 == a && secIsAlnum(a) && secIsAlnum(b) {
			down++
		} else {
			down = 1
		}
		if same >= 5 || up >= 6 || down >= 6 {
			return true
		}
	}
	return false
}

// secEntropy is the Shannon entropy of s in bits per byte.
func secEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	var cnt [256]int
	for i := 0; i < len(s); i++ {
		cnt[s[i]]++
	}
	h, n := 0.0, float64(len(s))
	for _, k := range cnt {
		if k > 0 {
			p := float64(k) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// secEntropyThreshold is the entropy a value of n bytes must reach to count
// as random. The numbers are the 1st percentile of the entropy of uniformly
// random strings of that length (measured over 100,000 draws each,
// rounded down), so 99% of real random secrets pass; for lower-case
// alphanumeric (base36, the poorest alphabet of common tokens):
// n=16 3.15, 20 3.41, 24 3.61, 32 3.90, 40 4.11; for hex: 16 2.66,
// 20 2.90, 24 3.04, 32 3.26, 40 3.41, 64 3.63. Repetitive strings stay
// below: "hunter2hunter2hunter2" 2.81, "changeme-changeme" 2.91,
// "aaaabbbbccccdddd" 2.0. Entropy does not separate random strings from
// words at these lengths ("REPLACE_WITH_YOUR_TOKEN" 3.85,
// "getUserSessionToken" 3.37): secWordLike and the placeholder list do.
func secEntropyThreshold(n int, hex bool) float64 {
	if hex {
		switch {
		case n >= 32:
			return 3.2
		case n >= 24:
			return 3.0
		default:
			return 2.6
		}
	}
	switch {
	case n >= 40:
		return 4.0
	case n >= 32:
		return 3.8
	case n >= 24:
		return 3.5
	case n >= 20:
		return 3.3
	default:
		return 3.1
	}
}

// secLooksRandom is the test for a value named secret-ish: 16 to 4096
// bytes of a token alphabet (letters, digits, - _ . ~ + / = %; not code
// such as "SessionState{ID:"), not a placeholder or reference, URL, path,
// e-mail address, UUID, number or date, not word-like, and with the
// entropy of a random string of its length and alphabet.
func secLooksRandom(v string) bool {
	if len(v) < 16 || len(v) > 4096 || !secTokenAlphabet(v) || secIsPlaceholder(v) || secNotSecretShape(v) {
		return false
	}
	// Numbers, dates and versions are not secrets: a hex value needs a
	// letter, any other value three.
	letters, hex := 0, true
	for i := 0; i < len(v); i++ {
		b := v[i]
		if b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' {
			letters++
		}
		if !(b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F') {
			hex = false
		}
	}
	if hex && letters == 0 || !hex && letters < 3 || secWordLike(v) {
		return false
	}
	return secEntropy(v) >= secEntropyThreshold(len(v), hex)
}

// secLooksPassword is the test for a value named password: 6 to 256
// printable bytes without blanks, not a placeholder or reference (${X},
// !vault), not a word (letters only: "required", "string", "Password"),
// not code ("cfg.Password", "headers[") or a variable's name
// (OSSRH_PASSWORD), and not a run of one or two characters.
func secLooksPassword(v string) bool {
	if len(v) < 6 || len(v) > 256 || !secPrintable(v) || secIsPlaceholder(v) || secNotSecretShape(v) {
		return false
	}
	onlyLetters := true
	for i := 0; i < len(v); i++ {
		if b := v[i] | 0x20; b < 'a' || b > 'z' {
			onlyLetters = false
			break
		}
	}
	// An identifier without a digit names a variable (OSSRH_PASSWORD,
	// MAVEN_GPG_PASSPHRASE); "hunter2" and "passw0rd" stay passwords.
	if !onlyLetters && !strings.ContainsAny(v, "0123456789") && secWordLike(v) {
		return false
	}
	return !onlyLetters && secEntropy(v) >= 2.0
}

// secLooksAWSSecret: 40 base64 characters with upper and lower case and a
// digit or / or + (not a hex SHA-1, not a word), random enough.
func secLooksAWSSecret(v string) bool {
	if len(v) != 40 {
		return false
	}
	var upper, lower, other bool
	for i := 0; i < len(v); i++ {
		switch b := v[i]; {
		case b >= 'A' && b <= 'Z':
			upper = true
		case b >= 'a' && b <= 'z':
			lower = true
		case b >= '0' && b <= '9' || b == '/' || b == '+':
			other = true
		default:
			return false
		}
	}
	return upper && lower && other && !secIsPlaceholder(v) && secEntropy(v) >= 4.0
}

func secTokenAlphabet(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; !secIsAlnum(b) && strings.IndexByte("-_.~+/=%", b) < 0 {
			return false
		}
	}
	return true
}

func secPrintable(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

func secMixedCase(v string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(v); i++ {
		switch b := v[i]; {
		case b >= 'A' && b <= 'Z':
			upper = true
		case b >= 'a' && b <= 'z':
			lower = true
		case b >= '0' && b <= '9':
			digit = true
		}
	}
	return upper && lower && digit
}

// secNotSecretShape recognises values whose shape says what they are: a
// URL, a path, an e-mail address, a UUID, code (a call, an index, a
// composite literal, a selector such as opts.PerRPCCreds).
func secNotSecretShape(v string) bool {
	switch {
	case strings.Contains(v, "://"), strings.ContainsAny(v, "()[]{}"), secIsSelector(v):
		return true
	case strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/"):
		return true
	case v[0] == '/' && strings.Count(v, "/") >= 2 && !strings.ContainsAny(v, "+="):
		return true // an absolute path; a base64 value that starts with / rarely has a second / and no + or =
	case len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/'):
		return true
	case secIsUUID(v), secIsEmail(v):
		return true
	}
	return false
}

// secIsSelector reports a dotted path of two or more identifiers
// (v1.AuthenticationToken, payload.AccessKeyID, C.ICMPV6_FILTER_PASS):
// code, not a token (base64 and hex have no dots; JWTs are found by their
// own shape).
func secIsSelector(v string) bool {
	if strings.IndexByte(v, '.') < 0 {
		return false
	}
	for seg := range strings.SplitSeq(v, ".") {
		if seg == "" || !(seg[0] == '_' || seg[0]|0x20 >= 'a' && seg[0]|0x20 <= 'z') {
			return false
		}
		for i := 1; i < len(seg); i++ {
			if !secIsAlnum(seg[i]) && seg[i] != '_' {
				return false
			}
		}
	}
	return true
}

// secIsEmail: local@domain.tld with a letters-only TLD.
func secIsEmail(v string) bool {
	at := strings.LastIndexByte(v, '@')
	if at <= 0 {
		return false
	}
	d := v[at+1:]
	dot := strings.LastIndexByte(d, '.')
	if dot <= 0 || len(d)-dot-1 < 2 {
		return false
	}
	for i := 0; i < len(d); i++ {
		b := d[i]
		if !(secIsAlnum(b) || b == '-' || b == '.') || i > dot && !(b|0x20 >= 'a' && b|0x20 <= 'z') {
			return false
		}
	}
	return true
}

func secIsUUID(v string) bool {
	if len(v) == 38 && v[0] == '{' && v[37] == '}' {
		v = v[1:37]
	}
	if len(v) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		b := v[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if b != '-' {
				return false
			}
		} else if !(b >= '0' && b <= '9' || b|0x20 >= 'a' && b|0x20 <= 'f') {
			return false
		}
	}
	return true
}

// secWordLike reports identifiers and phrases: words separated by
// - _ . / : = or written in camelCase (getUserSessionToken,
// REPLACE_WITH_YOUR_TOKEN, correct-horse-battery-staple,
// selectedJWTCallCreds, oauth2-secret-token). Each segment must split into
// humps: a lower-case word, a capitalised word, an acronym (capitals
// before a capitalised word or at the end), and may start or end with a
// number of at most 3 digits; every hump of two or more letters holds a
// vowel (or y), except a lower-case acronym of up to 4 letters that is a
// whole segment (mcp-client-secret). A random string fails on a digit
// inside a segment, a capital before a digit, or a hump without a vowel.
func secWordLike(v string) bool {
	for i := 0; i < len(v); i++ {
		b := v[i]
		if !secIsAlnum(b) && strings.IndexByte("-_./:=", b) < 0 {
			return false
		}
	}
	for seg := range strings.FieldsFuncSeq(v, func(r rune) bool { return strings.ContainsRune("-_./:=", r) }) {
		if !secHumps(seg) {
			return false
		}
	}
	return true
}

func secHumps(s string) bool {
	isLower := func(b byte) bool { return b >= 'a' && b <= 'z' }
	isUpper := func(b byte) bool { return b >= 'A' && b <= 'Z' }
	isDigit := func(b byte) bool { return b >= '0' && b <= '9' }
	run := func(i int, f func(byte) bool) int {
		for i < len(s) && f(s[i]) {
			i++
		}
		return i
	}
	for i := 0; i < len(s); {
		switch b := s[i]; {
		case isDigit(b):
			j := run(i, isDigit)
			if j-i > 3 || i > 0 && j < len(s) {
				return false // digits only at the start or end of a segment
			}
			i = j
		case isLower(b):
			j := run(i, isLower)
			if j-i >= 2 && !secHasVowel(s[i:j]) && !(i == 0 && j == len(s) && j <= 4) {
				return false
			}
			i = j
		default: // upper
			j := run(i, isUpper)
			if j < len(s) && isLower(s[j]) {
				// Capitals then lower case: the last capital starts a word,
				// the ones before it are an acronym.
				k := run(j, isLower)
				if !secHasVowel(s[j-1 : k]) {
					return false
				}
				i = k
			} else {
				if j-i < 2 {
					return false // a lone capital before a digit or the end
				}
				i = j
			}
		}
	}
	return true
}

func secHasVowel(w string) bool {
	for i := 0; i < len(w); i++ {
		switch w[i] | 0x20 {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			return true
		}
	}
	return false
}
