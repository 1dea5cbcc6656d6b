package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Whatever body a main create or update endpoint gets, on every store the
// answer is 2xx or 4xx in the house shape, never a server error. "AGENT"
// and "KBID" in a body stand for the ids of an agent and a knowledge base
// that exist, so the fuzzer reaches past the reference checks.
func FuzzCreateBodies(f *testing.F) {
	type target struct {
		engine    string
		bench     *inboundBench
		agent, kb []byte
		routes    []string // "METHOD path"
	}
	var targets []target
	for name, engine := range engines(f) {
		b := newInboundBench(f, "ok", engine)
		b.contract = nil // answers are checked below; the validator would only slow the fuzzer
		agent := b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"]})["id"].(string)
		kb := b.create("/v1/knowledge-bases", map[string]any{"name": "KB"})["id"].(string)
		folder := b.create("/v1/folders", map[string]any{"name": "F"})["id"].(string)
		campaign := b.newCampaign(agent, nil)["id"].(string)
		targets = append(targets, target{engine: name, bench: b, agent: []byte(agent), kb: []byte(kb), routes: []string{
			"POST /v1/agents", "PATCH /v1/agents/" + agent, "POST /v1/agents/" + agent + "/custom-tools",
			"POST /v1/calls", "POST /v1/messages", "POST /v1/folders", "PATCH /v1/folders/" + folder,
			"POST /v1/sip-trunks", "POST /v1/phone-numbers", "POST /v1/messaging-connections",
			"POST /v1/knowledge-bases", "POST /v1/knowledge-bases/" + kb + "/sources",
			"POST /v1/knowledge-bases/" + kb + "/query", "POST /v1/agents/batch-get", "PATCH /v1/organization",
			"POST /v1/campaigns", "PATCH /v1/campaigns/" + campaign, "POST /v1/campaigns/" + campaign + "/recipients",
			"POST /v1/suppressions",
		}})
	}
	for i, body := range []string{ // one per route, in order
		`{"name":"A","promptTemplate":"P","defaultVariables":{"k":"v"},"transferRoutes":[{"to_number":"+14155550100","condition":"c"}],"knowledgeBaseIds":["KBID"]}`,
		`{"firstMessage":"Hi\u0000","runtimeConfig":{"a":["\ud800"]}}`,
		`{"name":"t","webhookUrl":"https://example.com/t","schema":{"type":"object"},"headers":[{"key":"k","value":"v"}]}`,
		"{\"agentId\":\"AGENT\",\"toNumber\":\"+14155550199\",\"fromNumber\":\"+14155550100\",\"variables\":{\"\xc0\x80\":1}}",
		`{"to":"+14155550199","agentId":"AGENT","body":"hi"}`,
		`{"name":"F","color":"#ff0000"}`,
		`{"color":null}`,
		`{"friendlyName":"T","host":"pbx.example.com","port":5060,"transport":"udp","password":"p"}`,
		`{"e164":"+14155550123","agentId":"AGENT"}`,
		`{"provider":"twilio","accountSid":"AC1","authToken":"t","fromNumber":"+14155550100"}`,
		`{"name":"K","description":"d"}`,
		"{\"sourceType\":\"text\",\"displayName\":\"D\",\"content\":\"Hours: 9 to 5.\xff\"}",
		`{"query":"hours","chunks":3,"similarityThreshold":0.5}`,
		`{"ids":["AGENT"],"minimal":true}`,
		`{"name":"Acme","concurrencyLimit":5,"inboundReservePercent":20}`,
		`{"name":"C","agentId":"AGENT","fromNumbers":["+14155550100"],"callingWindows":[{"days":["mon"],"start":"09:00","end":"17:00"}],"retry":{"maxAttempts":2,"retryOn":["BUSY"]}}`,
		`{"startAt":"2026-12-01T09:00:00Z","endAt":"2026-12-01T08:00:00Z","maxConcurrency":null,"variables":{"k":[1,{"a":null}]}}`,
		`{"recipients":[{"toNumber":"+14155550101","variables":{"n":"Ada"},"timezone":"America/Chicago"},{"toNumber":"+14155550101"}]}`,
		`{"number":"+14155550101","reason":"asked"}`,
	} {
		f.Add(uint8(i), []byte(body))
	}
	f.Add(uint8(0), []byte(`{"name":"A","promptTemplate":"P","mode":"conversation_flow","flowDefinition":{"nodes":[{"id":"a","edges":[{"target":"b"}]}]}}`))
	f.Add(uint8(4), []byte(`{"to":"+14155550199","agentId":"AGENT","generate":true,"messages":[{"role":"user","content":"hi"}]}`))
	f.Add(uint8(3), []byte(`{"agentId":"AGENT","toNumber":"+14155550199","fromNumber":"+14155550100","variables":{"k":["v"]},"callerIdName":"Acme"}`))
	f.Add(uint8(3), []byte(`{"agentId":"AGENT","toNumber":"1e999","skipQueue":true}`))
	f.Add(uint8(0), []byte(`[`))
	f.Add(uint8(0), []byte(`{"name":"A","n\u0061me":"B","promptTemplate":"P","defaultVariables":{"k":1,"k":2}}`))
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		for _, tg := range targets {
			method, path, _ := strings.Cut(tg.routes[int(route)%len(tg.routes)], " ")
			sent := bytes.ReplaceAll(bytes.ReplaceAll(body, []byte("AGENT"), tg.agent), []byte("KBID"), tg.kb)
			r := send(t, tg.bench.env, method, path, sent)
			var answer struct {
				Error *struct{ Code string } `json:"error"`
			}
			shaped := json.Unmarshal(r.Body, &answer) == nil && answer.Error != nil && answer.Error.Code != ""
			switch {
			case r.Status >= 500:
				t.Fatalf("%s: %s %s %q = %d %s", tg.engine, method, path, sent, r.Status, r.Body)
			case r.Status >= 400 && !shaped:
				t.Fatalf("%s: %s %s %q = %d, not in the error shape: %s", tg.engine, method, path, sent, r.Status, r.Body)
			case r.Status < 200 || (r.Status >= 300 && r.Status < 400):
				t.Fatalf("%s: %s %s %q = %d", tg.engine, method, path, sent, r.Status)
			}
			tg.bench.server.Messages.Wait()
		}
	})
}

// send is env.do for a fuzz target, which must not use the env's F.
func send(t *testing.T, e *env, method, path string, body []byte) response {
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", e.key)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}
