package airlock_test

import data.airlock_test.lib

# Policy data under which every rule could fire.
full_data := {
	"allow_hosts": [],
	"servers": {
		"web": {"untrusted": ["*"], "outbound": ["*"]},
		"docs": {"untrusted_resources": ["file:///srv/inbox/**"]},
	},
	"untrusted_open_world": true,
	"taint_on_injection": true,
	"waivers": [{
		"id": "W-1", "rule": "egress.host_not_allowed", "expires": "2027-01-31",
		"reason": "r", "approved_by": "a",
	}],
}

tainted_call := lib.request({
	"session": {"tainted": true},
	"detectors": {"hosts": [lib.hit("evil.example", "/url")]},
})

# Frames no rule acts on: the decision is still defined, complete, and allows.
quiet_frames := {
	"tools/list response": lib.response({"method": "tools/list", "session": {"tainted": true}}),
	"tools/list request": lib.request({"method": "tools/list"}),
	"resources/read request": object.union(tainted_call, {"method": "resources/read"}),
	"resources/read response": lib.read_response("file:///a", {"server": "docs"}),
	"prompts/get response": lib.response({"method": "prompts/get"}),
	"sampling/createMessage": lib.request({"method": "sampling/createMessage", "direction": "server_to_client"}),
	"elicitation/create": lib.request({"method": "elicitation/create", "direction": "server_to_client"}),
	"unknown phase": object.union(tainted_call, {"phase": "later"}),
	"empty input": {},
	"input of the wrong types": {
		"phase": 1, "method": null, "server": [], "session": "x", "tool": 7,
		"arguments": "x", "detectors": {"hosts": "x"}, "result": 1, "now": {},
	},
}

test_decision_defined_for_quiet_frames[name] if {
	some name, inp in quiet_frames
	dec := lib.decide(inp, full_data)
	object.keys(dec) == lib.decision_keys
	dec == {
		"allow": true,
		"violations": [],
		"waived": [],
		"expired_waivers": [],
		"taint": false,
		"taints": [],
		"mode": "enforce",
	}
}

test_decision_defined_without_data[name] if {
	some name, inp in object.union(quiet_frames, {"tainted call": tainted_call, "response": lib.response({})})
	dec := data.airlock.decision with input as inp
	object.keys(dec) == lib.decision_keys
	dec.allow
	dec.mode == "enforce"
	dec.violations == []
	dec.taint == false
}

test_decision_shape if {
	dec := lib.decide(tainted_call, full_data)
	object.keys(dec) == lib.decision_keys
	not dec.allow
	lib.violated(dec) == {"quarantine.outbound_after_taint"}
	every v in dec.violations {
		object.keys(v) == {"rule", "message", "mode"}
	}
	every x in dec.waived {
		object.keys(x) == {"rule", "message", "waiver", "expires", "reason"}
	}
	lib.waived(dec) == {["egress.host_not_allowed", "W-1"]}
	dec.taint == false
}

# Both rules fire on mode_call; the cases set modes.
mode_call := lib.request({
	"server": "slack",
	"tool": {"name": "post_message"},
	"session": {"tainted": true},
	"detectors": {"hosts": [lib.hit("evil.example", "/text")]},
})

mode_data := {"allow_hosts": [], "servers": {"slack": {"outbound": ["post_message"]}}}

egress := "egress.host_not_allowed"

outbound := "quarantine.outbound_after_taint"

mode_cases := {
	"no mode: enforce": {"data": {}, "modes": {egress: "enforce", outbound: "enforce"}, "mode": "enforce"},
	"global enforce": {"data": {"mode": "enforce"}, "modes": {egress: "enforce", outbound: "enforce"}, "mode": "enforce"},
	"global audit": {"data": {"mode": "audit"}, "modes": {egress: "audit", outbound: "audit"}, "mode": "audit"},
	"per-rule audit": {"data": {"rule_modes": {egress: "audit"}}, "modes": {egress: "audit", outbound: "enforce"}, "mode": "enforce"},
	"per-rule audit for both": {
		"data": {"rule_modes": {egress: "audit", outbound: "audit"}},
		"modes": {egress: "audit", outbound: "audit"}, "mode": "enforce",
	},
	"per-rule enforce overrides global audit": {
		"data": {"mode": "audit", "rule_modes": {outbound: "enforce"}},
		"modes": {egress: "audit", outbound: "enforce"}, "mode": "audit",
	},
	"rule_modes for another rule": {"data": {"rule_modes": {"mine.x": "audit"}}, "modes": {egress: "enforce", outbound: "enforce"}, "mode": "enforce"},
	"invalid global mode counts as enforce": {"data": {"mode": "warn"}, "modes": {egress: "enforce", outbound: "enforce"}, "mode": "enforce"},
	"null global mode counts as enforce": {"data": {"mode": null}, "modes": {egress: "enforce", outbound: "enforce"}, "mode": "enforce"},
	"invalid rule mode counts as enforce": {
		"data": {"mode": "audit", "rule_modes": {egress: "Audit", outbound: 1}},
		"modes": {egress: "enforce", outbound: "enforce"}, "mode": "audit",
	},
	"rule_modes not an object": {"data": {"mode": "audit", "rule_modes": [egress]}, "modes": {egress: "audit", outbound: "audit"}, "mode": "audit"},
}

test_modes[name] if {
	some name, tc in mode_cases
	dec := lib.decide(mode_call, object.union(mode_data, tc.data))
	{v.rule: v.mode | some v in dec.violations} == tc.modes
	dec.mode == tc.mode
	enforced := {m | some m in tc.modes; m == "enforce"}
	want_allow := count(enforced) == 0
	dec.allow == want_allow
}

# A rule package a user drops in is collected like the default ones.
test_user_rule_package if {
	dec := lib.decide(lib.request({}), {}) with data.airlock.rules.mine.violations as {{"rule": "mine.no_deletes", "message": "no", "extra": 1}}
		with data.airlock.rules.mine.taints as [{"rule": "mine.tainted", "message": "t"}]
	dec.violations == [{"rule": "mine.no_deletes", "message": "no", "mode": "enforce"}]
	dec.taints == [{"rule": "mine.tainted", "message": "t"}]
	dec.taint
	not dec.allow
}

test_user_rule_can_be_waived_and_audited if {
	waiver := {"id": "W-9", "rule": "mine.no_deletes", "expires": "2030-01-01", "reason": "r", "approved_by": "a"}
	d := {"waivers": [waiver], "rule_modes": {"mine.other": "audit"}}
	dec := lib.decide(lib.request({}), d) with data.airlock.rules.mine.violations as {
		{"rule": "mine.no_deletes", "message": "no"},
		{"rule": "mine.other", "message": "o", "path": "/x"},
	}
	dec.allow
	dec.violations == [{"rule": "mine.other", "message": "o", "mode": "audit"}]
	lib.waived(dec) == {["mine.no_deletes", "W-9"]}
}

malformed_outputs := {
	"rule not a string": {"rule": 1, "message": "m"},
	"empty rule": {"rule": "", "message": "m"},
	"no rule": {"message": "m"},
	"no message": {"rule": "mine.x"},
	"message not a string": {"rule": "mine.x", "message": ["m"]},
	"a string": "mine.x",
	"null": null,
}

# A broken rule blocks (or taints) instead of vanishing.
test_malformed_violation_blocks[name] if {
	some name, x in malformed_outputs
	dec := lib.decide(lib.request({}), {}) with data.airlock.rules.mine.violations as [x]
	not dec.allow
	[v] := dec.violations
	v.rule == "policy.malformed_rule"
	contains(v.message, "airlock.rules.mine")
}

test_malformed_taint_taints[name] if {
	some name, x in malformed_outputs
	dec := lib.decide(lib.response({}), {}) with data.airlock.rules.mine.taints as [x]
	dec.taint
	lib.tainted(dec) == {"policy.malformed_rule"}
}

test_taint_flag[name] if {
	some name, tc in {
		"untrusted result": {"input": lib.response({}), "taint": true},
		"trusted result": {"input": lib.response({"server": "other"}), "taint": false},
	}
	dec := lib.decide(tc.input, full_data)
	dec.taint == tc.taint
	has_taints := count(dec.taints) > 0
	dec.taint == has_taints
}

# A mode that is neither enforce nor audit is enforce, on a quiet frame too.
test_quiet_frame_with_an_invalid_mode if {
	every bad in ["bogus", "", 1, null, ["audit"]] {
		dec := lib.decide(lib.request({"method": "tools/list"}), object.union(full_data, {"mode": bad}))
		dec.mode == "enforce"
		dec.allow == true
	}
}

# The constant decision of a quiet frame still carries the mode in force.
test_quiet_frame_carries_the_mode if {
	dec := lib.decide(lib.request({"method": "tools/list"}), object.union(full_data, {"mode": "audit"}))
	dec == {
		"allow": true,
		"violations": [],
		"waived": [],
		"expired_waivers": [],
		"taint": false,
		"taints": [],
		"mode": "audit",
	}
}
