package airlock_test.gate

import data.airlock_test.lib

gate(d, server) := g if {
	g := data.airlock.response_gate with input as {"server": server}
		with data.servers as object.get(d, "servers", {})
		with data.untrusted_open_world as object.get(d, "untrusted_open_world", null)
		with data.taint_on_injection as object.get(d, "taint_on_injection", null)
}

test_default_gate if {
	gate({"servers": {"web": {"untrusted": ["fetch", "read_mail"], "outbound": ["send"]}}}, "web") == {
		"decide_all": false,
		"methods": set(),
		"tools": {"fetch", "read_mail"},
		"open_world": false,
		"hits": {"injection"},
	}
}

gate_cases := {
	"server not in data": {"d": {"servers": {}}, "want": {"tools": set(), "methods": set(), "hits": {"injection"}, "open_world": false}},
	"injection taint off": {"d": {"servers": {}, "taint_on_injection": false}, "want": {"tools": set(), "methods": set(), "hits": set(), "open_world": false}},
	"wholly untrusted": {"d": {"servers": {"web": {"untrusted": "*"}}}, "want": {"tools": {"*"}, "methods": {"resources/read"}, "hits": {"injection"}, "open_world": false}},
	"untrusted resources": {"d": {"servers": {"web": {"untrusted_resources": ["file:///inbox/**"]}}}, "want": {"tools": set(), "methods": {"resources/read"}, "hits": {"injection"}, "open_world": false}},
	"one untrusted tool as a string": {"d": {"servers": {"web": {"untrusted": "fetch"}}}, "want": {"tools": {"fetch"}, "methods": set(), "hits": {"injection"}, "open_world": false}},
	"open world switch": {"d": {"servers": {}, "untrusted_open_world": true}, "want": {"tools": set(), "methods": set(), "hits": {"injection"}, "open_world": true}},
}

test_gate[name] if {
	some name, c in gate_cases
	g := gate(c.d, "web")
	g.decide_all == false
	object.remove(g, {"decide_all"}) == c.want
}

# A rule package that does not say which responses it needs makes the gate
# decide every response.
test_undeclared_package_decides_all if {
	g := data.airlock.response_gate with input as {"server": "web"}
		with data.airlock.rules.extra.taints as {{"rule": "extra.x", "message": "m"}}
	g == {"decide_all": true}
}

# A malformed declaration widens the gate to "*", never narrows it.
test_malformed_declaration_widens if {
	g := data.airlock.response_gate with input as {"server": "web"}
		with data.airlock.rules.egress.response_needs as {"tools": 7, "hits": {"x": 1}}
	"*" in g.tools
	"*" in g.hits
}

# needed(g, r) is the proxy's reading of the gate (pep.ResponseGate.Needs).
needed(g, _) if g.decide_all == true

needed(g, r) if {
	some m in g.methods
	m in {"*", r.method}
}

needed(g, r) if {
	r.method == "tools/call"
	some t in g.tools
	t in {"*", r.tool.name}
}

needed(g, r) if {
	r.method == "tools/call"
	g.open_world == true
	r.tool.annotations.openWorldHint == true
}

needed(g, r) if {
	some kind in g.hits
	some k, hits in r.detectors
	kind in {"*", k}
	count(hits) > 0
}

marker := {"kind": "fake_system_message", "path": "/content/0/text"}

soundness_data := [
	{"servers": {"web": {"untrusted": ["read_mail"], "outbound": ["send"]}}},
	{"servers": {"web": {"untrusted": "*"}}},
	{"servers": {"web": {"untrusted_resources": ["file:///inbox/**"]}}, "untrusted_open_world": true},
	{"servers": {"web": {"untrusted": ["fetch"]}}, "taint_on_injection": false},
]

soundness_responses := [
	lib.response({}),
	lib.response({"tool": {"name": "read_mail"}}),
	lib.response({"tool": {"name": "fetch", "annotations": {"openWorldHint": true}}}),
	lib.response({"detectors": {"injection": [marker]}}),
	lib.response({"session": {"tainted": true}}),
	lib.error_response(lib.response({"tool": {"name": "read_mail"}})),
	lib.read_response("file:///inbox/a.txt", {}),
	lib.read_response("file:///etc/motd", {}),
	lib.response({"method": "prompts/get", "detectors": {"injection": [marker]}}),
	lib.response({"method": "tools/list"}),
]

# Soundness: a response the gate rules out gets the quiet decision, so
# skipping it changes nothing.
skipped_cases[sprintf("data %d response %d", [i, j])] := [d, r] if {
	some i, d in soundness_data
	g := gate(d, "web")
	some j, r in soundness_responses
	not needed(g, r)
}

test_skipped_responses_are_quiet[name] if {
	some name, [d, r] in skipped_cases
	dec := lib.decide(r, d)
	dec.allow == true
	dec.taint == false
	dec.violations == []
}

# ... and the check is not vacuous: some responses are skipped, and some of
# those the gate keeps do taint.
test_soundness_cases_cover_both_sides if {
	tainting := [1 |
		some d in soundness_data
		some r in soundness_responses
		needed(gate(d, "web"), r)
		lib.decide(r, d).taint
	]
	count(skipped_cases) >= 10
	count(tainting) >= 8
}
