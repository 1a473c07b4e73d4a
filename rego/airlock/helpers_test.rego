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

# hit(host, path): a host the detectors found in argument path.
hit(host, path) := {"host": host, "raw": concat("", ["https://", host, "/"]), "kind": "url", "path": path}

# decide(inp, d): data.airlock.decision for input inp and policy data d. A key
# missing from d is absent from data (for allow_hosts) or has its
# absent-equivalent value (the other keys).
decide(inp, d) := dec if {
	"allow_hosts" in object.keys(d)
	dec := data.airlock.decision with input as inp
		with data.allow_hosts as d.allow_hosts
		with data.servers as object.get(d, "servers", {})
		with data.waivers as object.get(d, "waivers", [])
		with data.mode as object.get(d, "mode", "enforce")
		with data.rule_modes as object.get(d, "rule_modes", {})
}

decide(inp, d) := dec if {
	not "allow_hosts" in object.keys(d)
	dec := data.airlock.decision with input as inp
		with data.servers as object.get(d, "servers", {})
		with data.waivers as object.get(d, "waivers", [])
		with data.mode as object.get(d, "mode", "enforce")
		with data.rule_modes as object.get(d, "rule_modes", {})
}

# The rule IDs of a decision's violations, waived violations and taints.
violated(dec) := {v.rule | some v in dec.violations}

waived(dec) := {[w.rule, w.waiver] | some w in dec.waived}

tainted(dec) := {t.rule | some t in dec.taints}

decision_keys := {"allow", "violations", "waived", "expired_waivers", "taint", "taints", "mode"}
