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
