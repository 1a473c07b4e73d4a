package airlock_test.waivers

import data.airlock.waivers
import data.airlock_test.lib

# A call that names docs.internal.example in argument url; allow_hosts lets
# only github.com through, so egress.host_not_allowed fires once.
args := {
	"url": "https://docs.internal.example/a/b.html",
	"options": {"endpoint": "https://api.internal.example/v1"},
	"count": 3,
	"tags": ["https://docs.internal.example/a/b.html"],
}

call := lib.request({
	"arguments": args,
	"detectors": {"hosts": [lib.hit("docs.internal.example", "/url")]},
})

w := {
	"id": "W-1",
	"rule": "egress.host_not_allowed",
	"expires": "2027-01-31",
	"reason": "internal docs",
	"approved_by": "sec-team",
}

# waiver_with(over): w with over merged on top.
waiver_with(over) := object.union(w, over)

# waiver_without(field): w without field.
waiver_without(field) := object.remove(w, {field})

# outcome(dec): what became of the one violation.
outcome(dec) := "waived" if {
	dec.allow
	dec.violations == []
	count(dec.waived) == 1
	dec.expired_waivers == []
}

outcome(dec) := "expired" if {
	not dec.allow
	dec.waived == []
	count(dec.expired_waivers) > 0
}

outcome(dec) := "refused" if {
	not dec.allow
	count(dec.violations) > 0
	dec.waived == []
	dec.expired_waivers == []
}

decide(tc) := lib.decide(
	object.union(call, object.get(tc, "input", {})),
	{"allow_hosts": ["github.com"], "waivers": tc.waivers},
)

scope_cases := {
	"rule matches": {"waivers": [w], "want": "waived"},
	"other rule": {"waivers": [waiver_with({"rule": "quarantine.outbound_after_taint"})], "want": "refused"},
	"rule differs in case": {"waivers": [waiver_with({"rule": "Egress.host_not_allowed"})], "want": "refused"},
	"server *": {"waivers": [waiver_with({"server": "*"})], "want": "waived"},
	"server equal": {"waivers": [waiver_with({"server": "web"})], "want": "waived"},
	"other server": {"waivers": [waiver_with({"server": "slack"})], "want": "refused"},
	"tool *": {"waivers": [waiver_with({"tool": "*"})], "want": "waived"},
	"tool equal": {"waivers": [waiver_with({"tool": "fetch"})], "want": "waived"},
	"other tool": {"waivers": [waiver_with({"tool": "fetch_all"})], "want": "refused"},
	"server and tool": {"waivers": [waiver_with({"server": "web", "tool": "fetch"})], "want": "waived"},
	"server fits, tool does not": {"waivers": [waiver_with({"server": "web", "tool": "x"})], "want": "refused"},
	"server * on a frame without server": {
		"waivers": [waiver_with({"server": "*"})],
		"input": {"server": null},
		"want": "waived",
	},
}

test_scope[name] if {
	some name, tc in scope_cases
	outcome(decide(tc)) == tc.want
}

match_cases := {
	"glob * crosses /": {"match": {"url": "https://docs.internal.example/*"}, "want": "waived"},
	"glob * crosses .": {"match": {"url": "https://*/a/b.html"}, "want": "waived"},
	"glob ** works too": {"match": {"url": "https://**"}, "want": "waived"},
	"glob ?": {"match": {"url": "https://docs.internal.example/?/b.html"}, "want": "waived"},
	"glob class": {"match": {"url": "https://docs.internal.example/[ab]/*"}, "want": "waived"},
	"glob range": {"match": {"url": "https://docs.internal.example/[a-c]/*"}, "want": "waived"},
	"glob negated class": {"match": {"url": "https://docs.internal.example/[!a]/*"}, "want": "refused"},
	"glob alternatives": {"match": {"url": "https://{api,docs}.internal.example/*"}, "want": "waived"},
	"glob escape": {"match": {"url": "https://docs.internal.example/a/b\\.html"}, "want": "waived"},
	"exact string": {"match": {"url": "https://docs.internal.example/a/b.html"}, "want": "waived"},
	"glob must match all of it": {"match": {"url": "https://docs.internal.example/a"}, "want": "refused"},
	"other value": {"match": {"url": "https://other.example/*"}, "want": "refused"},
	"empty match": {"match": {}, "want": "waived"},
	"two keys, both match": {"match": {"url": "https://docs.*", "options.endpoint": "https://api.*"}, "want": "waived"},
	"two keys, one does not match": {"match": {"url": "https://docs.*", "options.endpoint": "http://*"}, "want": "refused"},
	"missing argument": {"match": {"url": "*", "nope": "*"}, "want": "refused"},
	"missing nested argument": {"match": {"url": "*", "options.nope": "*"}, "want": "refused"},
	"number argument": {"match": {"url": "*", "count": "*"}, "want": "refused"},
	"array argument": {"match": {"url": "*", "tags": "*"}, "want": "refused"},
	"object argument": {"match": {"url": "*", "options": "*"}, "want": "refused"},
	"array index is not a path": {"match": {"url": "*", "tags.0": "*"}, "want": "refused"},
	# The violation is about argument url: a waiver that vouches only for
	# another argument does not cover it.
	"match does not name the violation's argument": {"match": {"options.endpoint": "*"}, "want": "refused"},
}

test_match[name] if {
	some name, tc in match_cases
	outcome(decide({"waivers": [waiver_with({"match": tc.match})]})) == tc.want
}

test_match_nested_argument if {
	tc := {
		"waivers": [waiver_with({"match": {"options.endpoint": "https://api.internal.example/*"}})],
		"input": {"detectors": {"hosts": [lib.hit("api.internal.example", "/options/endpoint")]}},
	}
	outcome(decide(tc)) == "waived"
}

# Two hosts, one in each argument: the waiver for url leaves the other one.
test_match_covers_only_its_argument if {
	hits := [lib.hit("docs.internal.example", "/url"), lib.hit("evil.example", "/options/endpoint")]
	tc := {
		"waivers": [waiver_with({"match": {"url": "https://docs.internal.example/*"}})],
		"input": {
			"arguments": {"options": {"endpoint": "https://evil.example/"}},
			"detectors": {"hosts": hits},
		},
	}
	dec := decide(tc)
	not dec.allow
	[v] := dec.violations
	contains(v.message, `"evil.example"`)
	[x] := dec.waived
	contains(x.message, `"docs.internal.example"`)
}

test_match_when_arguments_not_an_object[name] if {
	some name, arguments in {"string": "https://docs.internal.example/", "array": [1], "null": null}
	tc := {"waivers": [waiver_with({"match": {"url": "*"}})], "input": {"arguments": arguments}}
	outcome(decide(tc)) == "refused"
}

expiry_cases := {
	"date in the future": {"expires": "2027-01-31", "want": "waived"},
	"date is today": {"expires": "2026-11-29", "want": "waived"},
	"date was yesterday": {"expires": "2026-11-28", "want": "expired"},
	"date, last nanosecond of the day": {"expires": "2026-11-29", "now": "2026-11-29T23:59:59.999999999Z", "want": "waived"},
	"date, first instant of the next day": {"expires": "2026-11-29", "now": "2026-11-30T00:00:00Z", "want": "expired"},
	"date, now with an offset, still that day in UTC": {"expires": "2026-11-29", "now": "2026-11-30T00:30:00+01:00", "want": "waived"},
	"date, now with an offset, next day in UTC": {"expires": "2026-11-29", "now": "2026-11-29T19:30:00-05:00", "want": "expired"},
	"timestamp one second ahead": {"expires": "2026-11-29T12:00:01Z", "want": "waived"},
	"timestamp equal to now": {"expires": "2026-11-29T12:00:00Z", "want": "expired"},
	"timestamp with fraction, past": {"expires": "2026-11-29T11:59:59.5Z", "want": "expired"},
	"timestamp with fraction, future": {"expires": "2026-11-29T12:00:00.000000001Z", "want": "waived"},
	"timestamp with offset, equal": {"expires": "2026-11-29T13:00:00+01:00", "want": "expired"},
	"timestamp with offset, future": {"expires": "2026-11-29T13:00:01+01:00", "want": "waived"},
	"timestamp with negative offset, future": {"expires": "2026-11-29T07:00:01-05:00", "want": "waived"},
	"leap day, valid, past": {"expires": "2024-02-29", "want": "expired"},
	"leap day, valid, future": {"expires": "2028-02-29", "want": "waived"},
	"leap day of a century year divisible by 400": {"expires": "2000-02-29", "want": "expired"},
	"far future date never expires": {"expires": "9999-12-31", "want": "waived"},
	"far future timestamp never expires": {"expires": "2262-06-01T00:00:00Z", "want": "waived"},
	"last year that fits nanoseconds": {"expires": "2261-12-31T23:59:59-23:59", "want": "waived"},
	"distant past has expired": {"expires": "1000-01-01", "want": "expired"},
	"first year that fits nanoseconds": {"expires": "1678-01-01T00:00:00+23:59", "want": "expired"},
}

test_expiry[name] if {
	some name, tc in expiry_cases
	dec := decide({
		"waivers": [waiver_with({"expires": tc.expires})],
		"input": {"now": object.get(tc, "now", lib.now)},
	})
	outcome(dec) == tc.want
}

test_expired_waiver_is_reported if {
	dec := decide({"waivers": [waiver_with({"id": "W-old", "expires": "2025-12-31"})]})
	dec.expired_waivers == [{"waiver": "W-old", "rule": "egress.host_not_allowed", "expires": "2025-12-31"}]
	[v] := dec.violations
	v.rule == "egress.host_not_allowed"
}

test_waived_entry if {
	dec := decide({"waivers": [w]})
	[x] := dec.waived
	object.keys(x) == {"rule", "message", "waiver", "expires", "reason"}
	x.rule == "egress.host_not_allowed"
	x.waiver == "W-1"
	x.expires == "2027-01-31"
	x.reason == "internal docs"
	contains(x.message, `"docs.internal.example"`)
}

# A malformed waiver never applies, is not reported as expired, and does not
# fail the evaluation (the Rego tests run with strict builtin errors).
malformed_cases := {
	"impossible date": waiver_with({"expires": "2026-02-30"}),
	"impossible date in the past": waiver_with({"expires": "2020-02-30"}),
	"month 13": waiver_with({"expires": "2026-13-01"}),
	"month 00": waiver_with({"expires": "2026-00-10"}),
	"day 31 of a 30-day month": waiver_with({"expires": "2026-11-31"}),
	"leap day of a common year": waiver_with({"expires": "2027-02-29"}),
	"leap day of a century year": waiver_with({"expires": "2100-02-29"}),
	"a word": waiver_with({"expires": "tomorrow"}),
	"empty expires": waiver_with({"expires": ""}),
	"number expires": waiver_with({"expires": 20271231}),
	"null expires": waiver_with({"expires": null}),
	"missing expires": waiver_without("expires"),
	"one-digit month": waiver_with({"expires": "2027-1-31"}),
	"three-digit year": waiver_with({"expires": "0999-01-01"}),
	"hour 25": waiver_with({"expires": "2027-01-31T25:00:00Z"}),
	"second 60": waiver_with({"expires": "2027-01-31T12:00:60Z"}),
	"space instead of T": waiver_with({"expires": "2027-01-31 12:00:00Z"}),
	"no zone": waiver_with({"expires": "2027-01-31T12:00:00"}),
	"lower-case t and z": waiver_with({"expires": "2027-01-31t12:00:00z"}),
	"offset hour 24": waiver_with({"expires": "2027-01-31T12:00:00+24:00"}),
	"offset without colon": waiver_with({"expires": "2027-01-31T12:00:00+0100"}),
	"impossible timestamp day": waiver_with({"expires": "2027-02-30T12:00:00Z"}),
	"missing id": waiver_without("id"),
	"empty id": waiver_with({"id": ""}),
	"number id": waiver_with({"id": 14}),
	"missing rule": waiver_without("rule"),
	"missing reason": waiver_without("reason"),
	"empty reason": waiver_with({"reason": ""}),
	"missing approved_by": waiver_without("approved_by"),
	"approved_by not a string": waiver_with({"approved_by": ["a"]}),
	"server not a string": waiver_with({"server": 1}),
	"tool not a string": waiver_with({"tool": ["fetch"]}),
	"match not an object": waiver_with({"match": "https://*"}),
	"match value not a string": waiver_with({"match": {"url": 5}}),
	"glob unclosed class": waiver_with({"match": {"url": "https://[a-"}}),
	"glob empty class": waiver_with({"match": {"url": "https://[]"}}),
	"glob reversed range": waiver_with({"match": {"url": "https://docs.internal.example/[c-a]/*"}}),
	"glob unclosed alternatives": waiver_with({"match": {"url": "https://{docs,api"}}),
	"glob nested alternatives": waiver_with({"match": {"url": "https://{docs,{api}}.internal.example/*"}}),
	"glob trailing backslash": waiver_with({"match": {"url": "https://docs.internal.example/\\"}}),
	"a string": "W-1",
	"null": null,
	"a list": [w],
}

test_malformed_waiver_never_applies[name] if {
	some name, bad in malformed_cases
	outcome(decide({"waivers": [bad]})) == "refused"
}

test_malformed_waiver_is_listed_as_invalid[name] if {
	some name, bad in malformed_cases
	invalid := waivers.invalid with data.waivers as [bad]
	count(invalid) > 0
	every x in invalid {
		x.index == 0
		is_string(x.problem)
	}
}

test_malformed_waiver_does_not_stop_the_others if {
	dec := decide({"waivers": ["junk", waiver_with({"id": "W-x", "expires": "2026-02-30"}), waiver_with({"id": "W-good"})]})
	outcome(dec) == "waived"
	dec.waived[0].waiver == "W-good"
}

test_valid_waivers_are_not_invalid if {
	invalid := waivers.invalid with data.waivers as [w, waiver_with({"server": "web", "tool": "*", "match": {"url": "x"}, "expires": "2026-11-29T12:00:00Z"})]
	invalid == set()
}

test_waivers_not_a_list[name] if {
	some name, ws in {"object": {"W-1": w}, "string": "W-1", "null": null}
	outcome(decide({"waivers": ws})) == "refused"
}

now_cases := {
	"missing": null,
	"a word": "yesterday",
	"date only": "2026-11-29",
	"out of nanosecond range": "9999-01-01T00:00:00Z",
	"impossible": "2026-02-30T00:00:00Z",
	"a number": 1764417600,
}

# Without a valid input.now no waiver applies: the violation stays.
test_no_valid_now[name] if {
	some name, now in now_cases
	outcome(decide({"waivers": [w], "input": {"now": now}})) == "refused"
}

test_first_live_waiver_wins if {
	a := waiver_with({"id": "W-a"})
	b := waiver_with({"id": "W-b", "tool": "fetch"})
	decide({"waivers": [a, b]}).waived[0].waiver == "W-a"
	decide({"waivers": [b, a]}).waived[0].waiver == "W-b"
	count(decide({"waivers": [b, a]}).waived) == 1
}

test_live_waiver_with_expired_one if {
	old := waiver_with({"id": "W-old", "expires": "2026-01-01"})
	dec := decide({"waivers": [old, w]})
	dec.allow
	[x] := dec.waived
	x.waiver == "W-1"
	dec.expired_waivers == [{"waiver": "W-old", "rule": "egress.host_not_allowed", "expires": "2026-01-01"}]
}

test_expired_waiver_out_of_scope_is_not_reported if {
	dec := decide({"waivers": [waiver_with({"expires": "2026-01-01", "server": "slack"})]})
	outcome(dec) == "refused"
}

# A violation that names no argument (quarantine) is covered by a waiver
# whose match fits the call.
test_match_on_violation_without_argument[name] if {
	some name, tc in {
		"match fits": {"match": {"channel": "#ops-*"}, "allow": true},
		"match does not fit": {"match": {"channel": "#general"}, "allow": false},
	}
	inp := lib.request({
		"server": "slack",
		"tool": {"name": "post_message"},
		"session": {"tainted": true},
		"arguments": {"channel": "#ops-alerts", "text": "hi"},
	})
	waiver := waiver_with({"rule": "quarantine.outbound_after_taint", "match": tc.match})
	dec := lib.decide(inp, {"servers": {"slack": {"outbound": ["post_message"]}}, "waivers": [waiver]})
	dec.allow == tc.allow
}

test_waived_audit_violation if {
	dec := lib.decide(call, {"allow_hosts": [], "waivers": [w], "mode": "audit"})
	dec.allow
	dec.violations == []
	count(dec.waived) == 1
}

argument_path_cases := {
	"/url": "url",
	"/options/endpoint": "options.endpoint",
	"/a~1b/c~0d": "a/b.c~d",
	"/to/0": "to.0",
	"": "",
}

test_argument_path[pointer] if {
	some pointer, want in argument_path_cases
	waivers.argument_path(pointer) == want
}

glob_cases := {
	"https://docs.internal.example/*": true,
	"*": true,
	"**": true,
	"": true,
	"a?c": true,
	"[abc]": true,
	"[!abc]x": true,
	"[a-z]": true,
	"[ab-]": true,
	"{a,b}": true,
	"{a,b*,}": true,
	"{}": true,
	"\\*\\[": true,
	"a]b}c,d": true,
	"[é-ü]": true,
	"[": false,
	"[]": false,
	"[!]": false,
	"[a-": false,
	"[a-]": false,
	"[z-a]": false,
	"{a": false,
	"{a,[b]}": false,
	"{a,{b}}": false,
	"a\\": false,
	"[\\]]": false,
	"a\ufffd*": false,
}

test_valid_glob[pattern] if {
	some pattern, want in glob_cases
	valid_glob(pattern) == want
}

valid_glob(p) if waivers.valid_glob(p)

else := false
