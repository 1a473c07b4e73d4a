# Helpers shared by the Rego tests (not part of the production bundle).
package airlock_test.lib

now := "2026-11-29T12:00:00Z"

# request(over): a tools/call request of server "web", tool "fetch", with
# over merged on top (objects are merged recursively, other values replaced).
request(over) := object.union(
	{
		"version": 1,
		"phase": "request",
		"direction": "client_to_server",
		"method": "tools/call",
		"server": "web",
		"session": {"id": "s-1", "tainted": false, "taint": []},
		"tool": {"name": "fetch", "pinned": false, "drift": false, "annotations": {}},
		"arguments": {},
		"detectors": {"hosts": [], "emails": [], "secrets": [], "paths": [], "injection": []},
		"now": now,
	},
	over,
)

# response(over): the response to request(over).
response(over) := object.union(
	request({
		"phase": "response",
		"direction": "server_to_client",
		"result": {"isError": false, "content": [{"type": "text", "text": "hello"}]},
	}),
	over,
)

# read_response(uri, over): the response to a resources/read of uri on server
# "web", as the Go side builds it (no tool, the read result as result), with
# over merged on top.
read_response(uri, over) := object.union(
	object.union(
		object.remove(response({}), {"tool", "result"}),
		{
			"method": "resources/read",
			"resource": {"uri": uri},
			"result": {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello"}]},
		},
	),
	over,
)

# error_response(inp): inp with its result replaced by a JSON-RPC error, as
# the Go side passes one ({"error": …} in place of the result).
error_response(inp) := object.union(
	object.remove(inp, {"result"}),
	{"result": {"error": {"code": -32002, "message": "Resource not found"}}},
)

# hit(host, path): a destination host (a URL the call fetches) that the
# detectors found in argument path.
hit(host, path) := {"host": host, "raw": concat("", ["https://", host, "/"]), "kind": "url", "path": path, "destination": true}

# decide(inp, d): data.airlock.decision for input inp and policy data d. A key
# missing from d is absent from data (for allow_hosts) or has its
# absent-equivalent value (the other keys; null for the two switches, which
# the policy reads as their defaults).
decide(inp, d) := dec if {
	"allow_hosts" in object.keys(d)
	dec := data.airlock.decision with input as inp
		with data.allow_hosts as d.allow_hosts
		with data.servers as object.get(d, "servers", {})
		with data.waivers as object.get(d, "waivers", [])
		with data.mode as object.get(d, "mode", "enforce")
		with data.rule_modes as object.get(d, "rule_modes", {})
		with data.untrusted_open_world as object.get(d, "untrusted_open_world", null)
		with data.taint_on_injection as object.get(d, "taint_on_injection", null)
}

decide(inp, d) := dec if {
	not "allow_hosts" in object.keys(d)
	dec := data.airlock.decision with input as inp
		with data.servers as object.get(d, "servers", {})
		with data.waivers as object.get(d, "waivers", [])
		with data.mode as object.get(d, "mode", "enforce")
		with data.rule_modes as object.get(d, "rule_modes", {})
		with data.untrusted_open_world as object.get(d, "untrusted_open_world", null)
		with data.taint_on_injection as object.get(d, "taint_on_injection", null)
}

# The rule IDs of a decision's violations, waived violations and taints.
violated(dec) := {v.rule | some v in dec.violations}

waived(dec) := {[w.rule, w.waiver] | some w in dec.waived}

tainted(dec) := {t.rule | some t in dec.taints}

decision_keys := {"allow", "violations", "waived", "expired_waivers", "taint", "taints", "mode"}
