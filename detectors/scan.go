package detectors

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Caps of one scan. A scan that reaches one reports it with a limit hit
// (see LimitHost) instead of silently seeing less: the egress rule refuses
// a host it does not allow, and "scan-limit.invalid" is never allowed
// unless a policy says so.
const (
	// MaxScanHits bounds each list of a Result. Hits past it are dropped;
	// the first host hit dropped adds the limit hit.
	MaxScanHits = 1000
	// MaxScanDepth bounds the nesting of objects and arrays walked (JSON
	// text inside a string starts again at 0, within MaxDecodeDepth).
	MaxScanDepth = 100
)

// The limit hit: a HostHit with this Host and Kind, Raw saying which limit
// was reached, Destination true in ScanArguments (false in ScanContent).
const (
	HostKindLimit = "limit"
	LimitHost     = "scan-limit.invalid"
)

// ScanArguments runs every detector over a request's arguments (or params):
// hosts and emails (destinations and mentions), secrets, paths and
// injection markers, in the values, the object keys and what decodes from
// them.
//
// A host is a destination when it is a URL's (every URL: clients fetch and
// unfurl URLs wherever they appear), a "www." name (Markdown autolinks it),
// an scp-style git remote, the target of a network command in a shell
// string, or when it stands in a destination field (url, uri, href, link,
// endpoint, host, hostname, domain, server, remote, webhook, callback, to,
// cc, bcc, recipient(s), dest(ination), target, proxy, and names ending in
// most of these: callback_url, smtp_host; address and email fields make
// emails destinations) or in an argument whose schema format says so
// (Options.Formats). Array elements inherit their array's field and format.
// Any other host is a mention: a name under a real TLD in prose, an IP
// written as a dotted quad, an email in a message body.
func ScanArguments(args any, opts Options) Result {
	return scan(args, opts, false, textDetectors{FindSecrets, FindInjection, FindPaths})
}

// ScanContent runs the detectors that apply to content a model will read
// (a tool result, resource contents): injection markers and secrets, and
// hosts and emails as mentions (Destination false) except URLs.
func ScanContent(v any, opts Options) Result {
	return scan(v, opts, true, textDetectors{FindSecrets, FindInjection, FindPaths})
}

// textDetectors are the other engineers' detectors a scan calls on every
// string (a seam: tests of the driver pass their own).
type textDetectors struct {
	secrets   func(field, s string) []SecretMatch
	injection func(s string) []InjectionMatch
	paths     func(field, s string, opts Options) []PathHit
}

func scan(v any, opts Options, content bool, det textDetectors) Result {
	sc := newScanner(opts, content)
	sc.det = det
	sc.walk(v, scanCtx{level: levelDest}, 0)
	return sc.res
}

type scanner struct {
	det           textDetectors
	opts          Options
	content       bool
	injectionOnly bool // InjectionJSON: no hosts, emails or secrets
	maxDepth      int  // decodings
	maxBytes      int  // decoded bytes
	decoded       int
	res           Result
	hosts         map[hostKey]struct{}
	emails        map[EmailHit]struct{}
	secrets       map[SecretHit]struct{}
	inject        map[InjectionHit]struct{}
	paths         map[string]struct{}
	limits        map[string]bool
	spans         []scanSpan // the spans of s earlier host finders claimed: sorted, merged
	claims        []scanSpan // the spans the running finder claims
}

type hostKey struct {
	path, host, kind, field string
	dest                    bool
}

type scanSpan struct{ start, end int }

// scanCtx is where a value stands.
type scanCtx struct {
	path    string // JSON pointer of the value
	schema  string // the pointer Options.Formats is keyed by (array indices left out)
	field   string // the last object key on the path
	dest    bool   // a destination field or format: hosts and emails are destinations
	email   bool   // an address field: emails are destinations
	level   int    // how sure a destination field is that its whole value is a host
	split   string // the URL a split host field assembles to
	host    string // the host a split host field assembles to
	chain   string // the decodings that led here
	decodes int
	fixed   bool // inside JSON decoded from a string: the path stays the string's
	mention bool // a JWT's claims: every host is a mention
}

func newScanner(opts Options, content bool) *scanner {
	sc := &scanner{opts: opts, content: content, maxDepth: opts.MaxDecodeDepth, maxBytes: opts.MaxDecodedBytes}
	if sc.maxDepth <= 0 {
		sc.maxDepth = DefaultMaxDecodeDepth
	}
	if sc.maxBytes <= 0 {
		sc.maxBytes = DefaultMaxDecodedBytes
	}
	sc.res = Result{Hosts: []HostHit{}, Emails: []EmailHit{}, Secrets: []SecretHit{}, Paths: []PathHit{}, Injection: []InjectionHit{}}
	return sc
}

func (sc *scanner) walk(v any, c scanCtx, depth int) {
	if depth > MaxScanDepth {
		sc.limit(c.path, "nesting deeper than "+strconv.Itoa(MaxScanDepth)+" levels was not scanned")
		return
	}
	switch x := v.(type) {
	case string:
		sc.scanString(x, c)
	case json.Number:
		if c.dest {
			sc.wholeHost(string(x), c)
		}
	case float64:
		if c.dest {
			sc.wholeHost(strconv.FormatFloat(x, 'f', -1, 64), c)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // hits come out in the same order on every scan
		split := splitOf(x)
		for _, k := range keys {
			child := sc.enterKey(c, k)
			sc.role(&child)
			if split.ok && splitHostKey(k) && !sc.content {
				if raw, host := split.assemble(x[k]); raw != "" {
					child.split, child.host, child.dest, child.email, child.level = raw, host, true, true, levelName
				}
			}
			sc.walk(x[k], child, depth+1)
		}
	case []any:
		for i, item := range x {
			ic := c
			if !c.fixed {
				ic.path = c.path + "/" + strconv.Itoa(i)
			}
			sc.walk(item, ic, depth+1)
		}
	}
}

// enterKey scans an object key (keys are text too) and returns the
// context of its value.
func (sc *scanner) enterKey(c scanCtx, k string) scanCtx {
	child := scanCtx{path: c.path, field: k, level: levelDest, chain: c.chain, decodes: c.decodes,
		fixed: c.fixed, mention: c.mention}
	if !c.fixed {
		child.path += "/" + EscapePointer(k)
	}
	if sc.opts.Formats != nil {
		child.schema = c.schema + "/" + EscapePointer(k)
	}
	sc.scanString(k, scanCtx{path: child.path, level: levelDest, chain: c.chain, decodes: c.decodes,
		fixed: c.fixed, mention: c.mention})
	return child
}

// role sets what the field (and the argument's schema format) make of a
// value.
func (sc *scanner) role(c *scanCtx) {
	if sc.content {
		return
	}
	switch fieldRoleOf(c.field) {
	case roleDest:
		c.dest, c.email = true, true
	case roleEmail:
		c.email = true
	}
	if c.chain != "" || sc.opts.Formats == nil {
		return
	}
	switch sc.opts.Formats[c.schema] {
	case "uri", "uri-reference", "iri", "iri-reference", "email", "idn-email":
		c.dest, c.email = true, true
	case "hostname", "idn-hostname":
		c.dest, c.email, c.level = true, true, levelName
	}
}

func (sc *scanner) scanString(s string, c scanCtx) {
	if sc.json(s, c) {
		return
	}
	if !sc.injectionOnly {
		sc.findHosts(s, c)
		for _, m := range sc.det.secrets(c.field, s) {
			sc.addSecret(SecretHit{Kind: m.Kind, Path: c.path, Redacted: m.Redacted, Decoded: c.chain})
		}
	}
	for _, m := range sc.det.injection(s) {
		sc.addInjection(InjectionHit{Kind: m.Kind, Path: c.path, Decoded: c.chain})
	}
	if !sc.content {
		for _, p := range sc.det.paths(c.field, s, sc.opts) {
			p.Arg, p.Decoded = c.path, c.chain
			sc.addPath(p)
		}
	}
	sc.decode(s, c)
}

// findHosts reports the hosts and emails of one string: the whole value of
// a destination field, then URLs, command targets, emails and scp-style
// remotes, bare names and IP addresses, each in text the earlier ones did
// not claim.
func (sc *scanner) findHosts(s string, c scanCtx) {
	if c.dest && sc.wholeHost(s, c) {
		return
	}
	sc.spans, sc.claims = sc.spans[:0], sc.claims[:0]
	hostFindURLs(s, func(m urlMatch) {
		sc.claims = append(sc.claims, scanSpan{m.start, m.end})
		for _, raw := range m.hosts() {
			if h := normalizeHost(raw); h.host != "" {
				sc.host(c, h, m.raw, m.kind())
			}
		}
	})
	sc.claim()
	cmdFind(s, func(t cmdToken, host string) {
		if h := normalizeHost(host); h.ip || hostAccept(h, levelDest) {
			sc.claims = append(sc.claims, scanSpan{t.start, t.end})
			sc.host(c, h, s[t.start:t.end], HostKindCommand)
		}
	})
	sc.claim()
	emailFind(s, sc.covered, func(m atMatch) {
		h := normalizeHost(m.domain)
		if m.git {
			if h.ip || hostAccept(h, levelDest) {
				sc.claims = append(sc.claims, scanSpan{m.start, m.end})
				sc.host(c, h, m.raw, HostKindGit)
			}
			return
		}
		level := levelProse
		if c.email {
			level = levelDest
		}
		if h.ip && !m.literal || !h.ip && !hostAccept(h, level) {
			return // "node@22.1.0" is a version; an address literal is [192.0.2.1]
		}
		sc.claims = append(sc.claims, scanSpan{m.start, m.end})
		dest := c.email && !c.mention
		sc.addEmail(EmailHit{Address: m.local + "@" + h.host, Domain: h.host, Path: c.path, Field: c.field,
			Destination: dest, Decoded: c.chain})
		sc.addHostHit(HostHit{Host: h.host, Unicode: h.unicode, Lookalike: h.lookalike, Raw: hostCutRaw(m.raw), Kind: HostKindEmail,
			Path: c.path, Field: c.field, Destination: dest, Decoded: c.chain})
	})
	sc.claim()
	hostFindBare(s, sc.covered, func(m bareMatch) {
		if c.dest && (m.prev == '/' || m.prev == '\\') {
			return // a path component
		}
		h := normalizeHost(m.raw)
		switch {
		case !h.ok:
		case h.ip:
			if ipIsDottedQuad(m.raw) { // "1.2.3" in prose is a version
				sc.host(c, h, m.raw, HostKindIP)
			}
		case c.dest && hostAccept(h, levelDest):
			sc.host(c, h, m.raw, HostKindHostname)
		case hostAccept(h, levelProse) && !hostCodeLike(m, h.host):
			kind := HostKindHostname
			if strings.HasPrefix(h.host, "www.") {
				kind = HostKindURL // Markdown (GFM) autolinks www. names
			}
			sc.host(c, h, m.raw, kind)
		}
	})
	ipFind6(s, sc.covered, func(start, end int, a netip.Addr) {
		sc.host(c, hostName{host: a.String(), ip: true, ok: true}, s[start:end], HostKindIP)
	})
}

// wholeHost reports a host that is the whole value of a destination field
// ("evil.example", "evil.example:443/x", "2130706433", "[::1]"). An email
// or a URL is left to the finders.
func (sc *scanner) wholeHost(s string, c scanCtx) bool {
	v := strings.TrimSpace(s)
	if v == "" || len(v) > 300 || strings.ContainsAny(v, " \t\r\n@") || strings.Contains(v, "://") {
		return false
	}
	if c.host != "" {
		v = c.host
	}
	var h hostName
	if a, ok := ipParse6(v); ok {
		h = hostName{host: a.String(), ip: true, ok: true}
	} else {
		if k := strings.IndexAny(v, `/?#\`); k >= 0 {
			v = v[:k]
		}
		v = hostCutPort(v)
		if v == "" || v[0] == '.' {
			return false
		}
		h = normalizeHost(v)
		if !h.ip && !hostAccept(h, c.level) || h.ip && ipNumberShaped(v) && c.split == "" && !fieldNamesHost(c.field) {
			return false // {"to": "12345"} is an account, {"host": "2130706433"} an address
		}
	}
	kind, raw := HostKindHostname, s
	if h.ip {
		kind = HostKindIP
	}
	if c.split != "" {
		kind, raw = HostKindSplit, c.split
	}
	sc.host(c, h, raw, kind)
	return true
}

// host adds a host hit (and the other reading of an IPv4 address with
// leading zeros) with the destination its kind and context give it.
func (sc *scanner) host(c scanCtx, h hostName, raw, kind string) {
	dest := false
	switch {
	case c.mention:
	case kind == HostKindURL:
		dest = true
	case kind == HostKindGit || kind == HostKindCommand:
		dest = !sc.content
	default:
		dest = c.dest
	}
	hit := HostHit{Host: h.host, Unicode: h.unicode, Lookalike: h.lookalike, Raw: hostCutRaw(raw), Kind: kind, Path: c.path,
		Field: c.field, Destination: dest, Decoded: c.chain}
	sc.addHostHit(hit)
	if h.alt != "" {
		hit.Host = h.alt
		sc.addHostHit(hit)
	}
}

// claim adds the spans the last finder claimed to the spans later finders
// skip, kept sorted and merged so that covered is a binary search (a
// string with a hundred thousand URLs must not cost a hundred thousand
// comparisons per later match).
func (sc *scanner) claim() {
	if len(sc.claims) == 0 {
		return
	}
	sc.spans = append(sc.spans, sc.claims...)
	sc.claims = sc.claims[:0]
	slices.SortFunc(sc.spans, func(a, b scanSpan) int { return a.start - b.start })
	merged := sc.spans[:1]
	for _, sp := range sc.spans[1:] {
		if last := &merged[len(merged)-1]; sp.start <= last.end {
			last.end = max(last.end, sp.end)
		} else {
			merged = append(merged, sp)
		}
	}
	sc.spans = merged
}

// covered reports whether [start, end) overlaps a claimed span.
func (sc *scanner) covered(start, end int) bool {
	i, _ := slices.BinarySearchFunc(sc.spans, start, func(sp scanSpan, p int) int {
		if sp.end <= p {
			return -1
		}
		return 1
	})
	return i < len(sc.spans) && sc.spans[i].start < end
}

// addHostHit keeps one hit per path, host, kind, field and destination: the
// first found, so a plain hit wins over the same host decoded again.
func (sc *scanner) addHostHit(h HostHit) {
	k := hostKey{h.Path, h.Host, h.Kind, h.Field, h.Destination}
	if _, dup := sc.hosts[k]; dup {
		return
	}
	if len(sc.res.Hosts)-len(sc.limits) >= MaxScanHits {
		sc.limit(h.Path, "more than "+strconv.Itoa(MaxScanHits)+" host hits")
		return
	}
	if sc.hosts == nil {
		sc.hosts = make(map[hostKey]struct{})
	}
	sc.hosts[k] = struct{}{}
	sc.res.Hosts = append(sc.res.Hosts, h)
}

// limit adds the limit hit for a reason, once per scan and reason.
func (sc *scanner) limit(path, reason string) {
	if sc.limits[reason] {
		return
	}
	if sc.limits == nil {
		sc.limits = make(map[string]bool)
	}
	sc.limits[reason] = true
	sc.res.Hosts = append(sc.res.Hosts, HostHit{Host: LimitHost, Raw: "detector limit: " + reason, Kind: HostKindLimit,
		Path: path, Destination: !sc.content})
}

// addEmail, addSecret, addInjection and addPath keep the first of equal
// hits, Decoded aside: a decoded repeat of a plain hit is no news.
func (sc *scanner) addEmail(e EmailHit) {
	k := e
	k.Decoded = ""
	if _, dup := sc.emails[k]; dup || len(sc.res.Emails) >= MaxScanHits {
		return
	}
	if sc.emails == nil {
		sc.emails = make(map[EmailHit]struct{})
	}
	sc.emails[k] = struct{}{}
	sc.res.Emails = append(sc.res.Emails, e)
}

func (sc *scanner) addSecret(h SecretHit) {
	k := h
	k.Decoded = ""
	if _, dup := sc.secrets[k]; dup || len(sc.res.Secrets) >= MaxScanHits {
		return
	}
	if sc.secrets == nil {
		sc.secrets = make(map[SecretHit]struct{})
	}
	sc.secrets[k] = struct{}{}
	sc.res.Secrets = append(sc.res.Secrets, h)
}

func (sc *scanner) addInjection(h InjectionHit) {
	k := h
	k.Decoded = ""
	if _, dup := sc.inject[k]; dup || len(sc.res.Injection) >= MaxScanHits {
		return
	}
	if sc.inject == nil {
		sc.inject = make(map[InjectionHit]struct{})
	}
	sc.inject[k] = struct{}{}
	sc.res.Injection = append(sc.res.Injection, h)
}

func (sc *scanner) addPath(p PathHit) {
	k := p.Arg + "\x00" + p.Path
	if _, dup := sc.paths[k]; dup || len(sc.res.Paths) >= MaxScanHits {
		return
	}
	if sc.paths == nil {
		sc.paths = make(map[string]struct{})
	}
	sc.paths[k] = struct{}{}
	sc.res.Paths = append(sc.res.Paths, p)
}

// json scans a string that holds a JSON object or array as that value
// (its fields then give their values roles), and reports whether it did.
// Past the decode depth it adds the limit hit and leaves s to be scanned
// as text.
func (sc *scanner) json(s string, c scanCtx) bool {
	t := strings.TrimSpace(s)
	if len(t) < 2 || !(t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
		return false
	}
	if len(t) > sc.maxBytes-sc.decoded {
		// Decoding it would cost memory in proportion to its size; it is
		// still scanned as text, and the limit hit says so.
		sc.limit(c.path, "JSON text larger than the decode budget was scanned as text only")
		return false
	}
	var v any
	d := json.NewDecoder(strings.NewReader(t))
	d.UseNumber()
	if d.Decode(&v) != nil || d.More() {
		return false
	}
	sc.decoded += len(t)
	if c.decodes >= sc.maxDepth {
		sc.depthLimit(c.path)
		return false
	}
	n := c
	n.decodes++
	n.chain = encJSON
	if c.chain != "" {
		n.chain = c.chain + ">" + encJSON
	}
	n.fixed = true
	sc.walk(v, n, 0)
	return true
}

// decode finds the encoded texts in s (data: URLs, %XX and \xXX
// escapes, base64 and hex runs) and scans what they decode to, within the
// depth and byte budgets.
func (sc *scanner) decode(s string, c scanCtx) {
	if len(s) < 3 {
		return
	}
	next := c
	next.decodes++
	via := func(enc string) scanCtx {
		n := next
		if c.chain == "" {
			n.chain = enc
		} else {
			n.chain = c.chain + ">" + enc
		}
		return n
	}
	var payloads []scanSpan
	decFindDataURLs(s, func(d dataURL) {
		payloads = append(payloads, scanSpan{d.start, d.end})
		if d.base64 {
			run := hostPercentDecode(d.payload)
			if b, ok := decBase64(run, true); ok && decText(b, true) {
				sc.decodeRun(run, false, via(encData))
			}
			return
		}
		if out := hostPercentDecode(d.payload); decText([]byte(out), false) {
			sc.scanDecoded(out, via(encData))
		}
	})
	decEscapedTokens(s, func(start, end int, pct bool) {
		tok := s[start:end]
		if c.decodes >= sc.maxDepth && !decObfuscating(tok) {
			return // "a%20b" three decodings deep is no reason to stop
		}
		if pct {
			if out := hostPercentDecode(tok); out != tok && decText([]byte(out), false) {
				sc.scanDecoded(out, via(encPercent))
			}
		} else if out := decUnescapeHex(tok); out != tok && decText([]byte(out), false) {
			sc.scanDecoded(out, via(encHex))
		}
	})
	decFindRuns(s, func(r decRun) {
		for len(payloads) > 0 && payloads[0].end <= r.start {
			payloads = payloads[1:] // runs and payloads both come in order
		}
		if len(payloads) > 0 && payloads[0].start < r.end {
			return // decoded as a data: URL already
		}
		run := s[r.start:r.end]
		if r.hex {
			if b, ok := decHexBytes(run, true); ok && decText(b, true) {
				sc.decodeRun(run, true, via(encHex))
				return
			}
		}
		if b, ok := decBase64(run, true); ok && decText(b, true) {
			n := via(encBase64)
			n.mention = n.mention || r.jwt
			sc.decodeRun(run, false, n)
		}
	})
}

// decodeRun decodes a run whose start decoded to text, and scans it.
func (sc *scanner) decodeRun(run string, hex bool, c scanCtx) {
	size := len(run) * 3 / 4
	if hex {
		size = len(run) / 2
	}
	if !sc.budget(size, c) {
		return
	}
	var b []byte
	var ok bool
	if hex {
		b, ok = decHexBytes(run, false)
	} else {
		b, ok = decBase64(run, false)
	}
	if ok && decText(b, false) {
		sc.scanString(string(b), c)
	}
}

// scanDecoded scans a decoded text, within the budgets.
func (sc *scanner) scanDecoded(text string, c scanCtx) {
	if sc.budget(len(text), c) {
		sc.scanString(text, c)
	}
}

// budget charges n decoded bytes; it reports false (and adds the limit
// hit) past the depth or byte budget.
func (sc *scanner) budget(n int, c scanCtx) bool {
	if c.decodes > sc.maxDepth {
		sc.depthLimit(c.path)
		return false
	}
	if sc.decoded+n > sc.maxBytes {
		sc.limit(c.path, "more than "+strconv.Itoa(sc.maxBytes)+" bytes to decode")
		return false
	}
	sc.decoded += n
	return true
}

func (sc *scanner) depthLimit(path string) {
	sc.limit(path, "encoded text nested deeper than "+strconv.Itoa(sc.maxDepth)+" decodings")
}

// Roles a field name gives its value.
type fieldRole uint8

const (
	roleNone  fieldRole = iota
	roleDest            // hosts and emails in it are destinations
	roleEmail           // emails in it are destinations
)

var fieldExact = map[string]fieldRole{
	"url": roleDest, "urls": roleDest, "uri": roleDest, "uris": roleDest, "href": roleDest, "link": roleDest,
	"links": roleDest, "endpoint": roleDest, "endpoints": roleDest, "host": roleDest, "hosts": roleDest,
	"hostname": roleDest, "hostnames": roleDest, "domain": roleDest, "domains": roleDest, "server": roleDest,
	"servers": roleDest, "remote": roleDest, "webhook": roleDest, "webhooks": roleDest, "callback": roleDest,
	"to": roleDest, "cc": roleDest, "bcc": roleDest, "recipient": roleDest, "recipients": roleDest,
	"dest": roleDest, "destination": roleDest, "destinations": roleDest, "target": roleDest, "targets": roleDest,
	"proxy": roleDest, "address": roleEmail, "addresses": roleEmail, "email": roleEmail, "emails": roleEmail,
	"emailaddress": roleEmail, "emailaddresses": roleEmail, "replyto": roleEmail, "noproxy": roleNone,
}

// Endings of compound field names that make a destination field:
// callback_url, redirectUri, smtp-host, apiServer, to_recipients.
var fieldSuffixes = [][]byte{
	[]byte("url"), []byte("urls"), []byte("uri"), []byte("uris"), []byte("href"), []byte("link"), []byte("links"),
	[]byte("endpoint"), []byte("endpoints"), []byte("host"), []byte("hosts"), []byte("hostname"), []byte("domain"),
	[]byte("domains"), []byte("server"), []byte("servers"), []byte("webhook"), []byte("callback"),
	[]byte("recipient"), []byte("recipients"), []byte("destination"), []byte("proxy"),
}

// fieldName normalizes a field name into buf: lower case, '_', '-', '.'
// and ' ' dropped, its last len(buf) bytes kept (whole is false when it
// was longer).
func fieldName(field string, buf *[40]byte) (name []byte, whole bool) {
	n := len(buf)
	for i := len(field) - 1; i >= 0; i-- {
		c := field[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		if n == 0 {
			return buf[:], false
		}
		n--
		buf[n] = c
	}
	return buf[n:], true
}

// fieldRoleOf names a field's role, case-insensitively and with '_', '-',
// '.' and ' ' ignored.
func fieldRoleOf(field string) fieldRole {
	if field == "" {
		return roleNone
	}
	var buf [40]byte
	name, whole := fieldName(field, &buf)
	if whole {
		if r, ok := fieldExact[string(name)]; ok {
			return r
		}
	}
	for _, suf := range fieldSuffixes {
		if len(name) > len(suf) && bytes.HasSuffix(name, suf) {
			if bytes.HasPrefix(name, []byte("no")) && bytes.Equal(suf, []byte("proxy")) {
				return roleNone // no_proxy lists hosts not to proxy
			}
			return roleDest
		}
	}
	return roleNone
}

// fieldNamesHost reports a destination field whose name says its value is
// a host (host, smtp_host, server, domain, remote): any spelling of an IPv4
// address in it is one, "127.1" and "2130706433" included. In other
// destination fields (to, target, url) "12345", "1.2" and "1.2.3" read as
// numbers and versions.
func fieldNamesHost(field string) bool {
	var buf [40]byte
	name, _ := fieldName(field, &buf)
	if string(name) == "remote" {
		return true
	}
	for _, suf := range fieldHostNames {
		if bytes.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

var fieldHostNames = [][]byte{
	[]byte("host"), []byte("hosts"), []byte("hostname"), []byte("hostnames"), []byte("server"), []byte("servers"),
	[]byte("domain"), []byte("domains"),
}

// A split host: sibling fields that together name a place
// ({"scheme":"https","host":"evil.example","port":443}).
type splitParts struct {
	ok                  bool
	scheme, port, under string
}

func splitOf(m map[string]any) splitParts {
	if len(m) < 2 {
		return splitParts{}
	}
	var p splitParts
	for k, v := range m {
		switch strings.ToLower(k) {
		case "scheme", "protocol", "proto":
			if s, ok := v.(string); ok {
				p.scheme = strings.TrimRight(s, ":/")
			}
		case "port":
			p.port = scalarString(v)
		case "subdomain":
			if s, ok := v.(string); ok {
				p.under = strings.Trim(s, ".")
			}
		}
	}
	p.ok = p.scheme != "" || p.port != "" || p.under != ""
	return p
}

func splitHostKey(k string) bool {
	switch strings.ToLower(k) {
	case "host", "hostname", "domain", "server":
		return true
	}
	return false
}

// assemble returns the URL the parts name with host value v, and the host.
func (p splitParts) assemble(v any) (raw, host string) {
	host = scalarString(v)
	if host == "" || strings.Contains(host, "://") {
		return "", ""
	}
	if p.under != "" {
		host = p.under + "." + host
	}
	raw = host
	if p.port != "" {
		raw += ":" + p.port
	}
	if p.scheme != "" {
		raw = p.scheme + "://" + raw
	}
	return raw, host
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}
