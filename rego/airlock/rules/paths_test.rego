package airlock_test.rules.paths

import data.airlock_test.lib

rule := "paths.protected"

# phit(arg, globs): a path hit in argument arg that matched globs; null
# globs leaves the key out, as the Go side does for none.
phit(arg, null) := {"path": "/home/u/notes.txt", "raw": "~/notes.txt", "arg": arg}

phit(arg, globs) := {"path": "/home/u/.aws/credentials", "raw": "~/.aws/credentials", "arg": arg, "protected": globs} if globs != null

call(hits) := lib.request({"server": "files", "tool": {"name": "read_file"}, "detectors": {"paths": hits}})

cases := {
	"protected": {"hits": [phit("/path", ["~/.aws/**"])], "refused": true},
	"two globs": {"hits": [phit("/path", ["~/.aws/**", "**/credentials"])], "refused": true},
	"no protected key": {"hits": [phit("/path", null)], "refused": false},
	"protected empty": {"hits": [phit("/path", [])], "refused": false},
	"no hits": {"hits": [], "refused": false},
	"one of several hits": {"hits": [phit("/a", null), phit("/b", ["/etc/shadow"]), phit("/c", [])], "refused": true},
	"decoded": {"hits": [object.union(phit("/body", ["~/.ssh/**"]), {"decoded": "base64"})], "refused": true},
	# Malformed output refuses.
	"protected a string": {"hits": [phit("/path", "~/.aws/**")], "refused": true},
	"protected a number": {"hits": [phit("/path", 7)], "refused": true},
	"protected true": {"hits": [phit("/path", true)], "refused": true},
	"protected a list of non-strings": {"hits": [phit("/path", [1])], "refused": true},
	"protected false": {"hits": [phit("/path", false)], "refused": false},
	"protected an empty string": {"hits": [phit("/path", "")], "refused": false},
	"hit without arg": {"hits": [object.remove(phit("/path", ["/etc/shadow"]), {"arg"})], "refused": true},
	"hit not an object": {"hits": ["/etc/shadow"], "refused": true},
	"paths not a list": {"hits": "x", "refused": true},
	"paths an object": {"hits": {"a": phit("/path", null)}, "refused": true},
	"paths null": {"hits": null, "refused": false},
}

test_protected[name] if {
	some name, tc in cases
	dec := lib.decide(call(tc.hits), {})
	got := rule in lib.violated(dec)
	got == tc.refused
	dec.allow != tc.refused
}

test_output_not_a_list_message if {
	dec := lib.decide(call("x"), {})
	[v] := dec.violations
	v.rule == rule
	contains(v.message, "output is not a list")
}

test_protected_null if {
	hit := object.union(phit("/path", null), {"protected": null})
	dec := lib.decide(call([hit]), {})
	dec.allow
}

# Frames other than a tools/call request are not checked.
frames := {
	"tools/call response": lib.response({"detectors": {"paths": [phit("/path", ["~/.aws/**"])]}}),
	"resources/read request": lib.request({"method": "resources/read", "detectors": {"paths": [phit("/path", ["~/.aws/**"])]}}),
	"prompts/get request": lib.request({"method": "prompts/get", "detectors": {"paths": [phit("/path", ["~/.aws/**"])]}}),
}

test_protected_only_on_tools_call_requests[name] if {
	some name, inp in frames
	dec := lib.decide(inp, {})
	dec.violations == []
}

test_one_violation_per_argument if {
	hits := [
		phit("/path", ["~/.aws/**"]),
		object.union(phit("/path", ["~/.aws/**"]), {"raw": "/home/u/.aws/credentials"}),
		phit("/dest", ["~/.aws/**"]),
	]
	dec := lib.decide(call(hits), {})
	count(dec.violations) == 2
}

test_message[name] if {
	some name, tc in {
		"one glob": {
			"hit": phit("/path", ["~/.aws/**"]),
			"says": [`argument "path" names a protected path: it matches "~/.aws/**" in protected_paths`, "servers.files.protected_paths", "waiver for paths.protected"],
		},
		"globs sorted": {
			"hit": phit("/options/file", ["~/.aws/**", "**/credentials"]),
			"says": [`argument "options.file" names`, `matches "**/credentials", "~/.aws/**" in`],
		},
		"many globs": {
			"hit": phit("/path", [sprintf("/g%d/**", [i]) | some i in numbers.range(1, 7)]),
			"says": [`"/g5/**" and 2 more in protected_paths`],
		},
		"decoded": {
			"hit": object.union(phit("/body", ["~/.ssh/**"]), {"decoded": "base64"}),
			"says": [`argument "body" (decoded from base64) names a protected path`],
		},
		"malformed": {
			"hit": object.remove(phit("/path", 7), {"arg"}),
			"says": [`argument "?" names a protected path: it matches "?"`],
		},
		"hit not an object": {
			"hit": "/etc/shadow",
			"says": [`argument "?" names a protected path: it matches "?"`],
		},
	}
	dec := lib.decide(call([tc.hit]), {})
	[v] := dec.violations
	v.rule == rule
	v.mode == "enforce"
	every s in tc.says {
		contains(v.message, s)
	}
}

# The message names the glob and the argument, not what was written nor the
# file: an argument may be a whole command line with a secret in it.
test_message_omits_path_and_raw if {
	hit := {"path": "/home/u/.aws/credentials", "raw": "cat ~/.aws/credentials # token=s3cret", "arg": "/command", "protected": ["~/.aws/**"]}
	inp := object.union(call([hit]), {"arguments": {"command": "cat ~/.aws/credentials # token=s3cret"}})
	dec := lib.decide(inp, {})
	[v] := dec.violations
	not contains(v.message, "credentials")
	not contains(v.message, "s3cret")
}

# The violation carries the argument's pointer: a waiver whose match covers
# that argument waives it; one that vouches for another argument does not.
test_waivers[name] if {
	some name, tc in {
		"match on the argument": {"match": {"path": "~/.aws/config"}, "waived": true},
		"no match": {"match": {}, "waived": true},
		"match on another argument": {"match": {"mode": "*"}, "waived": false},
		"pattern does not match": {"match": {"path": "/tmp/*"}, "waived": false},
	}
	waiver := {"id": "W-7", "rule": rule, "match": tc.match, "expires": "2027-01-31", "reason": "r", "approved_by": "a"}
	inp := object.union(call([phit("/path", ["~/.aws/**"])]), {"arguments": {"path": "~/.aws/config", "mode": "r"}})
	dec := lib.decide(inp, {"waivers": [waiver]})
	dec.allow == tc.waived
	waived := lib.waived(dec) == {[rule, "W-7"]}
	waived == tc.waived
}

test_audit_mode if {
	dec := lib.decide(call([phit("/path", ["~/.aws/**"])]), {"rule_modes": {rule: "audit"}})
	dec.allow
	[v] := dec.violations
	v.mode == "audit"
}
