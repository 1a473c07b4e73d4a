package airlock_test.rules.egress

import data.airlock_test.lib

# refused(dec): the hosts named by egress violations.
refused(dec, hosts) := {h |
	some v in dec.violations
	v.rule == "egress.host_not_allowed"
	some h in hosts
	contains(v.message, sprintf("%q", [h]))
}

hosts := [
	"github.com", "api.github.com", "raw.githubusercontent.com",
	"a.b.githubusercontent.com", "githubusercontent.com",
	"evilgithubusercontent.com", "example.org", "docs.internal.example",
]

cases := {
	"absent allow_hosts: rule off": {"data": {}, "refused": set()},
	"null allow_hosts: rule off": {"data": {"allow_hosts": null}, "refused": set()},
	"empty allow_hosts: every host refused": {"data": {"allow_hosts": []}, "refused": {h | some h in hosts}},
	"exact and wildcard": {
		"data": {"allow_hosts": ["github.com", "*.githubusercontent.com"]},
		"refused": {"api.github.com", "githubusercontent.com", "evilgithubusercontent.com", "example.org", "docs.internal.example"},
	},
	"entries compared lower-cased, trailing dot ignored": {
		"data": {"allow_hosts": ["GitHub.COM.", "*.GithubUserContent.com"]},
		"refused": {"api.github.com", "githubusercontent.com", "evilgithubusercontent.com", "example.org", "docs.internal.example"},
	},
	"wildcard does not cover the apex": {
		"data": {"allow_hosts": ["*.github.com"]},
		"refused": {h | some h in hosts; h != "api.github.com"},
	},
	"wildcard covers any depth": {
		"data": {"allow_hosts": ["*.githubusercontent.com", "*.internal.example", "*.org"]},
		"refused": {"github.com", "api.github.com", "githubusercontent.com", "evilgithubusercontent.com"},
	},
	"bare * and *. allow nothing": {"data": {"allow_hosts": ["*", "*.", "*.."]}, "refused": {h | some h in hosts}},
	"non-string entries are ignored": {
		"data": {"allow_hosts": [1, null, {"host": "github.com"}, ["example.org"], "example.org"]},
		"refused": {h | some h in hosts; h != "example.org"},
	},
	"allow_hosts not a list allows nothing": {"data": {"allow_hosts": "github.com"}, "refused": {h | some h in hosts}},
	"allow_hosts an object allows nothing": {"data": {"allow_hosts": {"github.com": true}}, "refused": {h | some h in hosts}},
}

test_egress[name] if {
	some name, tc in cases
	hits := [lib.hit(h, "/url") | some h in hosts]
	dec := lib.decide(lib.request({"detectors": {"hosts": hits}}), tc.data)
	got := refused(dec, hosts)
	got == tc.refused
	count(dec.violations) == count(tc.refused)
	want_allow := tc.refused == set()
	dec.allow == want_allow
}

# Frames other than a tools/call request are not egress.
frames := {
	"tools/call response": lib.response({}),
	"resources/read request": lib.request({"method": "resources/read"}),
	"tools/list response": lib.response({"method": "tools/list"}),
}

test_egress_only_on_tools_call_requests[name] if {
	some name, inp in frames
	dec := lib.decide(object.union(inp, {"detectors": {"hosts": [lib.hit("example.org", "/url")]}}), {"allow_hosts": []})
	dec.violations == []
	dec.allow
}

test_one_violation_per_hit if {
	hits := [lib.hit("example.org", "/url"), lib.hit("example.org", "/options/endpoint"), lib.hit("github.com", "/mirror")]
	dec := lib.decide(lib.request({"detectors": {"hosts": hits}}), {"allow_hosts": ["github.com"]})
	count(dec.violations) == 2
	not dec.allow
}

test_message_names_host_argument_and_remedy if {
	inp := lib.request({"detectors": {"hosts": [lib.hit("evil.example", "/options/endpoint")]}})
	dec := lib.decide(inp, {"allow_hosts": ["github.com"]})
	[v] := dec.violations
	v.rule == "egress.host_not_allowed"
	v.mode == "enforce"
	contains(v.message, `"evil.example"`)
	contains(v.message, `"options.endpoint"`)
	contains(v.message, "add it to allow_hosts")
	contains(v.message, "waiver")
}

# Malformed detector output must not break the evaluation; a hit without a
# host string is refused rather than ignored.
test_malformed_hits if {
	hits := [{"raw": "x"}, {"host": 7, "path": "/n"}, "example.org", {"host": "github.com"}]
	dec := lib.decide(lib.request({"detectors": {"hosts": hits}}), {"allow_hosts": ["github.com"]})
	count(dec.violations) == 3
	not dec.allow
}

test_detectors_missing if {
	inp := json.remove(lib.request({}), ["detectors"])
	dec := lib.decide(inp, {"allow_hosts": []})
	dec.allow
}

# "*.." would leave the suffix ".": it must not allow a host that (against
# the normalisation) still ends with a dot.
test_star_dot_dot_allows_nothing if {
	dec := lib.decide(lib.request({"detectors": {"hosts": [lib.hit("example.org.", "/url")]}}), {"allow_hosts": ["*..", "*."]})
	count(dec.violations) == 1
}

# --- destinations and mentions ---------------------------------------------

evil := lib.hit("evil.example", "/text")

destination_cases := {
	"destination true": {"hit": evil, "refused": true},
	"destination false: a mention in prose": {"hit": object.union(evil, {"destination": false}), "refused": false},
	"destination false, email domain": {"hit": object.union(evil, {"destination": false, "kind": "email"}), "refused": false},
	"destination true, email domain": {"hit": object.union(evil, {"kind": "email"}), "refused": true},
	"destination false, decoded": {"hit": object.union(evil, {"destination": false, "decoded": "base64"}), "refused": false},
	"destination true, decoded": {"hit": object.union(evil, {"decoded": "base64"}), "refused": true},
	# Malformed output is judged as a destination.
	"destination missing": {"hit": object.remove(evil, {"destination"}), "refused": true},
	"destination null": {"hit": object.union(evil, {"destination": null}), "refused": true},
	"destination a string": {"hit": object.union(evil, {"destination": "false"}), "refused": true},
}

test_destination[name] if {
	some name, tc in destination_cases
	dec := lib.decide(lib.request({"detectors": {"hosts": [tc.hit]}}), {"allow_hosts": ["github.com"]})
	got := "egress.host_not_allowed" in lib.violated(dec)
	got == tc.refused
	dec.allow != tc.refused
}

test_mentions_only_allow_with_empty_allow_hosts if {
	hits := [object.union(lib.hit(h, "/text"), {"destination": false}) | some h in hosts]
	dec := lib.decide(lib.request({"detectors": {"hosts": hits}}), {"allow_hosts": []})
	dec.violations == []
	dec.allow
}

test_message_names_kind_and_decoding[name] if {
	some name, tc in {
		"url": {"hit": {}, "says": [`host "evil.example" (in a URL) in argument "url" is not in allow_hosts`]},
		"email": {"hit": {"kind": "email"}, "says": ["(the domain of an email address)"]},
		"ip": {"hit": {"kind": "ip"}, "says": ["(an IP address)"]},
		"hostname": {"hit": {"kind": "hostname"}, "says": ["(a hostname)"]},
		"split": {"hit": {"kind": "split"}, "says": ["(assembled from several fields)"]},
		"git": {"hit": {"kind": "git"}, "says": ["(a git remote)"]},
		"command": {"hit": {"kind": "command"}, "says": ["(the target of a network command)"]},
		"unknown kind": {"hit": {"kind": "carrier_pigeon"}, "says": [`(kind "carrier_pigeon")`]},
		"kind not a string": {"hit": {"kind": 7}, "says": ["(kind unknown)"]},
		"decoded": {"hit": {"decoded": "base64"}, "says": [`in argument "url" (decoded from base64) is not in allow_hosts`]},
		"decoded twice": {"hit": {"decoded": "percent+base64"}, "says": ["(decoded from percent+base64)"]},
		"not decoded": {"hit": {"decoded": ""}, "says": [`in argument "url" is not`]},
	}
	inp := lib.request({"detectors": {"hosts": [object.union(lib.hit("evil.example", "/url"), tc.hit)]}})
	dec := lib.decide(inp, {"allow_hosts": ["github.com"]})
	[v] := dec.violations
	v.rule == "egress.host_not_allowed"
	every s in tc.says {
		contains(v.message, s)
	}
}

# --- lookalikes -------------------------------------------------------------

host_rule := "egress.host_not_allowed"

lookalike_rule := "egress.lookalike_host"

# "xn--pple-43d.com" is "аpple.com" with a Cyrillic а.
lookalike := object.union(lib.hit("xn--pple-43d.com", "/url"), {"unicode": "аpple.com", "lookalike": true})

lookalike_cases := {
	"allow_hosts absent": {"data": {}, "hit": lookalike, "rules": {lookalike_rule}},
	"allow_hosts empty": {"data": {"allow_hosts": []}, "hit": lookalike, "rules": {host_rule, lookalike_rule}},
	"allow-listed exactly": {"data": {"allow_hosts": ["xn--pple-43d.com"]}, "hit": lookalike, "rules": set()},
	"allow-listed exactly, upper case and trailing dot": {"data": {"allow_hosts": ["XN--PPLE-43D.COM."]}, "hit": lookalike, "rules": set()},
	"allow-listed by a wildcard only": {
		"data": {"allow_hosts": ["*.com"]},
		"hit": lookalike,
		"rules": {lookalike_rule},
	},
	"Unicode entry does not match": {"data": {"allow_hosts": ["аpple.com"]}, "hit": lookalike, "rules": {host_rule, lookalike_rule}},
	"a mention": {"data": {"allow_hosts": []}, "hit": object.union(lookalike, {"destination": false}), "rules": set()},
	"not a lookalike, wildcard": {"data": {"allow_hosts": ["*.com"]}, "hit": object.union(lookalike, {"lookalike": false}), "rules": set()},
	"lookalike not a boolean": {"data": {"allow_hosts": ["*.com"]}, "hit": object.union(lookalike, {"lookalike": "true"}), "rules": set()},
	"decoded": {"data": {"allow_hosts": ["*.com"]}, "hit": object.union(lookalike, {"decoded": "base64"}), "rules": {lookalike_rule}},
}

test_lookalike[name] if {
	some name, tc in lookalike_cases
	dec := lib.decide(lib.request({"detectors": {"hosts": [tc.hit]}}), tc.data)
	lib.violated(dec) == tc.rules
	want := count(tc.rules) == 0
	dec.allow == want
}

test_lookalike_only_on_tools_call_requests[name] if {
	some name, inp in frames
	dec := lib.decide(object.union(inp, {"detectors": {"hosts": [lookalike]}}), {})
	dec.violations == []
}

test_lookalike_message if {
	hit := object.union(lookalike, {"path": "/options/endpoint", "decoded": "base64"})
	dec := lib.decide(lib.request({"detectors": {"hosts": [hit]}}), {"allow_hosts": ["*.com"]})
	[v] := dec.violations
	v.rule == lookalike_rule
	contains(v.message, `host "xn--pple-43d.com" (shown as "аpple.com") (in a URL) in argument "options.endpoint" (decoded from base64)`)
	contains(v.message, "mixes scripts and looks like another name")
	contains(v.message, `add "xn--pple-43d.com" to allow_hosts exactly`)
	contains(v.message, "waiver for egress.lookalike_host")
}

test_lookalike_message_without_unicode if {
	hit := object.remove(lookalike, {"unicode"})
	dec := lib.decide(lib.request({"detectors": {"hosts": [hit]}}), {})
	[v] := dec.violations
	contains(v.message, `host "xn--pple-43d.com" (in a URL)`)
}

# A waiver for the lookalike rule, matching the argument, lets it through;
# one for host_not_allowed does not.
test_lookalike_waivers[name] if {
	some name, tc in {
		"lookalike waiver": {"rule": lookalike_rule, "waived": true},
		"host waiver": {"rule": host_rule, "waived": false},
	}
	waiver := {
		"id": "W-1", "rule": tc.rule, "match": {"url": "https://xn--pple-43d.com/*"},
		"expires": "2027-01-31", "reason": "r", "approved_by": "a",
	}
	inp := lib.request({"arguments": {"url": "https://xn--pple-43d.com/x"}, "detectors": {"hosts": [lookalike]}})
	dec := lib.decide(inp, {"allow_hosts": ["*.com"], "waivers": [waiver]})
	dec.allow == tc.waived
}

# The membership fast path must agree with the entry walk: a wildcard covers
# subdomains at any depth, never the name itself or a single label.
test_wildcard_fast_path[name] if {
	some name, tc in {
		"deep subdomain": {"host": "a.b.c.example.com", "allow": ["*.example.com"], "refused": false},
		"apex": {"host": "example.com", "allow": ["*.example.com"], "refused": true},
		"single label": {"host": "localhost", "allow": ["*.localhost"], "refused": true},
		"tld wildcard": {"host": "example.com", "allow": ["*.com"], "refused": false},
		"exact": {"host": "api.example.com", "allow": ["api.example.com"], "refused": false},
		"exact elsewhere in a long list": {"host": "z.example", "allow": ["a.example", "*.b.example", "z.example"], "refused": false},
		"sibling": {"host": "api.example.net", "allow": ["*.example.com", "api.example.com"], "refused": true},
	}
	dec := lib.decide(lib.request({"detectors": {"hosts": [lib.hit(tc.host, "/url")]}}), {"allow_hosts": tc.allow})
	refused := count(dec.violations) > 0
	refused == tc.refused
}
