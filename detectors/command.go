package detectors

import "strings"

// The network commands whose targets are destinations, wherever a shell
// string stands. A spec says which options take a value (skipped: an output
// file is no host) and which of those values are hosts (a proxy, a jump
// host), and which positional arguments are targets.
type cmdSpec struct {
	valueShort string // short options that take a value
	hostShort  string // short options whose value is a host or URL
	valueLong  string // long options that take a value, each followed by a space
	hostLong   string // long options whose value is a host or URL
	positional int    // how many positional arguments are targets; 0: all
	colon      bool   // only [user@]host:path arguments (scp, rsync)
	remote     bool   // ssh: the words after the destination are a command
}

var cmdSpecs = map[string]*cmdSpec{
	"curl": {valueShort: "AbcCdDeEFHKmoPQrtTuUwxXYyz", hostShort: "x",
		valueLong: "output upload-file data data-raw data-binary data-ascii data-urlencode header user user-agent request cookie " +
			"cookie-jar config cacert capath cert key form form-string max-time connect-timeout retry range referer write-out " +
			"dump-header proxy-user resolve connect-to interface limit-rate output-dir trace trace-ascii stderr netrc-file json " +
			"url-query oauth2-bearer variable expand-url retry-delay retry-max-time speed-limit speed-time max-filesize ",
		hostLong: "proxy preproxy url doh-url socks4 socks4a socks5 socks5-hostname "},
	"wget": {valueShort: "oOaPiUetTwQlARDIXB", hostShort: "B",
		valueLong: "output-document output-file append-output directory-prefix input-file user-agent execute tries timeout " +
			"wait quota level accept reject domains exclude-domains include-directories exclude-directories header user " +
			"password post-data post-file body-data body-file method referer load-cookies save-cookies ca-certificate " +
			"certificate private-key config ",
		hostLong: "base "},
	"ssh":  {valueShort: "BbcDEeFIiJLlmOopQRSWw", hostShort: "J", positional: 1, remote: true},
	"scp":  {valueShort: "cFiJlOoPSX", hostShort: "J", colon: true},
	"sftp": {valueShort: "BbcDFiJlOoPRSsX", hostShort: "J", positional: 1},
	"rsync": {valueShort: "eBfTM", colon: true,
		valueLong: "rsh exclude include exclude-from include-from files-from filter log-file password-file temp-dir " +
			"partial-dir backup-dir suffix chmod chown rsync-path compare-dest copy-dest link-dest bwlimit timeout " +
			"contimeout port sockopts out-format max-size min-size block-size "},
	"nc":       {valueShort: "eciIgGmMoOpPqsTVWwXx", positional: 1},
	"ncat":     {valueShort: "eciIgGmMoOpPqsTVWwXx", positional: 1},
	"netcat":   {valueShort: "eciIgGmMoOpPqsTVWwXx", positional: 1},
	"nslookup": {positional: 2},
	"dig":      {valueShort: "bcfkpqtxy", hostShort: "qx"},
	"host":     {valueShort: "cNRtWm", positional: 2},
	"ping":     {valueShort: "ciIlmMpQsStTwWF", positional: 1},
	"ping6":    {valueShort: "ciIlmMpQsStTwWF", positional: 1},
	"ftp":      {valueShort: "P", positional: 1},
	"telnet":   {valueShort: "belLnXk", hostShort: "b", positional: 1},
}

// Words that may stand before a command in a segment, with their short
// options that take a value: "sudo -u root curl ...", "timeout 10 ping
// ...", "if ping -c1 x; then ...".
var cmdPrefixes = map[string]string{
	"sudo": "ugCDhprtTU", "doas": "uC", "env": "uSC", "exec": "a", "nohup": "", "time": "fo", "command": "",
	"builtin": "", "nice": "n", "timeout": "ks", "xargs": "EeIiLlnPsd", "torsocks": "", "proxychains": "f",
	"proxychains4": "f", "stdbuf": "ioe", "watch": "nd", "then": "", "do": "", "else": "", "if": "", "while": "",
	"until": "", "!": "", "strace": "eoPpsu", "ltrace": "eoPpsu", "unbuffer": "",
}

// cmdToken is a shell word: its text with quotes and escapes resolved, and
// the span it was written in.
type cmdToken struct {
	text       string
	start, end int
	redirect   bool // the target of < or >
}

// cmdMaxTokens bounds the words read from one command segment.
const cmdMaxTokens = 64

// cmdFind calls fn for every target of a network command in s, with the
// span of the word it was written in and the host part of it (as written:
// "user@host:path" gives "host"). A command is found where a segment
// starts (the start of s, after ; & | ( { ` a newline, a quote, a ':', a
// '$' or '!'), possibly behind then/do/if/VAR=value or a wrapper with
// options of its own (sudo -u root, timeout 10, env -i); its options are
// skipped by the command's spec, and ssh's remote command is read as a
// command too. URLs in the arguments are left to the URL finder. Only the
// separators are looked at byte by byte; words are read at segment starts.
func cmdFind(s string, fn func(t cmdToken, host string)) {
	for pos := 0; pos < len(s); {
		end := cmdSegment(s, pos, fn)
		for end < len(s) && !cmdSegTable[s[end]] {
			end++
		}
		pos = end + 1
	}
}

// cmdSegment reads the words at a segment start; if they lead to a network
// command or a prefix word (VAR=value assignments skipped), the segment is
// lexed and its targets reported. It returns where the search for the next
// segment goes on.
func cmdSegment(s string, j int, fn func(t cmdToken, host string)) int {
	for range 8 {
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		w := j
		for j < len(s) && s[j] != ' ' && s[j] != '\t' && !cmdSegTable[s[j]] {
			j++
		}
		word := s[w:j]
		if word == "" {
			return j
		}
		base := word[strings.LastIndexByte(word, '/')+1:]
		if _, prefix := cmdPrefixes[base]; prefix || cmdSpecs[base] != nil {
			toks, end := cmdLex(s, w)
			cmdTargets(toks, 0, fn)
			return max(end, j)
		}
		if !cmdAssignment(word) {
			return j
		}
	}
	return j
}

// cmdSegTable holds the bytes after which a segment starts.
var cmdSegTable = func() (t [256]bool) {
	for _, c := range []byte(";&|\n\r`({\"':$!") {
		t[c] = true
	}
	return t
}()

func cmdSep(c byte) bool {
	switch c {
	case ';', '&', '|', '\n', '\r', '`', '(', ')':
		return true
	}
	return false
}

func cmdAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	return eq > 0 && (isLetter(w[0]) || w[0] == '_')
}

func cmdNumber(w string) bool {
	for i := 0; i < len(w); i++ {
		if (w[i] < '0' || w[i] > '9') && w[i] != '.' && w[i] != 's' && w[i] != 'm' {
			return false
		}
	}
	return w != ""
}

// cmdLex reads the shell words of the segment that starts at i, up to an
// unquoted separator, a "$(" or cmdMaxTokens words. Quotes and backslash
// escapes are resolved; the word after a redirection operator is marked.
func cmdLex(s string, i int) (toks []cmdToken, end int) {
	redirect := false
	for len(toks) < cmdMaxTokens {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n') {
			i++
		}
		if i >= len(s) || cmdSep(s[i]) || s[i] == '$' && i+1 < len(s) && s[i+1] == '(' {
			return toks, i
		}
		if s[i] == '<' || s[i] == '>' {
			for i < len(s) && (s[i] == '<' || s[i] == '>' || s[i] == '&') {
				i++
			}
			redirect = true
			continue
		}
		start := i
		var b strings.Builder
		plain := true // no quote or escape: the text is s[start:i]
	word:
		for i < len(s) {
			c := s[i]
			switch {
			case c == ' ' || c == '\t' || c == '<' || c == '>' || cmdSep(c) || c == '$' && i+1 < len(s) && s[i+1] == '(':
				break word
			case c == '\'':
				if plain {
					b.WriteString(s[start:i])
					plain = false
				}
				k := strings.IndexByte(s[i+1:], '\'')
				if k < 0 {
					k = len(s) - i - 1
				}
				b.WriteString(s[i+1 : i+1+k])
				i += k + 2
			case c == '"':
				if plain {
					b.WriteString(s[start:i])
					plain = false
				}
				i++
				for i < len(s) && s[i] != '"' {
					if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
						i++
					}
					b.WriteByte(s[i])
					i++
				}
				i++
			case c == '\\' && i+1 < len(s):
				if plain {
					b.WriteString(s[start:i])
					plain = false
				}
				b.WriteByte(s[i+1])
				i += 2
			default:
				if !plain {
					b.WriteByte(c)
				}
				i++
			}
		}
		if i > len(s) {
			i = len(s)
		}
		if plain && i < len(s) && (s[i] == '<' || s[i] == '>') && cmdNumber(s[start:i]) {
			continue // the descriptor of a redirection: 2>&1
		}
		t := cmdToken{start: start, end: i, redirect: redirect}
		if plain {
			t.text = s[start:i]
		} else {
			t.text = b.String()
		}
		redirect = false
		toks = append(toks, t)
	}
	return toks, i
}

// cmdTargets applies the spec of the command toks start with (after any
// prefix words) and calls fn for each target.
func cmdTargets(toks []cmdToken, depth int, fn func(t cmdToken, host string)) {
	// Prefix words and their options, assignments.
	for len(toks) > 0 {
		w := toks[0].text
		if opts, ok := cmdPrefixes[w]; ok {
			toks = toks[1:]
			for len(toks) > 0 && strings.HasPrefix(toks[0].text, "-") {
				o := toks[0].text
				toks = toks[1:]
				if len(o) == 2 && strings.IndexByte(opts, o[1]) >= 0 && len(toks) > 0 {
					toks = toks[1:]
				}
			}
			if w == "timeout" && len(toks) > 0 && cmdNumber(toks[0].text) {
				toks = toks[1:]
			}
			continue
		}
		if cmdAssignment(w) {
			toks = toks[1:]
			continue
		}
		break
	}
	if len(toks) == 0 {
		return
	}
	name := toks[0].text
	if k := strings.LastIndexByte(name, '/'); k >= 0 {
		name = name[k+1:]
	}
	spec := cmdSpecs[name]
	if spec == nil {
		return
	}
	target := func(t cmdToken, v string) {
		if h := cmdHostOf(v); h != "" {
			fn(t, h)
		}
	}
	positional, options := 0, true
	for k := 1; k < len(toks); k++ {
		t := toks[k]
		a := t.text
		switch {
		case t.redirect:
			continue
		case options && a == "--":
			options = false
		case options && strings.HasPrefix(a, "--") && len(a) > 2:
			opt, val, inline := strings.Cut(a[2:], "=")
			isHost := strings.Contains(spec.hostLong, opt+" ")
			if !inline && (isHost || strings.Contains(spec.valueLong, opt+" ")) && k+1 < len(toks) {
				k++
				t, val = toks[k], toks[k].text
			}
			if isHost {
				target(t, val)
			}
		case options && strings.HasPrefix(a, "-") && len(a) > 1:
			for c := 1; c < len(a); c++ {
				if strings.IndexByte(spec.valueShort, a[c]) < 0 {
					continue
				}
				val, vt := a[c+1:], t
				if val == "" && k+1 < len(toks) {
					k++
					vt, val = toks[k], toks[k].text
				}
				if strings.IndexByte(spec.hostShort, a[c]) >= 0 {
					target(vt, val)
				}
				break
			}
		case name == "dig" && strings.HasPrefix(a, "@"):
			target(t, a[1:])
		case name == "dig" && strings.HasPrefix(a, "+"):
		default:
			positional++
			if spec.positional > 0 && positional > spec.positional {
				if spec.remote && depth < 2 {
					cmdTargets(toks[k:], depth+1, fn)
				}
				return
			}
			if spec.colon && !strings.ContainsAny(a, ":@") {
				continue // a local file
			}
			target(t, a)
		}
	}
}

// cmdHostOf returns the host part of a command argument: "user@host:path"
// and "host:port" give "host", "host/path" gives "host", "[v6]:port" gives
// "[v6]". A URL gives "" (the URL finder reports it).
func cmdHostOf(a string) string {
	if a == "" || strings.Contains(a, "://") {
		return ""
	}
	if k := strings.LastIndexByte(a, '@'); k >= 0 {
		a = a[k+1:]
	}
	if strings.Count(a, ":") >= 2 {
		return a // an IPv6 address
	}
	if strings.HasPrefix(a, "[") {
		if k := strings.IndexByte(a, ']'); k >= 0 {
			return a[:k+1]
		}
		return ""
	}
	if k := strings.IndexAny(a, ":/"); k >= 0 {
		a = a[:k]
	}
	return a
}
