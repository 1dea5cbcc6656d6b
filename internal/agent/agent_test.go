package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

func TestCopyName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Support", "Support (Copy)"},
		{strings.Repeat("a", 121), strings.Repeat("a", 121) + " (Copy)"},
		{strings.Repeat("a", 122), strings.Repeat("a", 121) + " (Copy)"},
		{strings.Repeat("ü", 128), strings.Repeat("ü", 121) + " (Copy)"},
	} {
		got := CopyName(c.in)
		if got != c.want || utf8.RuneCountInString(got) > MaxNameLen {
			t.Errorf("CopyName(%d chars) = %q (%d chars)", utf8.RuneCountInString(c.in), got, utf8.RuneCountInString(got))
		}
	}
}

// Every configuration key of Input lands on its AgentConfig twin, and null
// clears it.
func TestApplyCoversEveryConfigField(t *testing.T) {
	configIndex() // panics if an Input key has no twin
	body := `{"firstMessage":"hi","llmTemperature":1.5,"transferRoutes":[{"to_number":"+15550001","condition":"c"}],
		"warmTransferConfig":{"holdMessage":"h"},"defaultVariables":{"a":"b"},"endCallEnabled":false,"knowledgeBaseChunks":3}`
	var in Input
	if err := opt.Decode([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	a := model.Agent{Config: model.AgentConfig{InterruptionThresholdMs: 500}}
	apply(&a, &in)
	c := a.Config
	if *c.FirstMessage != "hi" || *c.LLMTemperature != 1.5 || c.TransferRoutes[0].ToNumber != "+15550001" ||
		*c.WarmTransferConfig.HoldMessage != "h" || c.DefaultVariables["a"] != "b" || *c.EndCallEnabled || *c.KnowledgeBaseChunks != 3 {
		t.Errorf("applied config = %+v", c)
	}
	var clear Input
	if err := opt.Decode([]byte(`{"firstMessage":null,"transferRoutes":null,"endCallEnabled":null,"defaultVariables":null}`), &clear); err != nil {
		t.Fatal(err)
	}
	apply(&a, &clear)
	if a.Config.FirstMessage != nil || a.Config.TransferRoutes != nil || a.Config.EndCallEnabled != nil || a.Config.DefaultVariables != nil {
		t.Errorf("null did not clear: %+v", a.Config)
	}
	if *a.Config.LLMTemperature != 1.5 {
		t.Error("an absent key changed")
	}
}

func TestCloneIsDeep(t *testing.T) {
	c := model.AgentConfig{DefaultVariables: map[string]any{"k": "v"}, TransferRoutes: []model.TransferRoute{{ToNumber: "+1555"}}}
	d := c.Clone()
	d.DefaultVariables["k"] = "changed"
	d.TransferRoutes[0].ToNumber = "+1666"
	if c.DefaultVariables["k"] != "v" || c.TransferRoutes[0].ToNumber != "+1555" {
		t.Error("clone shares maps or slices with the original")
	}
}

// Untrusted bytes through the whole request path of an agent: decoding,
// every rule, and applying the result must never panic.
func FuzzAgentInput(f *testing.F) {
	f.Add([]byte(`{"name":"A","promptTemplate":"P","llmTemperature":1,"transferRoutes":[{"to_number":"+1555","condition":"x"}]}`))
	f.Add([]byte(`{"messagingConfig":{"fromNumber":"+1","conversationIdleResetDays":-1},"knowledgeBaseIds":["x",null],"mode":null}`))
	f.Add([]byte(`{"timezone":"Europe/Paris","language":"en-US","warmTransferConfig":null,"interruptionThresholdMs":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, creating := range []bool{true, false} {
			var in Input
			if opt.Decode(data, &in) != nil {
				return
			}
			var l invalid.List
			check(&in, creating, &l)
			a := model.Agent{Config: model.AgentConfig{InterruptionThresholdMs: 500}}
			apply(&a, &in)
			_ = a.Config.Clone()
		}
	})
}

func FuzzToolInput(f *testing.F) {
	f.Add([]byte(`{"name":"t","webhookUrl":"https://e.com","headers":[{"key":"A","value":"b"}],"schema":{"type":"object"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var in ToolInput
		if opt.Decode(data, &in) != nil {
			return
		}
		var l invalid.List
		checkTool(&in, true, &l)
		var tool model.CustomTool
		applyTool(&tool, &in)
	})
}
