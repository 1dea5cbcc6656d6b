package api

import (
	"fmt"
	"net/http"
	"testing"
)

// Each limit of the agent table, on both sides of the boundary, on create and
// on update.
func TestAgentLimits(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		field     string
		ok, wrong []any
	}{
		{"name", []any{"a", str(128), "é" + str(127)}, []any{str(129), "", "   "}},
		{"firstMessage", []any{"", str(4000)}, []any{str(4001)}},
		{"playKeypadTouchToneDescriptionOverride", []any{str(2000), nil}, []any{str(2001)}},
		{"turnTimeoutSeconds", []any{-1, 0, 30}, []any{-2, 1.5}},
		{"silenceEndCallTimeoutSeconds", []any{-1, 0, 600}, []any{-2}},
		{"maxConversationDurationSeconds", []any{1, 3600}, []any{0, -1}},
		{"llmTemperature", []any{0, 2, 0.7}, []any{-0.01, 2.01}},
		{"voiceTemperature", []any{0, 2}, []any{-0.01, 2.01}},
		{"voiceSpeed", []any{0.5, 1.5, 1}, []any{0.49, 1.51}},
		{"interruptionThresholdMs", []any{100, 2000}, []any{99, 2001}},
		{"knowledgeBaseChunks", []any{1, 20}, []any{0, 21}},
		{"knowledgeBaseSimilarityThreshold", []any{0, 1, 0.75}, []any{-0.01, 1.01}},
		{"timezone", []any{"Europe/Paris", "America/New_York", "UTC"}, []any{"Mars/Olympus", "Local", "", "+02:00"}},
		{"language", []any{"en", "en-US", "pt-BR", "zh-Hant-TW"}, []any{"", "english!", "en_US"}},
		{"preCallWebhookUrl", []any{"https://example.com/pre", "http://hooks.example.com:8080/x?y=1"}, []any{"ftp://example.com", "/relative", "example.com", ""}},
		{"postCallWebhookUrl", []any{"https://example.com/post"}, []any{"not a url", "https://"}},
	}
	for _, c := range cases {
		for _, v := range c.ok {
			t.Run(fmt.Sprintf("%s=%v/ok", c.field, short(v)), func(t *testing.T) {
				a := e.createAgent(map[string]any{c.field: v})
				if c.field != "name" && fmt.Sprint(a[c.field]) != fmt.Sprint(v) {
					t.Errorf("%s = %v, want %v", c.field, a[c.field], v)
				}
				e.must(http.StatusOK, "PATCH", "/v1/agents/"+a["id"].(string), map[string]any{c.field: v})
			})
		}
		for _, v := range c.wrong {
			t.Run(fmt.Sprintf("%s=%v/refused", c.field, short(v)), func(t *testing.T) {
				body := map[string]any{"name": "A", "promptTemplate": "P", c.field: v}
				code := "validation_failed"
				if _, isFloat := v.(float64); isFloat && c.field == "turnTimeoutSeconds" {
					code = "invalid_json" // 1.5 is not an integer: a JSON type error
				}
				e.invalid(code, "POST", "/v1/agents", body, c.field)
				a := e.createAgent(nil)
				e.invalid(code, "PATCH", "/v1/agents/"+a["id"].(string), map[string]any{c.field: v}, c.field)
			})
		}
	}
	if n := countAgents(e); n == 0 {
		t.Fatal("no agent was stored at all")
	}
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 12 {
		return fmt.Sprintf("%s…(%d)", s[:8], len(s))
	}
	return s
}

func countAgents(e *env) int {
	return int(e.must(http.StatusOK, "GET", "/v1/agents", nil).JSON(e.t)["total"].(float64))
}

// Each enum accepts its values and refuses anything else.
func TestAgentEnums(t *testing.T) {
	e := newEnv(t)
	enums := map[string][]string{
		"status":                     {"active", "disabled"},
		"firstMessageMode":           {"static", "dynamic"},
		"voicemailAction":            {"hangup", "leave_message"},
		"mode":                       {"single_prompt", "conversation_flow"},
		"llmReasoningEffort":         {"low", "medium", "high"},
		"transferMode":               {"cold", "warm"},
		"knowledgeBaseRetrievalMode": {"automatic", "query_tool"},
	}
	for field, values := range enums {
		for _, v := range values {
			a := e.createAgent(map[string]any{field: v})
			if a[field] != v {
				t.Errorf("%s = %v, want %v", field, a[field], v)
			}
		}
		for _, bad := range []string{"bogus", "", "ACTIVE"} {
			e.invalid("validation_failed", "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P", field: bad}, field)
		}
	}
}

func TestAgentRequiredFieldsAndTypes(t *testing.T) {
	e := newEnv(t)
	e.invalid("validation_failed", "POST", "/v1/agents", map[string]any{}, "name", "promptTemplate")
	e.invalid("validation_failed", "POST", "/v1/agents", map[string]any{"name": "A"}, "promptTemplate")
	e.invalid("validation_failed", "POST", "/v1/agents", map[string]any{"name": nil, "promptTemplate": "P"}, "name")
	// Every broken field is reported at once.
	e.invalid("validation_failed", "POST", "/v1/agents", map[string]any{
		"name": str(129), "promptTemplate": "P", "llmTemperature": 5, "voiceSpeed": 2,
		"transferRoutes":  []any{map[string]any{"to_number": "12", "condition": ""}},
		"messagingConfig": map[string]any{"fromNumber": "555", "inboundWebhookUrl": "nope", "conversationIdleResetDays": 0},
	}, "name", "llmTemperature", "voiceSpeed", "transferRoutes[0].to_number", "transferRoutes[0].condition",
		"messagingConfig.fromNumber", "messagingConfig.inboundWebhookUrl", "messagingConfig.conversationIdleResetDays")
	// Type errors and unknown keys at any depth of typed objects are invalid_json.
	e.invalid("invalid_json", "POST", "/v1/agents", `{"name":"A","promptTemplate":"P","bogus":1}`, "bogus")
	e.invalid("invalid_json", "POST", "/v1/agents", `{"name":"A","promptTemplate":"P","warmTransferConfig":{"holdMessage":"h","x":1}}`, "warmTransferConfig.x")
	e.invalid("invalid_json", "POST", "/v1/agents", `{"name":"A","promptTemplate":"P","messagingConfig":{"smsPrompt":"s","y":true}}`, "messagingConfig.y")
	e.invalid("invalid_json", "POST", "/v1/agents", `{"name":"A","promptTemplate":"P","transferRoutes":[{"to_number":"+15550001","condition":"c","z":1}]}`, "transferRoutes[0].z")
	e.invalid("invalid_json", "POST", "/v1/agents", `{"name":1,"promptTemplate":true,"endCallEnabled":"yes"}`, "name", "promptTemplate", "endCallEnabled")
	e.invalid("invalid_json", "POST", "/v1/agents", `{"name":"A",`, "body")
	e.invalid("invalid_json", "POST", "/v1/agents", `[]`, "body")
	e.invalid("invalid_json", "POST", "/v1/agents", ``, "body")
	// Free-form objects accept anything inside, but must be objects.
	a := e.createAgent(map[string]any{
		"defaultVariables": map[string]any{"customer_name": "Ada", "nested": map[string]any{"any": []any{1, "two"}}},
		"runtimeConfig":    map[string]any{"whatever": true}, "flowDefinition": map[string]any{"nodes": []any{}},
		"testVariables": map[string]any{"k": "v"},
	})
	if a["defaultVariables"].(map[string]any)["customer_name"] != "Ada" {
		t.Errorf("defaultVariables = %v", a["defaultVariables"])
	}
	e.invalid("invalid_json", "POST", "/v1/agents", `{"name":"A","promptTemplate":"P","defaultVariables":[1]}`, "defaultVariables")
	if n := countAgents(e); n != 1 {
		t.Errorf("refused requests stored agents: %d agents", n)
	}
}

func TestAgentDefaultsAndEveryField(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(nil)
	for field, want := range map[string]any{"status": "active", "mode": "single_prompt", "interruptionThresholdMs": float64(500)} {
		if a[field] != want {
			t.Errorf("default %s = %v, want %v", field, a[field], want)
		}
	}
	for _, field := range []string{"firstMessage", "firstMessageMode", "folderId", "folder", "sipTrunk", "sipTrunkId",
		"messagingConnectionId", "messagingConfig", "llmTemperature", "voicemailAction", "llmReasoningEffort",
		"transferMode", "knowledgeBaseRetrievalMode", "warmTransferConfig", "timezone"} {
		v, present := a[field]
		if !present || v != nil {
			t.Errorf("%s = %v (present %v), want null", field, v, present)
		}
	}
	full := map[string]any{
		"name": "Full", "promptTemplate": "Be kind to {{user_number}}", "status": "disabled",
		"messagingConfig": map[string]any{"smsPrompt": "Text nicely", "inboundWebhookUrl": "https://example.com/in",
			"fromNumber": "+14155550100", "sendMessageEnabled": true, "sendMessageDescriptionOverride": "d", "conversationIdleResetDays": 3},
		"defaultVariables": map[string]any{"a": "b"}, "firstMessage": "Hello", "firstMessageMode": "static",
		"turnTimeoutSeconds": 5, "silenceEndCallTimeoutSeconds": 30, "maxConversationDurationSeconds": 600,
		"llmTemperature": 0.3, "timezone": "Europe/Berlin", "language": "de-DE",
		"preCallWebhookUrl": "https://example.com/pre", "postCallWebhookUrl": "https://example.com/post",
		"endCallEnabled": true, "endCallRulesOverride": "end politely", "transferEnabled": true,
		"transferRoutes":              []any{map[string]any{"to_number": "+14155550101", "condition": "billing"}},
		"transferDescriptionOverride": "t", "voicemailEnabled": true, "voicemailAction": "leave_message",
		"voicemailMessage": "Call {{agent_number}}", "voiceId": "alloy", "voiceTemperature": 1, "voiceSpeed": 1.2,
		"runtimeConfig": map[string]any{"x": 1.0}, "mode": "conversation_flow", "flowDefinition": map[string]any{"startNodeId": "n1", "nodes": []any{map[string]any{"id": "n1", "type": "end"}}},
		"testVariables": map[string]any{"t": "v"}, "llmReasoningEffort": "high", "disableInterruptions": true,
		"interruptionThresholdMs": 800, "transferMode": "warm",
		"warmTransferConfig": map[string]any{"holdMessage": "hold on", "holdMusicEnabled": true, "summaryPrompt": "sum",
			"introMessage": "intro", "continueRecordingAfterTransfer": false},
		"playKeypadTouchToneEnabled": true, "playKeypadTouchToneDescriptionOverride": "press",
		"knowledgeBaseRetrievalMode": "query_tool", "knowledgeBaseChunks": 7, "knowledgeBaseSimilarityThreshold": 0.4,
	}
	got := e.must(http.StatusCreated, "POST", "/v1/agents", full).Data(t)
	again := e.must(http.StatusOK, "GET", "/v1/agents/"+got["id"].(string), nil).Data(t)
	for k, want := range full {
		if fmt.Sprint(got[k]) != fmt.Sprint(want) || fmt.Sprint(again[k]) != fmt.Sprint(want) {
			t.Errorf("%s: created %v, read %v, want %v", k, got[k], again[k], want)
		}
	}
}

func TestAgentReferencesMustExistInTheOrganization(t *testing.T) {
	e := newEnv(t)
	foreignFolder := e.request("POST", "/v1/folders", map[string]any{"name": "theirs"}, e.otherKey).Data(t)["id"]
	foreignTrunk := e.request("POST", "/v1/sip-trunks", map[string]any{"friendlyName": "t", "host": "sip.example.com"}, e.otherKey).Data(t)["id"]
	foreignKB := e.request("POST", "/v1/knowledge-bases", map[string]any{"name": "kb"}, e.otherKey).Data(t)["id"]
	foreignConn := e.request("POST", "/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": "AC1", "authToken": "tok", "fromNumber": "+14155550100"}, e.otherKey).Data(t)["id"]
	const unknown = "0190d4c3-0000-7000-8000-000000000000"
	e.invalid("validation_failed", "POST", "/v1/agents", map[string]any{
		"name": "A", "promptTemplate": "P", "folderId": foreignFolder, "sipTrunkId": foreignTrunk,
		"knowledgeBaseIds": []any{foreignKB, unknown}, "messagingConnectionId": foreignConn,
	}, "folderId", "sipTrunkId", "knowledgeBaseIds[0]", "knowledgeBaseIds[1]", "messagingConnectionId")
	e.invalid("validation_failed", "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P", "folderId": "nope", "knowledgeBaseIds": []any{"x"}}, "folderId", "knowledgeBaseIds[0]")

	folder := e.create("/v1/folders", map[string]any{"name": "Sales", "color": "#ff0000"})
	trunk := e.create("/v1/sip-trunks", map[string]any{"friendlyName": "Carrier", "host": "sip.example.com"})
	kb := e.create("/v1/knowledge-bases", map[string]any{"name": "FAQ"})
	conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": "AC1", "authToken": "tok", "fromNumber": "+14155550100"})
	a := e.createAgent(map[string]any{"folderId": folder["id"], "sipTrunkId": trunk["id"], "knowledgeBaseIds": []any{kb["id"], kb["id"]}, "messagingConnectionId": conn["id"]})
	if f := a["folder"].(map[string]any); f["id"] != folder["id"] || f["name"] != "Sales" || f["color"] != "#ff0000" {
		t.Errorf("folder = %v", a["folder"])
	}
	if tr := a["sipTrunk"].(map[string]any); tr["friendlyName"] != "Carrier" || tr["id"] != trunk["id"] {
		t.Errorf("sipTrunk = %v", a["sipTrunk"])
	}
	if kbs := a["knowledgeBases"].([]any); len(kbs) != 1 || kbs[0].(map[string]any)["name"] != "FAQ" {
		t.Errorf("knowledgeBases = %v (duplicates must collapse)", a["knowledgeBases"])
	}
	if a["messagingConnectionId"] != conn["id"] {
		t.Errorf("messagingConnectionId = %v", a["messagingConnectionId"])
	}
}
