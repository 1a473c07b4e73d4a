# The decision the Go proxy asks for: data.airlock.decision.
#
# Every package under airlock.rules may define
#   violations contains {"rule": "<dotted.id>", "message": "…"}   (refuse the frame)
#   taints     contains {"rule": "<dotted.id>", "message": "…"}   (quarantine the session)
# A violation may also carry "path", the JSON pointer of the argument it is
# about (see waivers.rego). This package collects them from every rule
# package, applies waivers and modes, and is defined for any input, so that
# an undefined decision can only mean a broken policy.
package airlock

import data.airlock.waivers

# Most frames break no rule and taint nothing: their decision is a constant
# (but for the mode), returned without building the lists below. The full
# object is the same when both sets are empty; decision_test.rego pins that.
#
# (The quiet branches read data.mode inline and ask one early-exit question,
# _any_found, instead of referring to mode, _found and _tainted: each rule
# OPA evaluates costs microseconds, and this is the path of most frames.)
decision := {
	"allow": true,
	"violations": [],
	"waived": [],
	"expired_waivers": [],
	"taint": false,
	"taints": [],
	"mode": data.mode,
} if {
	not _any_found
	data.mode in {"enforce", "audit"}
} else := {
	"allow": true,
	"violations": [],
	"waived": [],
	"expired_waivers": [],
	"taint": false,
	"taints": [],
	"mode": "enforce",
} if {
	not _any_found
} else := {
	"allow": allow,
	"violations": violations,
	"waived": waived,
	"expired_waivers": expired_waivers,
	"taint": count(taints) > 0,
	"taints": taints,
	"mode": mode,
}

_modes := {"enforce", "audit"}

# Whether any rule package has a violation or a taint for this input.
_any_found if data.airlock.rules[_].violations[_]

_any_found if data.airlock.rules[_].taints[_]

# The global mode: data.mode if valid, else enforce.
mode := data.mode if data.mode in _modes

else := "enforce"

# The mode of one rule: data.rule_modes[rule] if set, else the global mode. A
# value other than enforce or audit counts as enforce.
rule_mode(rule) := m if {
	m := data.rule_modes[rule]
	m in _modes
} else := "enforce" if {
	_ = data.rule_modes[rule]
} else := mode

# allow is false iff a violation that is neither waived nor audited remains.
allow := count([v | some v in violations; v.mode == "enforce"]) == 0

violations := [{"rule": v.rule, "message": v.message, "mode": rule_mode(v.rule)} |
	some v in _found
	not _waiver(v)
]

waived := [{
	"rule": v.rule,
	"message": v.message,
	"waiver": w.id,
	"expires": w.expires,
	"reason": w.reason,
} |
	some v in _found
	w := data.waivers[_waiver(v)]
]

expired_waivers := [x | some x in _expired]

_expired contains {"waiver": w.id, "rule": w.rule, "expires": w.expires} if {
	some v in _found # first: no violation, no waiver work
	some i in waivers.expired
	waivers.covers(i, v)
	w := data.waivers[i]
}

taints := [{"rule": t.rule, "message": t.message} | some t in _tainted]

# The live waiver that waives v: the first one in data.waivers.
_waiver(v) := min(ids) if {
	ids := {i | some i in waivers.live; waivers.covers(i, v)}
	count(ids) > 0
}

# Violations and taints of every rule package, normalised to
# {"rule", "message"} (and "path" when the rule names an argument).
_found contains _normalise(name, x) if {
	some name
	x := data.airlock.rules[name].violations[_]
}

_tainted contains _normalise(name, x) if {
	some name
	x := data.airlock.rules[name].taints[_]
}

_normalise(name, x) := {"rule": x.rule, "message": x.message, "path": x.path} if {
	_well_formed(x)
	is_string(x.path)
} else := {"rule": x.rule, "message": x.message} if {
	_well_formed(x)
} else := {
	# A rule that emits something else still counts: a broken rule must not
	# turn into an allow.
	"rule": "policy.malformed_rule",
	"message": sprintf("rule package airlock.rules.%v emitted %v; want {\"rule\": string, \"message\": string}", [name, x]),
}

_well_formed(x) if {
	is_string(x.rule)
	x.rule != ""
	is_string(x.message)
}

# --- which responses need a decision ------------------------------------------
#
# Most responses are answers no rule acts on: a tool that is not untrusted,
# with nothing the detectors flag. The proxy asks for response_gate once,
# when the policy loads, with input {"server": <name>}, and relays the
# responses it rules out without a decision (and without an audit record:
# the request's record covers the call). It may depend on the data and the
# server, nothing else.
#
# Each rule package says which responses it can act on with
#   response_needs := {
#     "methods": [...],     every response to these client requests
#     "tools": [...] | "*", responses to tools/call of these tools
#     "open_world": bool,   tools/call responses of tools declaring openWorldHint
#     "hits": [...],        any response in which these detectors found something
#   }
# ({} for a package that acts on requests only). A package that does not
# declare it may act on any response, and then every response is decided:
# dropping in a rule package can never make airlock skip what it checks.
response_gate := {"decide_all": true} if {
	some name
	_ = data.airlock.rules[name]
	not _declares_needs(name)
} else := {
	"decide_all": false,
	"methods": {m | some m in _needs_list("methods")},
	"tools": {t | some t in _needs_list("tools")},
	"open_world": _needs_open_world,
	"hits": {h | some h in _needs_list("hits")},
}

_declares_needs(name) if is_object(data.airlock.rules[name].response_needs)

# Every value the packages give for field, a single string read as a list
# of one; a value of another type makes the gate decide everything ("*").
_needs_list(field) := {x |
	some name
	v := data.airlock.rules[name].response_needs[field]
	some x in _as_list(v)
}

_as_list(v) := v if is_array(v)

else := [v] if is_string(v)

else := ["*"]

_needs_open_world if {
	some name
	data.airlock.rules[name].response_needs.open_world == true
}

else := false
